// `acco serve`: the node daemon. Samples every source at a fixed period (NVML GPUs, simulated
// devices, the host), serves the latest round over HTTP (/metrics, the JSON API, the dashboard),
// writes events as JSON Lines, and stops cleanly on SIGTERM or SIGINT (or after --duration).
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "acco/core/units.hpp"
#include "acco/monitor/events.hpp"
#include "acco/monitor/sampler.hpp"
#include "acco/monitor/series_store.hpp"
#include "acco/monitor/server.hpp"
#include "acco/monitor/sources.hpp"
#include "acco/power/rapl.hpp"
#include "acco/power/simulated_device.hpp"

#include "command_spec.hpp"
#include "commands.hpp"
#include "governor_setup.hpp"
#include "monitor_flags.hpp"
#include "process.hpp"
#include "serve_checks.hpp"

namespace acco::cli {
namespace {

std::int64_t wall_unix_nanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct ServeOptions {
  monitor::ServerOptions server;
  std::chrono::milliseconds interval{1000};
  monitor::SourceOptions sources;
  bool dcgm_compat = false;
  double duration_seconds = 0;  // 0: until a signal
  std::string log_path;
  std::string store_path;  // empty: no series store
  monitor::SeriesStoreOptions store;
  ChecksOptions checks;
  std::string sysroot;
  std::optional<GovernorSettings> governor;  // --governor
};

class ServeCommand final : public Command {
 public:
  explicit ServeCommand(ServeOptions options) : options_(std::move(options)) {}

  Output run(const Invocation& inv) const override {
    const SignalScope signals;
    auto sources = monitor::make_sources(options_.sysroot, options_.sources);
    if (!sources) {
      return error_output(sources.error());
    }

    auto log = monitor::EventLog::open({.path = options_.log_path});
    if (!log) {
      return error_output(log.error());
    }
    monitor::EventLog& events = **log;
    // The governor ticks on the sampler's thread with each round's samples (scrapes never read
    // a sensor); its actions are events.
    std::optional<Governing> governing;
    const auto begin_governor = std::chrono::steady_clock::now();
    const auto governor_seconds = [begin_governor] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_governor)
          .count();
    };
    if (options_.governor) {
      if (sources->fs) {
        sources->devices.push_back(power::make_rapl_source(*sources->fs));
      }
      std::vector<power::SensorSource*> raw;
      for (const auto& s : sources->devices) {
        raw.push_back(s.get());
      }
      auto made = make_governing(*options_.governor, raw, options_.sources.nvml_library,
                                 options_.sysroot, [&events](const power::Action& a) {
                                   events.add(monitor::governor_event(a, wall_unix_nanos()));
                                 });
      if (!made) {
        return error_output(made.error());
      }
      governing = std::move(*made);
      // A state file that is not one stops the governor before it changes anything: at start,
      // as acco power run does, not as an event once the daemon is up.
      if (governing->uses_state_file) {
        if (auto left = power::read_state_file(options_.governor->state_file); !left) {
          return error_output(left.error());
        }
      }
    }
    monitor::SamplerOptions sampler_options;
    if (governing) {
      sampler_options.governor = [&governing, governor_seconds](
                                     const std::vector<power::DeviceSample>& samples,
                                     std::int64_t /*time*/) {
        (void)governing->tick(samples, governor_seconds());
        return governing->run->status();
      };
    }
    sampler_options.interval = options_.interval;
    sampler_options.metrics = {
        .dcgm_compat = options_.dcgm_compat, .version = ACCO_VERSION, .hostname = hostname()};
    const std::string nvml_note = sources->nvml_note;
    monitor::Sampler sampler(std::move(sources->devices), std::move(sources->host),
                             sampler_options);
    std::shared_ptr<const monitor::Published> previous;
    sampler.add_observer([&](const monitor::Published& round) {
      events.add(monitor::detect_events(previous ? &previous->snapshot : nullptr, round.snapshot));
      previous = sampler.latest();
    });
    std::unique_ptr<monitor::SeriesStore> store;
    if (!options_.store_path.empty()) {
      monitor::SeriesStoreOptions store_options = options_.store;
      // Runs on the sampler thread, the events observer's thread too.
      store_options.on_write_error = [&events, &previous](const Error& e) {
        monitor::Event failed;
        failed.time_unix_nanos = previous ? previous->snapshot.time_unix_nanos : 0;
        failed.level = "error";
        failed.event = "store_write_error";
        failed.message = e.message;
        events.add(failed);
      };
      auto opened = monitor::SeriesStore::open(options_.store_path, std::move(store_options));
      if (!opened) {
        return error_output(opened.error());
      }
      store = std::move(*opened);
      sampler.add_observer(
          [&store](const monitor::Published& round) { store->add(round.snapshot); });
    }
    monitor::Server server(sampler, options_.server,
                           [&](std::int64_t since) { return events.since(since); });
    server.set_store(store.get());
    ChecksOptions checks_options = options_.checks;
    checks_options.settings = inv.settings;
    PeriodicChecks checks(std::move(checks_options), sampler, events);
    server.set_findings([&checks] { return checks.findings_json(); });
    sampler.start();
    auto port = server.start();
    if (!port) {
      sampler.stop();
      return error_output(port.error());
    }
    const auto latest = sampler.latest();
    const std::size_t devices = latest ? latest->snapshot.devices.size() : 0;
    if (inv.progress) {
      inv.progress(fmt::format(
          "acco serve: listening on http://{}:{}/ (metrics at /metrics), sampling every {}: {} "
          "device(s) ({} simulated), NVML {}, host {}",
          options_.server.host.find(':') != std::string::npos ? "[" + options_.server.host + "]"
                                                              : options_.server.host,
          *port, units::format_seconds(std::chrono::duration<double>(options_.interval).count()),
          devices, options_.sources.simulate, nvml_note, options_.sysroot));
    }
    monitor::Event started;
    started.time_unix_nanos = latest ? latest->snapshot.time_unix_nanos : 0;
    started.level = "info";
    started.event = "serve_started";
    started.message = fmt::format("listening on {}:{}", options_.server.host, *port);
    events.add(started);
    checks.start();

