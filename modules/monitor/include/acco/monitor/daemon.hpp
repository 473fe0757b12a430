// The node daemon (`acco serve`) as a library: samples every source at a fixed period (NVML
// GPUs, simulated devices, the host), serves the latest round over HTTP (/metrics, the JSON
// API, the dashboard), writes events as JSON Lines, keeps the series store, re-runs the
// probe's checks and the periodic bench, and optionally runs the power and thermal governor on
// every round. create() builds it, start() makes it listen, run() serves until a stop is
// requested or a duration has passed, and stop() shuts it down with the limits the governor
// changed restored.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "acco/core/result.hpp"
#include "acco/core/stop.hpp"
#include "acco/monitor/checks.hpp"
#include "acco/monitor/jobs.hpp"
#include "acco/monitor/metrics.hpp"
#include "acco/monitor/series_store.hpp"
#include "acco/monitor/server.hpp"
#include "acco/monitor/sources.hpp"
#include "acco/power/governor_loop.hpp"
#include "acco/report/document.hpp"

namespace acco::monitor {

struct DaemonOptions {
  ServerOptions server;                      // where to listen; port 0: a free one
  std::chrono::milliseconds interval{1000};  // sampling period
  // How far back the rounds kept in memory reach (/api/v1/series, the dashboard): window /
  // interval rounds, at least 2; nullopt: 3600 rounds. Each round of 8 devices holds ~13 KB.
  std::optional<std::chrono::milliseconds> memory_window;
  std::string sysroot = "/";  // where the host and NVML sources read
  SourceOptions sources;      // NVML, simulated devices, the host
  MetricsOptions metrics;     // DCGM-compatible names, version and host labels
  std::string event_log;      // JSON Lines file (rotated); empty: in memory only
  std::string store_path;     // SQLite series store; empty: none
  SeriesStoreOptions store;   // its retention and batches; write errors become events
  ChecksOptions checks;       // the periodic probe and bench
  // The governor on every round (actions as events, acco_governor_* in /metrics), with the
  // host's RAPL packages added to the devices (sources.rapl); its nvml_library and sysroot are
  // the sources'.
  // nullopt: none.
  std::optional<power::GovernorSettings> governor;
  // The job queue (acco serve --jobs): its directory and the machine its bindings come from
  // (when its origin is empty, create() probes checks.probe's machine for it); nullopt: none.
  // Started jobs outlive the daemon; the next one re-adopts them.
  std::optional<JobQueueOptions> jobs;
};

// The daemon's own flags as `acco serve` takes them, in their text forms; empty: not given.
struct DaemonRequest {
  std::string compat;         // "dcgm": dcgm-exporter's series under DCGM's names too
  std::string log;            // the event log (JSON Lines)
  std::string probe_every;    // the periodic probe: 1s-7d
  std::string bench_every;    // the periodic quick bench: 1s-7d
  std::string retention;      // the store's: raw=DURATION,minute=DURATION (needs a store)
  std::string memory_window;  // the rounds kept in memory: 1s-7d
};

// `request` checked into `options`, whose store_path is already set; errors name the flag
// ("--probe-every: '0s' is not a duration from 1s to 7d (e.g. 10m)", kInvalidArgument).
[[nodiscard]] Status apply_request(const DaemonRequest& request, DaemonOptions& options);

struct DaemonStarted {
  int port = 0;             // the port it listens on
  std::size_t devices = 0;  // devices in the first round
  std::string nvml_note;    // "on", "off" or "unavailable (<why>)"
};

struct DaemonSummary {
  std::string stopped_by;    // the stop's reason, or core::kStoppedByDuration
  std::uint64_t rounds = 0;  // sampling rounds taken
};

// What a person is told once start() answered: "acco serve: listening on
// http://127.0.0.1:9477/ (metrics at /metrics), sampling every 1.00 s: 2 device(s) (2 simulated),
// NVML off, host /". Pure.
[[nodiscard]] std::string started_line(const DaemonOptions& options, const DaemonStarted& started);
// "acco serve: stopped by SIGTERM after 12 round(s)". Pure.
[[nodiscard]] report::Document daemon_report(const DaemonSummary& summary);

class Daemon {
 public:
  // Builds the sources, opens the event log and the store, and sets up the governor (whose
  // state file is read at once: one that is not one stops the daemon before it changes
  // anything). Nothing runs yet. Errors: make_sources's, EventLog::open's, SeriesStore::open's,
  // read_state_file's, and GovernorLoop::create's.
  [[nodiscard]] static Result<Daemon> create(DaemonOptions options);
  ~Daemon();  // stop("the daemon's destruction") when it runs
  Daemon(Daemon&& other) noexcept;
  Daemon& operator=(Daemon&& other) noexcept;
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Takes the first round, binds, logs serve_started and starts the checks; every thread the
  // daemon runs starts here. kUnavailable naming the address when it cannot bind.
  [[nodiscard]] Result<DaemonStarted> start();

  // start() when not started, then serves until `stop` is requested (its reason is the
  // summary's) or `duration` (when positive) has passed since start(); then stop().
  [[nodiscard]] Result<DaemonSummary> run(const core::StopFlag& stop,
                                          std::chrono::duration<double> duration = {});

  // Stops serving, the checks and sampling, finishes the governor (limits back as found),
  // flushes the store and logs serve_stopped ("stopped by <reason> after N round(s)").
  // Idempotent: later calls answer the first summary. Call it from the thread that started the
  // daemon (run() does); another thread stops a run through its StopFlag.
  DaemonSummary stop(const std::string& reason);

 private:
  struct Impl;
  explicit Daemon(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace acco::monitor
