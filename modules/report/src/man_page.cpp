// acco's manual pages in roff, rendered from a command tree: acco(1) with a section per command
// and acco-COMMAND(1), each flag with its help line, the environment and the exit statuses.
#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "acco/report/command_line.hpp"

namespace acco::report {
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

// ENVIRONMENT: ACCO_CONFIG, every setting with its default, and each flag that reads a variable.
std::string environment_section(const ManPageText& text,
                                const std::vector<const FlagInfo*>& with_env) {
  std::string environment =
      ".TP\n.B ACCO_CONFIG\na JSON file of settings, as \\fB\\-\\-config\\fR names one\n";
  for (const ManPageText::Variable& v : text.environment) {
    environment += fmt::format(".TP\n.B {}\n{} (default {})\n", roff(v.name), roff(v.description),
                               v.default_value.empty() ? "empty" : roff(v.default_value));
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

std::string exit_status_section(const ManPageText& text) {
  std::string exit_status;
  for (const ManPageText::ExitStatus& e : text.exit_statuses) {
    exit_status += fmt::format(".TP\n.B {}\n{}\n", e.code, roff(e.meaning));
  }
  return exit_status;
}

constexpr const char* kSettingsOrder =
    "Every command takes \\fB\\-h\\fR, \\fB\\-\\-help\\fR; settings resolve as default < "
    "\\fB\\-\\-config\\fR\nfile < \\fBACCO_*\\fR environment < flag, and \\fBacco config\\fR "
    "shows the result.\n";

// `text` with its first letter in capitals, to open a paragraph.
std::string sentence(std::string text) {
  if (!text.empty()) {
    text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
  }
  return text;
}

}  // namespace

std::string man_page(const CommandInfo& root, const ManPageText& text) {
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
      fmt::arg("version", text.version), fmt::arg("description", text.description),
      fmt::arg("settings_order", kSettingsOrder), fmt::arg("options", options),
      fmt::arg("commands", commands), fmt::arg("environment", environment_section(text, with_env)),
      fmt::arg("exit_status", exit_status_section(text)), fmt::arg("see_also", see_also));
}

// acco-COMMAND(1), as git has git-COMMIT(1): the command and the commands below it, with the
// environment and exit statuses of the whole page.
std::string command_page(const CommandInfo& command, const ManPageText& text) {
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
      fmt::arg("version", text.version), fmt::arg("summary", roff(command.summary)),
      fmt::arg("synopsis", command.commands.empty() ? "[\\fIOPTIONS\\fR]"
                                                    : "\\fICOMMAND\\fR [\\fIOPTIONS\\fR]"),
      fmt::arg("summary_text", roff(sentence(command.summary))),
      fmt::arg("settings_order", kSettingsOrder), fmt::arg("sections", sections),
      fmt::arg("environment", environment_section(text, with_env)),
      fmt::arg("exit_status", exit_status_section(text)));
}

}  // namespace acco::report
