// `acco bench`: measure host<->device, device<->device and host bandwidth against the link's
// peak, keep a history per machine and compare with the last run.
#include "bench_command.hpp"

#include <csignal>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "acco/bench/case.hpp"
#include "acco/bench/compare.hpp"
#include "acco/bench/report.hpp"
#include "acco/bench/run_setup.hpp"
#include "acco/bench/runner.hpp"
#include "acco/bench/session.hpp"
#include "acco/core/file.hpp"
#include "acco/core/process.hpp"
#include "acco/report/document.hpp"

#include "bench_collective.hpp"
#include "command_spec.hpp"
#include "commands.hpp"
#include "profile_flags.hpp"

namespace acco::cli {
namespace {

// `machine`, or none with a line appended to `warning` (after a --create note, say): a failed
// probe leaves link peaks unknown, it does not stop the command.
std::optional<topo::Machine> machine_or_warning(Result<topo::Machine> machine,
                                                std::string& warning) {
  if (!machine) {
    warning += "acco: topology unavailable, link peaks unknown: " + machine.error().message + "\n";
    return std::nullopt;
  }
  return std::move(*machine);
}

// 128 + SIGINT, what a shell reports for a program stopped by Ctrl-C.
constexpr int kExitInterrupted = 130;

struct BenchFlags {
  bench::RunRequest run;
  bool list = false;
  std::string html;
  bool compare = false;
  bool no_history = false;
  tune::ProfileChoice profile;
  CollectiveFlags collective;  // --collective: the collective benchmark instead of a suite
};

// The flags checked: the run they plan (none for --list) and the history setting.
struct BenchOptions {
  BenchFlags flags;
  bench::RunPlan plan;
  std::string history;  // history file; empty = the default path
};

void add_bench_flags(CLI::App& sub, SharedFlags& shared, BenchFlags& f) {
  offer_values(sub.add_option("--backend", f.run.backend,
                              "auto (CUDA when a GPU is usable, else host), host, cuda")
                   ->type_name("NAME"),
               backend_names());
  sub.add_option("--devices", f.run.devices, "host backend: number of emulated devices")
      ->type_name("N");
  sub.add_option("--link", f.run.link,
                 "host backend: emulated link, e.g. pcie4x16, pcie5x16, 25GB/s,2us, unlimited")
      ->type_name("SPEC");
  offer_values(
      sub.add_option("--suite", f.run.suite, "transfer (default) or storage (needs --file)")
          ->type_name("NAME"),
      bench::suite_names());
  sub.add_option("--file", f.run.file,
                 "--suite storage: the file to read (on the drive to measure)")
      ->type_name("PATH");
  sub.add_option("--create", f.run.create,
                 "--suite storage: write SIZE of data to --file first when it is missing or "
                 "smaller")
      ->type_name("SIZE");
  sub.add_option("--cases", f.run.cases, "only cases matching these patterns (h2d_*,sweep_*)")
      ->delimiter(',')
      ->type_name("PATTERNS");
  sub.add_option("--bytes", f.run.bytes, "buffer size of bandwidth cases (default 256MiB)")
      ->type_name("SIZE");
  sub.add_option("--reps", f.run.reps, "timed samples per case (default 5)")->type_name("N");
  sub.add_flag("--quick", f.run.quick, "small buffers and few repetitions (a quick look)");
  sub.add_flag("--list", f.list, "list the cases and exit");
  add_json_flag(sub, shared, "print JSON (schema acco.bench/1)");
  sub.add_option("--html", f.html, "write a self-contained HTML report with plots")
      ->type_name("FILE");
  sub.add_flag("--compare", f.compare,
               "compare with the last run on this machine and flag regressions");
  add_setting_flag(sub, shared, "history",
                   "history database (default $XDG_STATE_HOME/acco/history.sqlite; env "
                   "ACCO_HISTORY)",
                   "FILE");
  sub.add_flag("--no-history", f.no_history, "do not read or write the history");
  add_profile_flags(sub, f.profile);
  CLI::Option* collective = add_collective_flags(sub, f.collective);
  for (const char* suite_flag : {"--devices", "--suite", "--file", "--create", "--cases", "--bytes",
                                 "--reps", "--list", "--html", "--profile", "--no-profile"}) {
    sub.get_option(suite_flag)->excludes(collective);  // the suites' own flags
  }
  add_setting_flag(sub, shared, "sysroot", "topology from DIR/sys (for link peaks)", "DIR");
  add_config_flag(sub, shared);
}

// --suite, --file and --create.
Result<BenchOptions> bench_options(const BenchFlags& f, const std::string& history) {
  BenchOptions o{f, {}, history};
  if (!f.list) {  // the list needs none of the measurement's flags
    ACCO_ASSIGN_OR_RETURN(o.plan, as_usage(bench::run_plan(f.run)));
  }
  if (f.compare && f.no_history) {
    return usage("--compare needs the history; drop --no-history");
  }
  ACCO_RETURN_IF_ERROR(check_profile_flags(f.profile));
  return o;
}

class BenchCommand final : public Command {
 public:
  explicit BenchCommand(BenchOptions options) : o_(std::move(options)) {}

