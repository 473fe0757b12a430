// The acco command line as a library: parsing is a pure function of the arguments and the
// environment, and running a command returns what to print and the exit code, so every
// subcommand is tested without spawning a process. main() only prints.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/core/settings.hpp"
#include "acco/topo/checks.hpp"

namespace acco::cli {

// Exit codes (docs/cli.md); the sysexits.h values where one fits. exit_code_for() is the one
// table from an error to its code.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFindings = 1;      // a finding at or above --fail-on
inline constexpr int kExitTasksFailed = 1;   // schedule: a task of a measured run failed
inline constexpr int kExitWrongResults = 1;  // bench --collective: a collective left wrong values
inline constexpr int kExitCasesFailed = 1;   // bench: a case failed (its result says why)
inline constexpr int kExitUsage = 64;        // bad flag or argument (Errc::kUsage)
inline constexpr int kExitDataError = 65;    // an input file is malformed (kInvalidArgument)
inline constexpr int kExitNoInput = 66;      // a named file or directory does not exist
inline constexpr int kExitUnavailable = 69;  // a library, driver or device is missing
inline constexpr int kExitInternal = 70;     // a bug in acco
inline constexpr int kExitCantCreate = 73;   // an output file cannot be written (kCannotWrite)

enum class Format {
  kText,
  kJson
};

using Progress = std::function<void(std::string_view)>;

// What every command gets besides its own typed options: the shared settings after precedence
// (default < --config file < ACCO_* environment < flag), the output format and a progress sink.
struct Invocation {
  Format format = Format::kText;
  core::Settings settings;  // sysroot, nvml, nvml-library, with who set each
  // Live progress for long runs (bench, schedule); main() writes it to stderr at once.
  Progress progress;
};

// What a command prints and how the process ends.
struct Output {
  std::string out;  // standard output
  std::string err;  // standard error (one line per problem)
  int exit_code = kExitOk;
};

// One subcommand with its options checked and typed. Each lives in its own file
// (src/<name>_command.cpp) and is listed once in src/registry.cpp.
class Command {
 public:
  virtual ~Command() = default;
  // Never throws. An error (the ACCO_* result macros propagate them) becomes "acco: <message>"
  // on stderr with exit_code_for's code; a command that printed notes to stderr before failing
  // returns error_output(error, notes) instead.
  [[nodiscard]] virtual Result<Output> run(const Invocation& invocation) const = 0;
};

struct Options {
  std::string command;    // the subcommand's name; "help" or "version" when none ran
  std::string help_text;  // for "help": what --help printed
  Invocation invocation;
  std::shared_ptr<const Command> runner;  // null for "help" and "version"

  // The parsed command as its concrete type (tests look at typed options this way); null when
  // another command was parsed.
  template <typename T>
  [[nodiscard]] const T* as() const {
    return dynamic_cast<const T*>(runner.get());
  }
};

using Getenv = std::function<const char*(const char*)>;

// Parses argv[1..] (without the program name). Errors are kUsage with a one-line message naming
// the flag and what was expected; a --config file that cannot be read keeps its own code.
[[nodiscard]] Result<Options> parse_args(const std::vector<std::string>& args,
                                         const Getenv& getenv);

// Runs a parsed command. Never throws.
[[nodiscard]] Output run(const Options& options);

// parse_args then run; errors become "acco: <message>" on stderr and exit_code_for's code.
// `progress`, when set, receives progress lines of long runs as they happen.
[[nodiscard]] Output run_command_line(const std::vector<std::string>& args, const Getenv& getenv,
                                      const Progress& progress = {});

// For a program that prints run_command_line's Output: call defer_mpi_finalize() before it and
// finish() once the output is printed, so a rank of an MPI job that fails alone prints its error
// at once instead of when MPI_Finalize, which waits for every rank, lets it go.
void defer_mpi_finalize();
void finish();

// The one table from an error to the process's exit code.
[[nodiscard]] int exit_code_for(const Error& error);

// "acco: <message>" on stderr with exit_code_for's code.
[[nodiscard]] Output error_output(const Error& error, std::string err_before = {});

}  // namespace acco::cli
