// The daemon's continuous checking: the probe's checks re-run every probe_every (once at start in
// any case), findings that appear or clear logged as events and served at /api/v1/findings; and
// with bench_every, a bench run when every device is idle, a path that dropped beyond the noise
// since the previous run on this machine logged as a bench_regression event. The bench itself
// is the caller's (acco's CLI runs the doctor's quick bench and keeps the bench history): the
// monitor only says when, and logs what it found. Runs on a thread of its own, so sampling and
// serving never wait for a probe or a bench.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "acco/analyze/events.hpp"
#include "acco/core/result.hpp"
#include "acco/monitor/event_log.hpp"
#include "acco/monitor/sampler.hpp"
#include "acco/topo/checks.hpp"
#include "acco/topo/machine.hpp"
#include "acco/topo/probe.hpp"

namespace acco::monitor {

// A benchmark case that got slower than the previous run on this machine beyond the noise.
struct BenchRegression {
  std::string case_key;  // "h2d_pinned_plain"
  std::string device;
  double previous = 0;         // bytes per second
  double current = 0;          // bytes per second
  double relative_change = 0;  // (current - previous) / previous, negative
  double threshold = 0;        // the noise threshold it went beyond, a ratio
  bool operator==(const BenchRegression&) const = default;
};

// What one periodic bench found.
struct BenchCheck {
  std::string note;         // what was measured ("pinned and pageable copies on every GPU, ...")
  std::size_t results = 0;  // results measured
  std::vector<BenchRegression> regressions;  // against the previous run on this machine
  std::vector<std::string> errors;  // what failed around it ("the bench history could not be ...")
};

// Measures the links of `machine` (the latest probe's) and compares with the previous run;
// an error is a bench_failed event. Called on the checks' thread.
using BenchFn = std::function<Result<BenchCheck>(const topo::Machine& machine)>;

// Events for findings that are new in `current` or gone from it; with no previous probe, every
// warning and critical finding is new. Findings are matched by rule and devices. Pure.
[[nodiscard]] std::vector<analyze::Event> finding_events(
    const std::optional<std::vector<topo::Finding>>& previous,
    const std::vector<topo::Finding>& current, std::int64_t time_unix_nanos);

// A bench_regression warning per regression. Pure.
[[nodiscard]] std::vector<analyze::Event> bench_events(
    const std::vector<BenchRegression>& regressions, std::int64_t time_unix_nanos);

// bench_done (info) with the note and counts, then a bench_regression per regression, then a
// bench_failed (error) per error. Pure.
[[nodiscard]] std::vector<analyze::Event> bench_check_events(const BenchCheck& check,
                                                             std::int64_t time_unix_nanos);

struct ChecksOptions {
  std::optional<std::chrono::seconds> probe_every;  // nullopt: only once, at start
  std::optional<std::chrono::seconds> bench_every;  // nullopt: never
  topo::ProbeRequest probe;                         // what the periodic probe reads
  BenchFn bench;                                    // the periodic bench; empty: never
  // A device counts as idle below this utilization; the bench waits for all of them.
  double idle_utilization = 0.05;
};

class PeriodicChecks {
 public:
  // `sampler` (for the devices' utilization) and `events` must outlive this.
  PeriodicChecks(ChecksOptions options, const Sampler& sampler, EventLog& events);
  ~PeriodicChecks();  // stop()
  PeriodicChecks(const PeriodicChecks&) = delete;
  PeriodicChecks& operator=(const PeriodicChecks&) = delete;

  void start();
  void stop();  // after the probe or bench in progress; idempotent
  // {"time", "findings": [...]} of the latest probe, or {"findings": null, "note"} before it.
  // Thread-safe.
  [[nodiscard]] std::string findings_json() const;

 private:
  void loop();
  void run_probe();
  void run_bench();
  [[nodiscard]] bool devices_idle() const;

  ChecksOptions options_;
  const Sampler& sampler_;
  EventLog& events_;
  mutable std::mutex mutex_;  // guards the fields below
  std::condition_variable wake_;
  bool stopping_ = false;
  std::optional<std::vector<topo::Finding>> findings_;
  std::optional<topo::Machine> machine_;
  std::int64_t probed_at_ = 0;
  std::string probe_error_;
  std::thread thread_;
};

}  // namespace acco::monitor