  Result<Output> run(const Invocation& inv) const override {
    const BenchFlags& f = o_.flags;
    if (f.list) {
      return Output{report::render_text(bench::case_list_report()), "", kExitOk};
    }
    Output out;
    if (!f.html.empty()) {  // before minutes of cases, not after them
      ACCO_RETURN_IF_ERROR(check_output_path("--html", f.html));
    }
    // Blocked before the backend starts its threads: the first SIGINT or SIGTERM stops the run
    // between two cases with the results so far; a second one ends the process at once (a case
    // on a GPU that stopped answering may never finish).
    const core::InterruptWatch interrupt([&inv](int signal) {
      if (inv.progress) {
        inv.progress(fmt::format(
            "acco: {}: finishing the current case, then stopping (again to stop at once)",
            signal == SIGTERM ? "SIGTERM" : "SIGINT"));
      }
    });
    const auto& plan = o_.plan;
    ACCO_ASSIGN_OR_RETURN(out.err, bench::create_test_file(plan.create_file, plan.create_bytes),
                          "--create");
    bench::RunOptions options = plan.run;
    const auto machine = machine_or_warning(bench::probe_for_run(inv.settings, options), out.err);
    auto profile = profile_for(f.profile, inv.settings, machine ? &*machine : nullptr, out.err);
    if (!profile) {
      return error_output(profile.error(), out.err);
    }
    options.defaults.path_profiles = std::move(profile->engines);
    options.defaults.reader_options = profile->reader;
    options.stop = [&] { return interrupt.requested(); };
    out.err += bench::reader_note(options);
    auto session = bench::run_session(
        {options, f.no_history ? std::nullopt : std::optional(o_.history), f.compare, f.html},
        machine ? &*machine : nullptr, inv.progress);
    if (!session) {
      return error_output(as_usage(std::move(session.error())), out.err);
    }
    out.err += session->notes;
    out.exit_code = session->interrupted        ? kExitInterrupted
                    : session->failure          ? exit_code_for(*session->failure)
                    : session->failed_cases > 0 ? kExitCasesFailed
                                                : kExitOk;
    out.out = render(inv, *session, bench::session_report);
    return out;
  }

 private:
  BenchOptions o_;
};

}  // namespace

std::optional<topo::Machine> probe_machine(const core::Settings& settings, std::string& warning) {
  return machine_or_warning(bench::probe_machine(settings), warning);
}

Status check_output_path(std::string_view flag, const std::string& path) {
  ACCO_RETURN_IF_ERROR(core::check_output_file(path), flag);
  return {};
}

CommandSpec bench_command() {
  return command_with_flags<BenchFlags>(
      "bench", "measure host<->device, device<->device and host bandwidth against the link peak",
      add_bench_flags, [](const BenchFlags& flags, const core::Settings& settings) {
        const bool collective_given = !flags.collective.request.ops.empty();
        if (collective_given) {  // the suites' flags exclude it (add_bench_flags)
          CollectiveFlags collective = flags.collective;
          collective.history = settings.get("history");
          collective.no_history = flags.no_history;
          collective.request.backend = flags.run.backend;
          collective.compare = flags.compare;
          collective.request.link = flags.run.link;
          collective.request.quick = flags.run.quick;  // a short sweep, as for the suites
          return collective_command(collective);
        }
        return command_from<BenchCommand>(bench_options(flags, settings.get("history")));
      });
}

}  // namespace acco::cli
