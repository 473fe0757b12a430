#include "acco/monitor/daemon.hpp"

#include <utility>
#include <vector>

#include <fmt/format.h>

#include "acco/analyze/events.hpp"
#include "acco/core/clock.hpp"
#include "acco/core/option_check.hpp"
#include "acco/core/units.hpp"
#include "acco/monitor/client.hpp"
#include "acco/monitor/event_log.hpp"
#include "acco/monitor/jobs.hpp"
#include "acco/monitor/sampler.hpp"
#include "acco/monitor/series_store.hpp"
#include "acco/power/controller.hpp"
#include "acco/topo/probe.hpp"

namespace acco::monitor {

// Every hook the parts call back through (the sampler's governor tick and observers, the
// store's errors, the server's events and findings) holds a pointer to this, which does not
// move when the Daemon does. Members are destroyed in reverse: the checks and the server
// before the store and the sampler they read, the sources' file system last.
struct Daemon::Impl {
  DaemonOptions options;
  std::unique_ptr<core::Fs> fs;  // what the host and NVML sources read; outlives them
  std::string nvml_note;
  std::unique_ptr<EventLog> events;
  std::optional<power::GovernorLoop> governor;
  std::chrono::steady_clock::time_point governor_begin = std::chrono::steady_clock::now();
  std::unique_ptr<Sampler> sampler;
  std::shared_ptr<const Published> previous;  // the sampler thread's
  std::unique_ptr<SeriesStore> store;
  std::unique_ptr<Server> server;
  std::unique_ptr<PeriodicChecks> checks;
  std::unique_ptr<JobQueue> jobs;
  bool started = false;
  std::optional<DaemonSummary> summary;  // once stopped
  std::chrono::steady_clock::time_point begin;

  [[nodiscard]] double governor_seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - governor_begin).count();
  }
};

