// What `acco bench` shares with the commands beside it (tune, schedule, bench --collective): the
// backend and link flags' values, the topology for peaks with its warning line, and the check of
// an output file before the work that writes it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "acco/bench/run_setup.hpp"
#include "acco/bench/runner.hpp"
#include "acco/core/result.hpp"
#include "acco/core/settings.hpp"
#include "acco/topo/machine.hpp"

namespace acco::cli {

// What --backend takes (bench and tune).
using bench::backend_names;

// bench::probe_machine's machine, or none with a line appended to `warning`: a failed probe
// leaves link peaks unknown, it does not stop the command.
[[nodiscard]] std::optional<topo::Machine> probe_machine(const core::Settings& settings,
                                                         std::string& warning);

// An output file a command writes at its end (--html, tune's --output), checked before the work
// starts: core::check_output_file with `flag` in front of its error (kCannotWrite, 73).
[[nodiscard]] Status check_output_path(std::string_view flag, const std::string& path);

}  // namespace acco::cli
