// The daemon's continuous checking: the probe's checks re-run every --probe-every (once at
// start), findings that appear or clear logged as events and served at /api/v1/findings; and
// with --bench-every, the quick bench run when every device is idle, stored in the bench history
// and compared with the previous run on this machine, a path that dropped beyond the noise
// (the `bench --compare` rule) logged as a bench_regression event. Runs on a thread of its own,
// so sampling and serving never wait for a probe or a bench.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "acco/bench/compare.hpp"
#include "acco/core/settings.hpp"
#include "acco/monitor/events.hpp"
#include "acco/monitor/sampler.hpp"
#include "acco/topo/checks.hpp"
#include "acco/topo/machine.hpp"

namespace acco::cli {

// Events for findings that are new in `current` or gone from it; with no previous probe, every
// warning and critical finding is new. Findings are matched by rule and devices. Pure.
[[nodiscard]] std::vector<monitor::Event> finding_events(
    const std::optional<std::vector<topo::Finding>>& previous,
    const std::vector<topo::Finding>& current, std::int64_t time_unix_nanos);

// A bench_regression warning per regressed case; nothing for the others. Pure.
[[nodiscard]] std::vector<monitor::Event> bench_events(
    const std::vector<bench::Comparison>& changes, std::int64_t time_unix_nanos);

struct ChecksOptions {
  std::optional<std::chrono::seconds> probe_every;  // nullopt: only once, at start
  std::optional<std::chrono::seconds> bench_every;  // nullopt: never
  std::string history_path;                         // empty: the default bench history
  core::Settings settings;                          // sysroot, NVML, for the probe
  // A device counts as idle below this utilization; the bench waits for all of them.
  double idle_utilization = 0.05;
};

class PeriodicChecks {
 public:
  PeriodicChecks(ChecksOptions options, const monitor::Sampler& sampler, monitor::EventLog& events);
  ~PeriodicChecks();
  PeriodicChecks(const PeriodicChecks&) = delete;
  PeriodicChecks& operator=(const PeriodicChecks&) = delete;

  void start();
  void stop();  // after the probe or bench in progress; idempotent
  // {"time", "findings": [...]} of the latest probe, or {"findings": null, "note"} before it.
  [[nodiscard]] std::string findings_json() const;

 private:
  void loop();
  void run_probe();
  void run_bench();
  [[nodiscard]] bool devices_idle() const;
  [[nodiscard]] static std::int64_t now();

  ChecksOptions options_;
  const monitor::Sampler& sampler_;
  monitor::EventLog& events_;
  mutable std::mutex mutex_;  // guards the fields below
  std::condition_variable wake_;
  bool stopping_ = false;
  std::optional<std::vector<topo::Finding>> findings_;
  std::optional<topo::Machine> machine_;
  std::int64_t probed_at_ = 0;
  std::string probe_error_;
  std::thread thread_;
};

}  // namespace acco::cli