    const auto begin = std::chrono::steady_clock::now();
    int signal = 0;
    while (signal == 0) {
      signal = signals.wait(std::chrono::milliseconds(100));
      if (options_.duration_seconds > 0 &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count() >=
              options_.duration_seconds) {
        break;
      }
    }
    server.stop();
    checks.stop();
    sampler.stop();
    if (governing) {
      // Limits back as found, on every way out (the duration, SIGTERM, SIGINT).
      const auto final_round = sampler.latest();
      (void)governing->run->finish(
          final_round ? final_round->snapshot.devices : std::vector<power::DeviceSample>{},
          governor_seconds());
    }
    if (store) {
      store->flush();  // the final, partial batch
    }
    const auto last = sampler.latest();
    const auto rounds = last ? last->snapshot.stats.rounds : 0;
    const std::string why = signal == SIGTERM  ? "SIGTERM"
                            : signal == SIGINT ? "SIGINT"
                                               : "the end of --duration";
    monitor::Event stopped;
    stopped.time_unix_nanos = last ? last->snapshot.time_unix_nanos : 0;
    stopped.level = "info";
    stopped.event = "serve_stopped";
    stopped.message = fmt::format("stopped by {} after {} round(s)", why, rounds);
    events.add(stopped);
    events.flush();
    Output out;
    out.out = fmt::format("acco serve: stopped by {} after {} round(s)\n", why, rounds);
    return out;
  }

 private:
  ServeOptions options_;
};

struct ServeFlags {
  std::string listen = "127.0.0.1:9477";
  MonitorFlags monitor;
  std::string compat;
  std::string duration;
  std::string log;
  std::string store;
  std::string retention;
  std::string probe_every;
  std::string bench_every;
  std::string history;
  bool governor = false;
  GovernorFlags governor_flags;
};

