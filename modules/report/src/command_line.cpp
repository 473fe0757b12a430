#include "acco/report/command_line.hpp"

#include <utility>

namespace acco::report {

std::vector<CommandPath> command_paths(const CommandInfo& root) {
  std::vector<CommandPath> paths;
  std::vector<CommandPath> pending = {{root.name, &root}};
  while (!pending.empty()) {
    CommandPath path = std::move(pending.back());
    pending.pop_back();
    // Pushed last first, so the first subcommand comes out next.
    for (auto sub = path.command->commands.rbegin(); sub != path.command->commands.rend(); ++sub) {
      pending.push_back({path.words + " " + sub->name, &*sub});
    }
    paths.push_back(std::move(path));
  }
  return paths;
}

}  // namespace acco::report