Daemon::Daemon(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Daemon::Daemon(Daemon&& other) noexcept = default;

Daemon& Daemon::operator=(Daemon&& other) noexcept {
  if (this != &other) {
    if (impl_ && impl_->started && !impl_->summary) {
      stop("the daemon's destruction");
    }
    impl_ = std::move(other.impl_);
  }
  return *this;
}

Daemon::~Daemon() {
  if (impl_ && impl_->started && !impl_->summary) {
    stop("the daemon's destruction");
  }
}

Result<Daemon> Daemon::create(DaemonOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  const DaemonOptions& o = impl->options;
  Impl* self = impl.get();

  SourceOptions source_options = o.sources;
  source_options.rapl = source_options.rapl || o.governor.has_value();
  ACCO_ASSIGN_OR_RETURN(auto sources, make_sources(o.sysroot, source_options));
  ACCO_ASSIGN_OR_RETURN(impl->events, EventLog::open({.path = o.event_log}));
  // The governor ticks on the sampler's thread with each round's samples (scrapes never read a
  // sensor); its actions are events.
  if (o.governor) {
    std::vector<power::SensorSource*> raw;
    for (const auto& s : sources.devices) {
      raw.push_back(s.get());
    }
    power::GovernorSettings settings = *o.governor;
    settings.nvml_library = o.sources.nvml_library;
    settings.sysroot = o.sysroot;
    ACCO_ASSIGN_OR_RETURN(
        impl->governor, power::GovernorLoop::create(settings, raw, [self](const power::Action& a) {
          self->events->add(analyze::governor_event(a, core::now_unix_nanos()));
        }));
    // A state file that is not one stops the governor before it changes anything: at start, as
    // acco power run does, not as an event once the daemon is up.
    if (impl->governor->uses_state_file()) {
      ACCO_RETURN_IF_ERROR(power::read_state_file(o.governor->state_file));
    }
  }

  SamplerOptions sampler_options;
  if (impl->governor) {
    sampler_options.governor = [self](const std::vector<power::DeviceSample>& samples,
                                      std::int64_t /*time*/) {
      (void)self->governor->tick(samples, self->governor_seconds());
      return self->governor->status();
    };
  }
  sampler_options.interval = o.interval;
  sampler_options.metrics = o.metrics;
  if (o.memory_window) {
    sampler_options.history_rounds = std::max<std::size_t>(
        2, static_cast<std::size_t>(*o.memory_window /
                                    std::max(o.interval, std::chrono::milliseconds(1))));
  }
  impl->nvml_note = sources.nvml_note;
  impl->fs = std::move(sources.fs);
  impl->sampler = std::make_unique<Sampler>(std::move(sources.devices), std::move(sources.host),
                                            sampler_options);
  impl->sampler->add_observer([self](const Published& round) {
    self->events->add(analyze::detect_events(self->previous ? &self->previous->snapshot : nullptr,
                                             round.snapshot));
    self->previous = self->sampler->latest();
  });
  if (!o.store_path.empty()) {
    SeriesStoreOptions store_options = o.store;
    // Runs on the sampler thread, the events observer's thread too.
    store_options.on_write_error = [self](const Error& e) {
      analyze::Event failed;
      failed.time_unix_nanos = self->previous ? self->previous->snapshot.time_unix_nanos : 0;
      failed.level = "error";
      failed.event = "store_write_error";
      failed.message = e.message;
      self->events->add(failed);
    };
    ACCO_ASSIGN_OR_RETURN(impl->store, SeriesStore::open(o.store_path, std::move(store_options)));
    impl->sampler->add_observer(
        [self](const Published& round) { self->store->add(round.snapshot); });
  }
  if (o.jobs) {
    JobQueueOptions jobs = *o.jobs;
    if (jobs.machine.origin.empty()) {
      // The jobs' bindings come from the machine as it is now (simulated devices have none).
      ACCO_ASSIGN_OR_RETURN(const auto probed, topo::probe(o.checks.probe), "serve --jobs");
      jobs.machine = probed.machine;
    }
    ACCO_ASSIGN_OR_RETURN(impl->jobs, JobQueue::open(std::move(jobs)));
    // Placed on the sampler's thread with each round's loads (the governor's weights included).
    impl->sampler->add_observer(
        [self](const Published& round) { self->jobs->tick(round.snapshot); });
  }
  impl->server = std::make_unique<Server>(
      *impl->sampler, o.server, [self](std::int64_t since) { return self->events->since(since); });
  impl->server->set_store(impl->store.get());
  impl->server->set_sources(sources_info(source_options, o.sysroot, impl->nvml_note));
  impl->server->set_on_refused([self](const std::string& what) {
    analyze::Event refused;
    refused.time_unix_nanos = core::now_unix_nanos();
    refused.level = "warning";
    refused.event = "http_request_refused";
    refused.message = what;
    self->events->add(refused);
  });
  impl->checks = std::make_unique<PeriodicChecks>(o.checks, *impl->sampler, *impl->events);
  impl->server->set_findings([self] { return self->checks->findings_json(); });
  impl->server->set_jobs(impl->jobs.get());
  return Daemon(std::move(impl));
}

Result<DaemonStarted> Daemon::start() {
  Impl& d = *impl_;
  ACCO_CHECK(!d.started);
  d.sampler->start();
  auto port = d.server->start();
  if (!port) {
    d.sampler->stop();
    return tl::unexpected(std::move(port).error());
  }
  const auto latest = d.sampler->latest();
  DaemonStarted started;
  started.port = *port;
  started.devices = latest ? latest->snapshot.devices.size() : 0;
  started.nvml_note = d.nvml_note;
  analyze::Event event;
  event.time_unix_nanos = latest ? latest->snapshot.time_unix_nanos : 0;
  event.level = "info";
  event.event = "serve_started";
  event.message = fmt::format("listening on {}:{}", d.options.server.host, *port);
  d.events->add(event);
  d.checks->start();
  if (d.jobs) {
    // Loopback: the commands reach the queue at the address it listens on, named in its
    // directory.
    const std::string host = d.options.server.host == "0.0.0.0" || d.options.server.host.empty()
                                 ? std::string("127.0.0.1")
                             : d.options.server.host == "::" ? std::string("::1")
                                                             : d.options.server.host;
    if (auto written = write_daemon_file(d.options.jobs->dir, ServerUrl{host, *port}.text());
        !written) {
      d.checks->stop();
      d.server->stop();
      d.sampler->stop();
      return tl::unexpected(std::move(written).error());
    }
  }
  d.started = true;
  d.begin = std::chrono::steady_clock::now();
  return started;
}

Result<DaemonSummary> Daemon::run(const core::StopFlag& stop,
                                  std::chrono::duration<double> duration) {
  if (!impl_->started) {
    ACCO_RETURN_IF_ERROR(start());
  }
  std::string why = core::kStoppedByDuration;
  if (duration.count() > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(
        duration - (std::chrono::steady_clock::now() - impl_->begin));
    if (stop.wait_for(left)) {
      why = stop.reason().value_or("");
    }
  } else {
    stop.wait();
    why = stop.reason().value_or("");
  }
  return this->stop(why);
}

DaemonSummary Daemon::stop(const std::string& reason) {
  Impl& d = *impl_;
  if (d.summary) {
    return *d.summary;
  }
  if (!d.started) {
    d.summary = DaemonSummary{reason, 0};
    return *d.summary;
  }
  d.server->stop();
  d.checks->stop();
  d.sampler->stop();
  if (d.jobs) {
    remove_daemon_file(d.options.jobs->dir);
  }
  if (d.governor) {
    // Limits back as found, on every way out.
    const auto final_round = d.sampler->latest();
    (void)d.governor->finish(
        final_round ? final_round->snapshot.devices : std::vector<power::DeviceSample>{},
        d.governor_seconds());
  }
  if (d.store) {
    d.store->flush();  // the final, partial batch
  }
  const auto last = d.sampler->latest();
  DaemonSummary summary{reason, last ? last->snapshot.stats.rounds : 0};
  analyze::Event stopped;
  stopped.time_unix_nanos = last ? last->snapshot.time_unix_nanos : 0;
  stopped.level = "info";
  stopped.event = "serve_stopped";
  stopped.message = fmt::format("stopped by {} after {} round(s)", reason, summary.rounds);
  d.events->add(stopped);
  d.events->flush();
  d.summary = summary;
  return summary;
}

std::string started_line(const DaemonOptions& options, const DaemonStarted& started) {
  return fmt::format(
      "acco serve: listening on {}/ (metrics at /metrics), sampling every {}: {} device(s) ({} "
      "simulated), NVML {}, host {}",
      ServerUrl{options.server.host, started.port}.text(),
      units::format_seconds(std::chrono::duration<double>(options.interval).count()),
      started.devices, options.sources.simulate, started.nvml_note, options.sysroot);
}

report::Document daemon_report(const DaemonSummary& summary) {
  report::Document doc;
  doc.add(report::Preformatted{fmt::format("acco serve: stopped by {} after {} round(s)",
                                           summary.stopped_by, summary.rounds)});
  return doc;
}

namespace {

// A period flag from 1s to 7d, in seconds (fractions kept); empty: not given.
Result<std::optional<double>> period(const char* flag, const std::string& text,
                                     const char* example) {
  if (text.empty()) {
    return std::optional<double>();
  }
  const auto seconds = units::parse_duration(text);
  if (!seconds || *seconds < 1 || *seconds > 7 * 86400) {
    return core::bad_option(flag, text, fmt::format("a duration from 1s to 7d (e.g. {})", example));
  }
  return std::optional<double>(*seconds);
}

// A check's period, in whole seconds.
Result<std::optional<std::chrono::seconds>> every(const char* flag, const std::string& text) {
  ACCO_ASSIGN_OR_RETURN(const auto seconds, period(flag, text, "10m"));
  if (!seconds) {
    return std::optional<std::chrono::seconds>();
  }
  return std::optional(std::chrono::seconds(static_cast<long long>(*seconds)));
}

}  // namespace

Status apply_request(const DaemonRequest& r, DaemonOptions& o) {
  if (!r.compat.empty() && r.compat != "dcgm") {
    return core::bad_option("--compat", r.compat, "dcgm");
  }
  o.metrics.dcgm_compat = r.compat == "dcgm";
  o.event_log = r.log;
  ACCO_ASSIGN_OR_RETURN(o.checks.probe_every, every("--probe-every", r.probe_every));
  ACCO_ASSIGN_OR_RETURN(o.checks.bench_every, every("--bench-every", r.bench_every));
  if (!r.retention.empty()) {
    if (o.store_path.empty()) {
      return fail(Errc::kInvalidArgument, "--retention: applies to --store, which is not given");
    }
    auto retention = parse_retention(r.retention);
    if (!retention) {
      return core::bad_option("--retention", r.retention,
                              "raw=DURATION,minute=DURATION (e.g. raw=1h,minute=7d)");
    }
    o.store = *retention;
  }
  ACCO_ASSIGN_OR_RETURN(const auto window, period("--memory-window", r.memory_window, "15m"));
  if (window) {
    o.memory_window = std::chrono::milliseconds(static_cast<long long>(*window * 1000));
  }
  return {};
}

}  // namespace acco::monitor
