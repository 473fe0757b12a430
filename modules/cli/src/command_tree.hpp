// The command line as plain data, read from the CLI11 parser that every command declares its
// flags on (declare_commands): the shell completions and the man page are rendered from it, so
// they name exactly the commands, flags and values that parse_args accepts.
#pragma once

#include <string>
#include <vector>

namespace acco::cli {

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
  std::vector<std::string> values;  // what offer_values gave it
  std::string env;                  // the environment variable CLI11 reads for it, if any
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

// The whole command line: `acco` with its flags and every registered command below it.
[[nodiscard]] CommandInfo command_tree();

// A command and the words that name it ("acco power run").
struct CommandPath {
  std::string words;
  const CommandInfo* command;  // into the tree given to command_paths
};
// Every command of the tree, `root` first, depth first in --help order.
[[nodiscard]] std::vector<CommandPath> command_paths(const CommandInfo& root);

}  // namespace acco::cli
