// One CommandSpec per subcommand, each defined in its own <name>_command.cpp; registry.cpp lists
// them. A new subcommand is one file plus one line here and one in registry.cpp.
#pragma once

#include "command_spec.hpp"

namespace acco::cli {

[[nodiscard]] CommandSpec probe_command();
[[nodiscard]] CommandSpec doctor_command();
[[nodiscard]] CommandSpec bench_command();
[[nodiscard]] CommandSpec tune_command();
[[nodiscard]] CommandSpec schedule_command();
[[nodiscard]] CommandSpec config_command();
[[nodiscard]] CommandSpec rules_command();
[[nodiscard]] CommandSpec serve_command();
[[nodiscard]] CommandSpec record_command();
[[nodiscard]] CommandSpec analyze_command();
[[nodiscard]] CommandSpec top_command();
[[nodiscard]] CommandSpec power_command();
[[nodiscard]] CommandSpec exec_command();
[[nodiscard]] CommandSpec completion_command();
[[nodiscard]] CommandSpec man_command();
[[nodiscard]] CommandSpec submit_command();
[[nodiscard]] CommandSpec jobs_command();
[[nodiscard]] CommandSpec cancel_command();
[[nodiscard]] CommandSpec logs_command();
[[nodiscard]] CommandSpec sim_command();

}  // namespace acco::cli
