// `acco schedule --serve`: while the schedule runs, a sampler whose process counters are the
// task runtime's (queues, tasks, the transfer engines' bytes) serves /metrics and the API, so a
// Prometheus scrape shows the run live; it stops when the command ends.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "acco/cli/app.hpp"
#include "acco/core/result.hpp"
#include "acco/monitor/sampler.hpp"
#include "acco/monitor/server.hpp"
#include "acco/monitor/snapshot.hpp"
#include "acco/monitor/sources.hpp"
#include "acco/sched/runtime.hpp"

namespace acco::cli {

struct ScheduleServeOptions {
  monitor::ServerOptions server;
  std::chrono::milliseconds interval{200};
};

// Pure: the counters of the runtimes that have ended (`retired`, totals per device index) plus
// the live one's (`current`, null between runtimes) as mon's plain value. Totals add up; the
// queue and running gauges are the live runtime's.
[[nodiscard]] monitor::ProcessCounters process_counters(
    const std::vector<sched::RuntimeDeviceCounters>& retired,
    const sched::RuntimeCounters* current);

class ScheduleServer {
 public:
  // Samples the host and NVML GPUs (when NVML loads) and the runtime it observes, and serves;
  // `progress` gets the listening line. kUnavailable when the address cannot be bound.
  [[nodiscard]] static Result<std::unique_ptr<ScheduleServer>> start(
      const ScheduleServeOptions& options, const Progress& progress);
  // Stops serving, then sampling.
  ~ScheduleServer();
  ScheduleServer(const ScheduleServer&) = delete;
  ScheduleServer& operator=(const ScheduleServer&) = delete;
  ScheduleServer(ScheduleServer&&) = delete;
  ScheduleServer& operator=(ScheduleServer&&) = delete;

  // For sched::WorkloadRunOptions::observe: the runtime to poll from now on, or null when it is
  // about to be destroyed (its final counters are kept). Thread-safe.
  void observe(const sched::Runtime* runtime);

 private:
  ScheduleServer() = default;
  [[nodiscard]] monitor::ProcessCounters counters() const;

  mutable std::mutex mutex_;  // guards runtime_ and retired_; held while polling the runtime
  const sched::Runtime* runtime_ = nullptr;
  std::vector<sched::RuntimeDeviceCounters> retired_;
  std::optional<monitor::Sources> sources_;  // the sampler's sources read its fs
  std::unique_ptr<monitor::Sampler> sampler_;
  std::unique_ptr<monitor::Server> server_;  // last: stopped and destroyed first
};

}  // namespace acco::cli
