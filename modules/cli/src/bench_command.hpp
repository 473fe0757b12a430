// `acco bench` and the doctor's quick bench.
#pragma once

#include <string>

#include "acco/bench/result.hpp"
#include "acco/cli/app.hpp"
#include "acco/core/result.hpp"
#include "acco/topo/machine.hpp"

namespace acco::cli {

// A short measurement (well under a minute) of this machine's device links for `acco doctor`:
// pinned and pageable host<->device copies on every GPU, or host memory bandwidth alone when no
// accelerator backend is usable. `note` says what was measured.
[[nodiscard]] Result<bench::BenchRun> quick_bench(const topo::Machine& machine,
                                                  const Progress& progress, std::string& note);

}  // namespace acco::cli
