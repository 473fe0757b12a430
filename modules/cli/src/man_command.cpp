// `acco man`: the acco(1) manual page in roff, rendered (report::man_page) from the command tree
// with the settings registry (the environment) and the exit codes, so the page names exactly what
// acco accepts. `man -l <(acco man)` reads it without installing.
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "acco/report/command_line.hpp"

#include "command_spec.hpp"
#include "command_tree.hpp"
#include "commands.hpp"

namespace acco::cli {
namespace {

// docs/cli.md, "Exit codes"; exit_code_for() maps errors to them.
report::ManPageText page_text(const core::Settings& settings) {
  report::ManPageText text;
  text.version = ACCO_VERSION;
  text.description = kAccoDescription;
  for (const core::Setting& s : settings.all()) {
    text.environment.push_back({core::env_name(s.key), s.description, s.default_value});
  }
  text.exit_statuses = {
      {kExitOk, "success (findings alone do not fail a run unless --fail-on is given)"},
      {kExitFindings,
       "a finding at or above --fail-on; a failed task (schedule), a wrong collective result or a "
       "failed case (bench)"},
      {kExitUsage, "usage error: an unknown flag, a bad or empty value, conflicting flags"},
      {kExitDataError, "an input file is malformed"},
      {kExitNoInput, "a named input does not exist"},
      {kExitUnavailable, "a required library, driver or device is unavailable"},
      {kExitInternal, "internal error (a bug in acco)"},
      {kExitCantCreate, "an output file cannot be written"},
  };
  return text;
}

struct ManFlags {
  std::string command;
  bool list = false;
};

class ManCommand final : public Command {
 public:
  explicit ManCommand(ManFlags flags) : flags_(std::move(flags)) {}

  Result<Output> run(const Invocation& invocation) const override {
    const CommandInfo root = command_tree();
    if (flags_.list) {
      std::string names;
      for (const CommandInfo& command : root.commands) {
        names += command.name + "\n";
      }
      return Output{names, "", kExitOk};
    }
    if (flags_.command.empty()) {
      return Output{report::man_page(root, page_text(invocation.settings)), "", kExitOk};
    }
    std::vector<std::string> names;
    for (const CommandInfo& command : root.commands) {
      if (command.name == flags_.command) {
        return Output{report::command_page(command, page_text(invocation.settings)), "", kExitOk};
      }
      names.push_back(command.name);
    }
    return bad_value("man", flags_.command,
                     fmt::format("an acco command ({})", fmt::join(names, ", ")));
  }

 private:
  ManFlags flags_;
};

}  // namespace

CommandSpec man_command() {
  return command_with_flags<ManFlags>(
      "man", "print the acco(1) manual page, or acco-COMMAND(1) (roff; man -l reads it)",
      [](CLI::App& sub, SharedFlags&, ManFlags& flags) {
        sub.add_option("command", flags.command,
                       "the command whose page to print (acco-COMMAND(1)); acco(1) without it")
            ->type_name("COMMAND");
        sub.add_flag("--list", flags.list,
                     "print the commands that have a page of their own, one per line");
      },
      [](const ManFlags& flags, const core::Settings&) -> Result<std::unique_ptr<Command>> {
        return std::make_unique<ManCommand>(flags);
      });
}

}  // namespace acco::cli