Result<ServeOptions> serve_options(const ServeFlags& flags, const core::Settings& settings) {
  ServeOptions o;
  ACCO_ASSIGN_OR_RETURN(o.server, listen_address("--listen", flags.listen));
  if (flags.governor) {  // its flags need it (add_governor_flags)
    ACCO_ASSIGN_OR_RETURN(o.governor, governor_settings(flags.governor_flags));
  }
  ACCO_ASSIGN_OR_RETURN(auto monitor, monitor_options(flags.monitor, settings));
  o.interval = monitor.interval;
  o.sources = monitor.sources;
  o.sysroot = monitor.sysroot;
  if (!flags.compat.empty() && flags.compat != "dcgm") {
    return bad_value("--compat", flags.compat, "dcgm");
  }
  o.dcgm_compat = flags.compat == "dcgm";
  if (!flags.duration.empty()) {
    const auto d = units::parse_duration(flags.duration);
    if (!d || *d <= 0) {
      return bad_value("--duration", flags.duration, "a positive duration (e.g. 20s)");
    }
    o.duration_seconds = *d;
  }
  o.log_path = flags.log;
  const auto every = [](const std::string& flag, const std::string& text,
                        std::optional<std::chrono::seconds>& out) -> Status {
    if (text.empty()) {
      return {};
    }
    const auto d = units::parse_duration(text);
    if (!d || *d < 1 || *d > 7 * 86400) {
      return bad_value(flag, text, "a duration from 1s to 7d (e.g. 10m)");
    }
    out = std::chrono::seconds(static_cast<long long>(*d));
    return {};
  };
  ACCO_RETURN_IF_ERROR(every("--probe-every", flags.probe_every, o.checks.probe_every));
  ACCO_RETURN_IF_ERROR(every("--bench-every", flags.bench_every, o.checks.bench_every));
  o.checks.history_path = flags.history;
  o.store_path = flags.store;
  if (!flags.retention.empty() && flags.store.empty()) {
    return usage("--retention: applies to --store, which is not given");
  }
  if (!flags.retention.empty()) {
    auto retention = monitor::parse_retention(flags.retention);
    if (!retention) {
      return bad_value("--retention", flags.retention,
                       "raw=DURATION,minute=DURATION (e.g. raw=1h,minute=7d)");
    }
    o.store = *retention;
  }
  return o;
}

}  // namespace

CommandSpec serve_command() {
  return command_with_flags<ServeFlags>(
      "serve", "run the node daemon: sample devices and host, serve /metrics, API and dashboard",
      [](CLI::App& sub, SharedFlags& shared, ServeFlags& flags) {
        sub.add_option("--listen", flags.listen, "address to serve on (default 127.0.0.1:9477)")
            ->type_name("HOST:PORT");
        add_monitor_flags(sub, shared, flags.monitor, "sampling period (default 1s)");
        sub.add_option("--compat", flags.compat,
                       "also expose dcgm-exporter's series under DCGM's names: dcgm")
            ->type_name("NAME");
        sub.add_option("--duration", flags.duration, "stop after this long (default: at SIGTERM)")
            ->type_name("DURATION");
        sub.add_option("--log", flags.log, "write events as JSON Lines to FILE (rotated at 10 MiB)")
            ->type_name("FILE");
        sub.add_option("--probe-every", flags.probe_every,
                       "re-run the probe's checks this often and log findings that appear or "
                       "clear (they run once at start in any case)")
            ->type_name("DURATION");
        sub.add_option("--bench-every", flags.bench_every,
                       "run the quick bench this often when every device is idle, store it in "
                       "the bench history and log regressions")
            ->type_name("DURATION");
        CLI::Option* governor =
            sub.add_flag("--governor", flags.governor,
                         "run the power and thermal governor on every round (dry-run unless "
                         "--allow-control; actions as events, acco_governor_* in /metrics)");
        add_governor_flags(sub, flags.governor_flags, governor);
        sub.add_option("--history", flags.history,
                       "bench history for --bench-every (default: the acco bench history)")
            ->type_name("FILE");
        sub.add_option("--store", flags.store,
                       "keep every device field and host CPU/memory in the SQLite FILE "
                       "(raw points 1h, minute averages 7d)")
            ->type_name("FILE");
        sub.add_option("--retention", flags.retention,
                       "how long --store keeps raw points and minute averages (default "
                       "raw=1h,minute=7d)")
            ->type_name("SPEC");
      },
      [](const ServeFlags& flags,
         const core::Settings& settings) -> Result<std::unique_ptr<Command>> {
        return command_from<ServeCommand>(serve_options(flags, settings));
      });
}

}  // namespace acco::cli
