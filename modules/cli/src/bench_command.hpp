// `acco bench` and the doctor's quick bench.
#pragma once

#include <optional>

#include "acco/bench/result.hpp"
#include "acco/cli/app.hpp"
#include "acco/core/result.hpp"
#include "acco/topo/machine.hpp"

namespace acco::cli {

[[nodiscard]] Outcome run_bench(const Options& options);

// A short measurement (well under a minute) of this machine's device links for `acco doctor`:
// pinned and pageable host<->device copies on every GPU, or host memory bandwidth alone when no
// accelerator backend is usable. nullopt when skipped; `note` says why or what was measured.
[[nodiscard]] Result<bench::BenchRun> quick_bench(const Options& options,
                                                  const topo::Machine& machine, std::string& note);

}  // namespace acco::cli
