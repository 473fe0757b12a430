// The acco command line as a library: parsing is a pure function of the arguments and the
// environment, and running a command returns what to print and the exit code, so every
// subcommand is tested without spawning a process. main() only prints.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/core/settings.hpp"
#include "acco/sched/policy.hpp"
#include "acco/sched/workload.hpp"
#include "acco/topo/checks.hpp"

namespace acco::cli {

// Exit codes (docs/cli.md); the sysexits.h values where one fits.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFindings = 1;      // a finding at or above --fail-on
inline constexpr int kExitTasksFailed = 1;   // schedule: a task of a measured run failed
inline constexpr int kExitUsage = 64;        // bad flag or argument
inline constexpr int kExitDataError = 65;    // an input file is malformed
inline constexpr int kExitNoInput = 66;      // a named file or directory does not exist
inline constexpr int kExitUnavailable = 69;  // a library, driver or device is missing
inline constexpr int kExitInternal = 70;     // a bug in acco
inline constexpr int kExitCantCreate = 73;   // an output file cannot be written

enum class Command {
  kProbe,
  kDoctor,
  kBench,
  kSchedule,
  kConfig,
  kRules,
  kVersion,
  kHelp
};
enum class Format {
  kText,
  kJson
};

// `acco bench` and the doctor's quick bench.
struct BenchOptions {
  std::string backend = "auto";    // auto, host, cuda
  int devices = 1;                 // host backend: emulated devices
  std::string link = "pcie4x16";   // host backend: emulated link (dev::parse_link)
  std::vector<std::string> cases;  // patterns; empty = all
  std::string bytes = "256MiB";
  int reps = 5;
  bool quick = false;  // 64 MiB buffers, 3 repetitions, sweep to 64 MiB, 2,000 small copies
  bool list = false;
  std::string html;      // write the HTML report here
  bool compare = false;  // compare with the last run on this machine
  std::string history;   // history file; empty = the default path
  bool no_history = false;
  bool skip = false;  // doctor --no-bench
};

// `acco schedule`: a named workload on chosen devices under one or more policies. parse_args
// validates every value; what depends on the devices found (the GPU count) is checked at run.
struct ScheduleOptions {
  sched::WorkloadSpec workload{.name = "cholesky"};
  bool cuda = false;  // --devices cuda: every GPU; otherwise emulated host devices
  int devices = 4;    // host: emulated devices
  // Per device, or one entry for every device; empty: "gpu" and speed 1 for every device.
  std::vector<std::string> kinds;
  std::vector<double> speeds;
  std::string link = "pcie3x16";   // host: emulated link (dev::parse_link)
  std::uint64_t memory_bytes = 0;  // per-device budget; 0: the device's memory
  std::vector<sched::PolicyKind> policies = {sched::PolicyKind::kDmda};
  int calibrate = 1;  // unmeasured runs before the measured one, per policy
  // dmda, ws: count only the queued tasks of higher or equal priority (StarPU's dmdasd)
  bool sorted_decision = false;
  std::string models;  // performance models loaded before each run and saved after
  std::string trace;   // Chrome trace of the first policy's measured run
};

struct Options {
  Command command = Command::kHelp;
  Format format = Format::kText;
  core::Settings settings;  // sysroot, nvml, nvml-library, with who set each
  std::string snapshot;     // probe --snapshot FILE
  std::string from;         // probe/doctor --from FILE
  std::optional<topo::Severity> fail_on;
  std::string help_text;  // for kHelp: what --help printed
  BenchOptions bench;
  ScheduleOptions schedule;
  // Live progress for long runs (bench, schedule); main() writes it to stderr at once.
  std::function<void(std::string_view)> progress;
};

using Getenv = std::function<const char*(const char*)>;

// Parses argv[1..] (without the program name). Errors are kInvalidArgument with a one-line
// message naming the flag and what was expected.
[[nodiscard]] Result<Options> parse_args(const std::vector<std::string>& args,
                                         const Getenv& getenv);

struct Outcome {
  std::string out;  // standard output
  std::string err;  // standard error (one line per problem)
  int exit_code = kExitOk;
};

// Runs a parsed command. Never throws.
[[nodiscard]] Outcome run(const Options& options);

// parse_args then run; usage errors become exit code 64 with "acco: <message>" on stderr.
// `progress`, when set, receives progress lines of long runs as they happen.
[[nodiscard]] Outcome main_outcome(const std::vector<std::string>& args, const Getenv& getenv,
                                   const std::function<void(std::string_view)>& progress = {});

// Maps an error from running a command to its exit code.
[[nodiscard]] int exit_code_for(const Error& error);

}  // namespace acco::cli
