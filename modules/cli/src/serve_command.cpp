// `acco serve`: the node daemon (monitor::Daemon) from its flags: sampling, /metrics, the API
// and dashboard, events, the store, the periodic checks and the governor, until SIGTERM or SIGINT
// (or --duration).
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "acco/core/process.hpp"
#include "acco/core/stop.hpp"
#include "acco/doctor/periodic_bench.hpp"
#include "acco/monitor/daemon.hpp"
#include "acco/monitor/jobs.hpp"
#include "acco/monitor/series_store.hpp"
#include "acco/monitor/server.hpp"
#include "acco/report/document.hpp"
#include "acco/topo/probe.hpp"

#include "command_spec.hpp"
#include "commands.hpp"
#include "governor_flags.hpp"
#include "machine_flags.hpp"
#include "monitor_flags.hpp"

namespace acco::cli {
namespace {

struct ServeOptions {
  monitor::DaemonOptions daemon;
  std::chrono::duration<double> duration{0};  // 0: until a signal
  std::string history_path;                   // empty: the default bench history
  std::string tune_dir;                       // empty: tune::tune_directory()
};

class ServeCommand final : public Command {
 public:
  explicit ServeCommand(ServeOptions options) : options_(std::move(options)) {}

  Result<Output> run(const Invocation& inv) const override {
    const core::SignalScope signals;  // before the daemon's threads, which inherit its mask
    monitor::DaemonOptions options = options_.daemon;
    options.metrics.hostname = core::hostname();
    options.checks.probe = probe_request(MachineOptions{}, inv.settings);
    options.checks.bench = doctor::periodic_bench(options_.history_path, options_.tune_dir);
    auto daemon = monitor::Daemon::create(std::move(options));
    if (!daemon) {
      return tl::unexpected(governor_error(daemon.error()));
    }
    ACCO_ASSIGN_OR_RETURN(const auto started, daemon->start());
    if (inv.progress) {
      inv.progress(monitor::started_line(options_.daemon, started));
    }
    core::StopFlag stop;
    const core::StopOnSignal on_signal(signals, stop);
    ACCO_ASSIGN_OR_RETURN(const auto summary, daemon->run(stop, options_.duration));
    return Output{report::render_text(monitor::daemon_report(summary)), "", kExitOk};
  }

 private:
  ServeOptions options_;
};

struct ServeFlags {
  MonitorFlags monitor;
  monitor::DaemonRequest daemon;
  std::string duration;
  bool governor = false;
  GovernorFlags governor_flags;
  bool jobs = false;
};

Result<ServeOptions> serve_options(const ServeFlags& flags, const core::Settings& settings) {
  ServeOptions o;
  monitor::DaemonOptions& d = o.daemon;
  auto listen = monitor::parse_listen(settings.get("listen"));
  if (!listen) {
    return bad_setting(settings, "listen", "HOST:PORT (e.g. 127.0.0.1:9477 or 0.0.0.0:9477)");
  }
  d.server = *listen;
  if (flags.governor) {  // its flags need it (add_governor_flags)
    ACCO_ASSIGN_OR_RETURN(d.governor, governor_settings(flags.governor_flags, settings));
  }
  ACCO_ASSIGN_OR_RETURN(auto monitor, monitor_options(flags.monitor, settings));
  d.interval = monitor.interval;
  d.sources = monitor.sources;
  d.sysroot = monitor.sysroot;
  d.metrics.version = ACCO_VERSION;
  if (!flags.duration.empty()) {
    ACCO_ASSIGN_OR_RETURN(o.duration, duration_flag(flags.duration, "20s"));
  }
  o.history_path = settings.get("history");
  o.tune_dir = settings.get("tune-dir");
  d.store_path = settings.get("store");
  if (flags.jobs) {
    d.jobs = monitor::JobQueueOptions{};
    d.jobs->dir = settings.get("jobs-dir");
    if (d.jobs->dir.empty()) {
      ACCO_ASSIGN_OR_RETURN(d.jobs->dir, monitor::default_jobs_dir());
    }
  }
  ACCO_RETURN_IF_ERROR(as_usage(monitor::apply_request(flags.daemon, d)));
  return o;
}

}  // namespace

CommandSpec serve_command() {
  return command_with_flags<ServeFlags>(
      "serve", "run the node daemon: sample devices and host, serve /metrics, API and dashboard",
      [](CLI::App& sub, SharedFlags& shared, ServeFlags& flags) {
        add_setting_flag(sub, shared, "listen",
                         "address to serve on (default 127.0.0.1:9477; env ACCO_LISTEN)",
                         "HOST:PORT");
        add_monitor_flags(sub, shared, flags.monitor, "sampling period (default 1s)");
        offer_values(sub.add_option("--compat", flags.daemon.compat,
                                    "also expose dcgm-exporter's series under DCGM's names: dcgm")
                         ->type_name("NAME"),
                     {"dcgm"});
        sub.add_option("--duration", flags.duration, "stop after this long (default: at SIGTERM)")
            ->type_name("DURATION");
        sub.add_option("--log", flags.daemon.log,
                       "write events as JSON Lines to FILE (rotated at 10 MiB)")
            ->type_name("FILE");
        sub.add_option("--probe-every", flags.daemon.probe_every,
                       "re-run the probe's checks this often and log findings that appear or "
                       "clear (they run once at start in any case)")
            ->type_name("DURATION");
        sub.add_option("--bench-every", flags.daemon.bench_every,
                       "run the quick bench this often when every device is idle, store it in "
                       "the bench history and log regressions")
            ->type_name("DURATION");
        sub.add_flag("--jobs", flags.jobs,
                     "run the job queue (acco submit, jobs, cancel, logs) for this user, its "
                     "table, token and logs in the jobs-dir setting's directory");
        add_setting_flag(sub, shared, "jobs-dir",
                         "the job queue's directory (default ~/.local/state/acco/jobs)", "DIR");
        CLI::Option* governor =
            sub.add_flag("--governor", flags.governor,
                         "run the power and thermal governor on every round (dry-run unless "
                         "--allow-control; actions as events, acco_governor_* in /metrics)");
        add_governor_flags(sub, shared, flags.governor_flags, governor);
        add_setting_flag(sub, shared, "history",
                         "bench history for --bench-every (default: the acco bench history; env "
                         "ACCO_HISTORY)",
                         "FILE");
        add_setting_flag(sub, shared, "store",
                         "keep every device field and host CPU/memory in the SQLite FILE "
                         "(raw points 1h, minute averages 7d; env ACCO_STORE)",
                         "FILE");
        sub.add_option("--retention", flags.daemon.retention,
                       "how long --store keeps raw points and minute averages (default "
                       "raw=1h,minute=7d)")
            ->type_name("SPEC");
        sub.add_option("--memory-window", flags.daemon.memory_window,
                       "how far back the rounds kept in memory reach, for the API's series and "
                       "the dashboard (default: the last 3600 rounds; older points come from "
                       "--store)")
            ->type_name("DURATION");
      },
      [](const ServeFlags& flags,
         const core::Settings& settings) -> Result<std::unique_ptr<Command>> {
        return command_from<ServeCommand>(serve_options(flags, settings));
      });
}

}  // namespace acco::cli
