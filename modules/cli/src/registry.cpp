#include "command_spec.hpp"
#include "commands.hpp"

namespace acco::cli {

const std::vector<CommandSpec>& commands() {
  static const std::vector<CommandSpec> all = {
      probe_command(), doctor_command(), bench_command(),  tune_command(),       schedule_command(),
      sim_command(),   serve_command(),  top_command(),    record_command(),     analyze_command(),
      power_command(), exec_command(),   submit_command(), jobs_command(),       cancel_command(),
      logs_command(),  config_command(), rules_command(),  completion_command(), man_command(),
  };
  return all;
}

}  // namespace acco::cli
