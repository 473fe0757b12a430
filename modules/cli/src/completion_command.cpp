// `acco completion bash|zsh`: the shell completion script, rendered (report::bash_completion,
// zsh_completion) from the command tree, so a flag added to a command completes without anyone
// editing a script.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "acco/report/command_line.hpp"

#include "command_spec.hpp"
#include "command_tree.hpp"
#include "commands.hpp"

namespace acco::cli {
namespace {

const std::vector<std::string>& shells() {
  static const std::vector<std::string> names = {"bash", "zsh"};
  return names;
}

class CompletionCommand final : public Command {
 public:
  explicit CompletionCommand(std::string shell) : shell_(std::move(shell)) {}
  Result<Output> run(const Invocation& /*invocation*/) const override {
    const CommandInfo root = command_tree();
    return Output{shell_ == "zsh" ? report::zsh_completion(root, ACCO_VERSION)
                                  : report::bash_completion(root, ACCO_VERSION),
                  "", kExitOk};
  }

 private:
  std::string shell_;
};

struct CompletionFlags {
  std::string shell;
};

}  // namespace

CommandSpec completion_command() {
  return command_with_flags<CompletionFlags>(
      "completion", "print the shell completion script for bash or zsh",
      [](CLI::App& sub, SharedFlags&, CompletionFlags& flags) {
        offer_values(sub.add_option("shell", flags.shell, "the shell: bash or zsh")
                         ->type_name("SHELL")
                         ->required(),
                     shells());
      },
      [](const CompletionFlags& flags, const core::Settings&) -> Result<std::unique_ptr<Command>> {
        if (std::find(shells().begin(), shells().end(), flags.shell) == shells().end()) {
          return bad_value("completion", flags.shell,
                           fmt::format("one of {}", fmt::join(shells(), ", ")));
        }
        return std::make_unique<CompletionCommand>(flags.shell);
      });
}

}  // namespace acco::cli
