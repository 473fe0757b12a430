// The command line as plain data (report::CommandInfo), read from the CLI11 parser that every
// command declares its flags on (declare_commands): the shell completions and the man pages are
// rendered from it (report/command_line.hpp), so they name exactly the commands, flags and values
// that parse_args accepts.
#pragma once

#include "acco/report/command_line.hpp"

namespace acco::cli {

using report::CommandInfo;
using report::CommandPath;
using report::FlagInfo;
using report::ValueKind;

// The whole command line: `acco` with its flags and every registered command below it.
[[nodiscard]] CommandInfo command_tree();

}  // namespace acco::cli
