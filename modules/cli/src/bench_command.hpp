// `acco bench` and the doctor's quick bench.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "acco/bench/result.hpp"
#include "acco/bench/runner.hpp"
#include "acco/cli/app.hpp"
#include "acco/core/result.hpp"
#include "acco/core/settings.hpp"
#include "acco/topo/machine.hpp"

namespace acco::cli {

// The emulated link of the host backend when --link is not given (bench and tune).
inline constexpr std::string_view kDefaultLink = "pcie4x16";

// --backend auto|host|cuda; kUsage otherwise.
[[nodiscard]] Result<bench::BackendChoice> parse_backend(const std::string& name);
// What --backend takes: auto, host, cuda.
[[nodiscard]] const std::vector<std::string>& backend_names();

// The topology, for link peaks and the fingerprint. A probe failure is not fatal: `warning`
// gets a line and the result is empty. With `data_path` (absolute), also the mount and NVMe
// namespaces holding it (machine.data_dir), matched against the sysroot's mount table.
[[nodiscard]] std::optional<topo::Machine> probe_machine(const core::Settings& settings,
                                                         std::string& warning,
                                                         const std::string& data_path = "");

// An output file a command writes at its end (--html, tune's --output), checked before the work
// starts: core::check_output_file with `flag` in front of its error (kCannotWrite, 73).
[[nodiscard]] Status check_output_path(std::string_view flag, const std::string& path);

// A short measurement (well under a minute) of this machine's device links for `acco doctor`:
// pinned and pageable host<->device copies on every GPU, or host memory bandwidth alone when no
// accelerator backend is usable. `note` says what was measured.
[[nodiscard]] Result<bench::BenchRun> quick_bench(const topo::Machine& machine,
                                                  const Progress& progress, std::string& note);

}  // namespace acco::cli
