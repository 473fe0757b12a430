// `acco man`: the acco(1) manual page in roff, generated from the command tree (a section per
// command with every flag and its help line) and the settings registry (the environment), so the
// page names exactly what acco accepts. `man -l <(acco man)` reads it without installing.
#include <algorithm>
#include <cctype>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "command_spec.hpp"
#include "command_tree.hpp"
#include "commands.hpp"

namespace acco::cli {
namespace {

// Text for roff: a backslash printed as one, a dash that starts a word (a flag) as a minus sign
// so it pastes as "-", a place to break a long list or path after each comma and slash, and a
// line that would start with a control character kept as text.
std::string roff(std::string_view text) {
  std::string out;
  char previous = ' ';
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-' && (previous == ' ' || previous == '-' || previous == '(' ||
                            previous == '`' || previous == '\'')) {
      out += "\\-";
    } else {
      out += c;
    }
    if ((c == ',' || c == '/') && i + 1 < text.size() && text[i + 1] != ' ') {
      out += "\\:";
    }
    previous = c;
  }
  if (out.starts_with('.') || out.starts_with('\'')) {
    out.insert(0, "\\&");
  }
  return out;
}

// `-b, --min-bytes SIZE` in bold and italics.
std::string flag_heading(const FlagInfo& flag) {
  std::vector<std::string> names;
  for (const std::string& name : flag.names) {
    names.push_back(fmt::format("\\fB{}\\fR", roff(name)));
  }
  std::string heading = fmt::format("{}", fmt::join(names, ", "));
  if (!flag.value_name.empty()) {
    heading += fmt::format(" \\fI{}\\fR", roff(flag.value_name));
  }
  return heading;
}

void command_section(const CommandInfo& command, const std::string& words, std::string& out,
                     std::vector<const FlagInfo*>& with_env) {
  std::string usage = words;
  for (const FlagInfo& positional : command.positionals) {
    usage += positional.required ? " " + positional.value_name : " [" + positional.value_name + "]";
  }
  usage += command.commands.empty() ? " [OPTIONS]" : " COMMAND";
  out += fmt::format(".SS \"{}\"\n{}\n", roff(usage), roff(command.summary));
  for (const FlagInfo& positional : command.positionals) {
    out += fmt::format(".TP\n\\fI{}\\fR\n{}\n", roff(positional.value_name), roff(positional.help));
  }
  for (const FlagInfo& flag : command.flags) {
    out += fmt::format(".TP\n{}\n{}\n", flag_heading(flag), roff(flag.help));
    if (!flag.env.empty()) {
      with_env.push_back(&flag);
    }
  }
}

struct ExitStatus {
  int code;
  const char* meaning;
};

