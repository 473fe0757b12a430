#include "command_tree.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "command_spec.hpp"

namespace acco::cli {
namespace {

ValueKind kind_of(const FlagInfo& flag) {
  if (flag.value_name.empty()) {
    return ValueKind::kNone;
  }
  if (!flag.values.empty()) {
    return ValueKind::kChoice;
  }
  if (flag.value_name == "DIR") {
    return ValueKind::kDirectory;
  }
  if (flag.value_name == "FILE" || flag.value_name == "PATH" || flag.value_name == "LIB") {
    return ValueKind::kFile;
  }
  return ValueKind::kText;
}

FlagInfo flag_info(CLI::Option& option) {
  FlagInfo flag;
  if (!option.nonpositional()) {
    flag.names.push_back(option.get_name(true));
  }
  for (const std::string& s : option.get_snames()) {
    flag.names.push_back("-" + s);
  }
  for (const std::string& l : option.get_lnames()) {
    flag.names.push_back("--" + l);
  }
  if (option.get_expected_max() != 0) {
    flag.value_name = option.get_type_name();
  }
  flag.help = option.get_description();
  flag.values = offered_values(option);
  flag.env = option.get_envname();
  flag.required = option.get_required();
  for (const CLI::Option* needed : option.get_needs()) {
    flag.needs.push_back(needed->get_name());
  }
  std::sort(flag.needs.begin(), flag.needs.end());
  flag.kind = kind_of(flag);
  return flag;
}

// `app` with its flags, without its subcommands.
CommandInfo command_info(CLI::App& app) {
  CommandInfo command{app.get_name(), app.get_description(), {}, {}, {}};
  for (CLI::Option* option : app.get_options()) {
    (option->nonpositional() ? command.flags : command.positionals).push_back(flag_info(*option));
  }
  return command;
}

}  // namespace

CommandInfo command_tree() {
  CLI::App app{std::string(kAccoDescription), "acco"};
  SharedFlags shared;
  // Only the declarations are walked: nothing is parsed, so the finishing steps never run.
  [[maybe_unused]] const DeclaredCommands declared = declare_commands(app, shared);
  CommandInfo root = command_info(app);
  // Each command's subcommands in order; a node's list is complete before pointers into it are
  // kept, and never grows after.
  std::vector<std::pair<CLI::App*, CommandInfo*>> pending = {{&app, &root}};
  while (!pending.empty()) {
    const auto [parent, info] = pending.back();
    pending.pop_back();
    const std::vector<CLI::App*> subs = parent->get_subcommands([](CLI::App*) { return true; });
    for (CLI::App* sub : subs) {
      info->commands.push_back(command_info(*sub));
    }
    for (std::size_t i = 0; i < subs.size(); ++i) {
      pending.emplace_back(subs[i], &info->commands[i]);
    }
  }
  return root;
}

}  // namespace acco::cli
