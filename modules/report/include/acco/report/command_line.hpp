// A command line as plain data (commands, their flags and positionals, the values a flag takes)
// and the renderers that turn it into acco's shell completion scripts and manual pages. The CLI
// reads the tree from its parser (cli's command_tree) and only picks the renderer, so the scripts
// and pages name exactly what the parser accepts. Pure and thread-compatible.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace acco::report {

// What completes a flag's value.
enum class ValueKind {
  kNone,       // a flag without a value
  kText,       // a value nothing completes (a size, a duration, a list of patterns)
  kChoice,     // one of `values`
  kFile,       // a file name (FILE, PATH, LIB)
  kDirectory,  // a directory name (DIR)
};

struct FlagInfo {
  std::vector<std::string> names;  // "-b", "--min-bytes": short names first; a positional's name
  std::string value_name;          // "SIZE"; empty for a flag without a value
  std::string help;
  std::vector<std::string> values;  // the values it offers
  std::string env;                  // the environment variable read for it, if any
  std::vector<std::string> needs;   // flags it belongs to ("--collective"), sorted
  ValueKind kind = ValueKind::kNone;
  bool required = false;  // a positional that must be given (an optional one shows as [NAME])
};

struct CommandInfo {
  std::string name;  // "acco", "power", "run"
  std::string summary;
  std::vector<FlagInfo> flags;        // in --help order, -h/--help first
  std::vector<FlagInfo> positionals;  // in order
  std::vector<CommandInfo> commands;  // in --help order
};

// A command and the words that name it ("acco power run").
struct CommandPath {
  std::string words;
  const CommandInfo* command;  // into the tree given to command_paths
};
// Every command of the tree, `root` first, depth first in --help order.
[[nodiscard]] std::vector<CommandPath> command_paths(const CommandInfo& root);

// acco's bash and zsh completion scripts for the tree `root`: every command, its flags, the values
// a flag offers and which flags take a file or a directory. `version` is named in the header.
[[nodiscard]] std::string bash_completion(const CommandInfo& root, std::string_view version);
[[nodiscard]] std::string zsh_completion(const CommandInfo& root, std::string_view version);

// What acco's manual pages say beside the command tree.
struct ManPageText {
  struct Variable {
    std::string name;  // "ACCO_SYSROOT"
    std::string description;
    std::string default_value;  // empty: "(default empty)"
  };
  struct ExitStatus {
    int code = 0;
    std::string meaning;
  };
  std::string version;
  std::string description;            // acco(1)'s NAME line
  std::vector<Variable> environment;  // the settings' variables, after ACCO_CONFIG
  std::vector<ExitStatus> exit_statuses;
};

// acco(1) in roff for the tree `root`: every command's flags, the environment (with each flag
// that reads a variable) and the exit statuses; and acco-COMMAND(1) for one of its commands, as
// git has git-commit(1).
[[nodiscard]] std::string man_page(const CommandInfo& root, const ManPageText& text);
[[nodiscard]] std::string command_page(const CommandInfo& command, const ManPageText& text);

}  // namespace acco::report