// docs/cli.md, "Exit codes"; exit_code_for() maps errors to them.
constexpr ExitStatus kExitStatuses[] = {
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

// ENVIRONMENT: ACCO_CONFIG, every setting with its default, and each flag that reads a variable.
std::string environment_section(const core::Settings& settings,
                                const std::vector<const FlagInfo*>& with_env) {
  std::string environment =
      ".TP\n.B ACCO_CONFIG\na JSON file of settings, as \\fB\\-\\-config\\fR names one\n";
  for (const core::Setting& s : settings.all()) {
    environment +=
        fmt::format(".TP\n.B {}\n{} (default {})\n", roff(core::env_name(s.key)),
                    roff(s.description), s.default_value.empty() ? "empty" : roff(s.default_value));
  }
  std::vector<std::string> seen;
  for (const FlagInfo* flag : with_env) {
    if (std::find(seen.begin(), seen.end(), flag->env) == seen.end()) {
      seen.push_back(flag->env);
      environment += fmt::format(".TP\n.B {}\nwhat {} takes when it is not given\n",
                                 roff(flag->env), flag_heading(*flag));
    }
  }
  return environment;
}

std::string exit_status_section() {
  std::string exit_status;
  for (const ExitStatus& e : kExitStatuses) {
    exit_status += fmt::format(".TP\n.B {}\n{}\n", e.code, roff(e.meaning));
  }
  return exit_status;
}

constexpr const char* kSettingsOrder =
    "Every command takes \\fB\\-h\\fR, \\fB\\-\\-help\\fR; settings resolve as default < "
    "\\fB\\-\\-config\\fR\nfile < \\fBACCO_*\\fR environment < flag, and \\fBacco config\\fR "
    "shows the result.\n";

std::string man_page(const CommandInfo& root, const core::Settings& settings) {
  std::string commands;
  std::vector<const FlagInfo*> with_env;
  for (const CommandPath& path : command_paths(root)) {
    if (path.command != &root) {
      command_section(*path.command, path.words, commands, with_env);
    }
  }
  std::string options;
  for (const FlagInfo& flag : root.flags) {
    options += fmt::format(".TP\n{}\n{}\n", flag_heading(flag), roff(flag.help));
  }
  std::string see_also;
  for (const CommandInfo& command : root.commands) {
    see_also += fmt::format(".BR acco\\-{} (1),\n", roff(command.name));
  }
  return fmt::format(
      R"(.\" acco(1), generated by `acco man` from acco's command registry; do not edit.
.TH ACCO 1 "" "acco {version}" "User Commands"
.SH NAME
acco \- {description}
.SH SYNOPSIS
.B acco
[\fB\-\-help\fR] [\fB\-\-version\fR] \fICOMMAND\fR [\fIOPTIONS\fR]
.SH DESCRIPTION
acco (ACcelerator Connection Optimizer) finds, measures and removes the bottlenecks on the data
paths between hosts, storage, networks and accelerators.
{settings_order}Each command also has its own page, acco\-\fICOMMAND\fR(1).
.SH OPTIONS
{options}.SH COMMANDS
{commands}.SH ENVIRONMENT
{environment}.SH EXIT STATUS
{exit_status}.SH SEE ALSO
{see_also}.BR nvidia\-smi (1),
.BR lstopo (1),
.BR fio (1);
docs/cli.md and the other pages under docs/ in acco's sources.
)",
      fmt::arg("version", ACCO_VERSION), fmt::arg("description", kAccoDescription),
      fmt::arg("settings_order", kSettingsOrder), fmt::arg("options", options),
      fmt::arg("commands", commands),
      fmt::arg("environment", environment_section(settings, with_env)),
      fmt::arg("exit_status", exit_status_section()), fmt::arg("see_also", see_also));
}

// `text` with its first letter in capitals, to open a paragraph.
std::string sentence(std::string text) {
  if (!text.empty()) {
    text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
  }
  return text;
}

// acco-COMMAND(1), as git has git-COMMIT(1): the command and the commands below it, with the
// environment and exit statuses of the whole page.
std::string command_page(const CommandInfo& command, const core::Settings& settings) {
  std::string sections;
  std::vector<const FlagInfo*> with_env;
  for (const CommandPath& path : command_paths(command)) {
    command_section(*path.command, "acco " + path.words, sections, with_env);
  }
  const std::string upper = [&] {
    std::string name = command.name;
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return name;
  }();
  return fmt::format(
      R"(.\" acco-{name}(1), generated by `acco man {name}` from acco's command registry; do not edit.
.TH ACCO\-{upper} 1 "" "acco {version}" "User Commands"
.SH NAME
acco\-{name} \- {summary}
.SH SYNOPSIS
.B acco {name}
{synopsis}
.SH DESCRIPTION
{summary_text}.
{settings_order}.SH OPTIONS
{sections}.SH ENVIRONMENT
{environment}.SH EXIT STATUS
{exit_status}.SH SEE ALSO
.BR acco (1);
docs/cli.md and the other pages under docs/ in acco's sources.
)",
      fmt::arg("name", roff(command.name)), fmt::arg("upper", roff(upper)),
      fmt::arg("version", ACCO_VERSION), fmt::arg("summary", roff(command.summary)),
      fmt::arg("synopsis", command.commands.empty() ? "[\\fIOPTIONS\\fR]"
                                                    : "\\fICOMMAND\\fR [\\fIOPTIONS\\fR]"),
      fmt::arg("summary_text", roff(sentence(command.summary))),
      fmt::arg("settings_order", kSettingsOrder), fmt::arg("sections", sections),
      fmt::arg("environment", environment_section(settings, with_env)),
      fmt::arg("exit_status", exit_status_section()));
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
      return Output{man_page(root, invocation.settings), "", kExitOk};
    }
    std::vector<std::string> names;
    for (const CommandInfo& command : root.commands) {
      if (command.name == flags_.command) {
        return Output{command_page(command, invocation.settings), "", kExitOk};
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
