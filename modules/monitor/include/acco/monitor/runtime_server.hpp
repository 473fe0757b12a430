// A task runtime served live (`acco schedule --serve`): while a workload runs, a sampler whose
// process counters are the runtime's (queues, tasks, the transfer engines' bytes) serves
// /metrics and the API, so a Prometheus scrape shows the run as it goes; destroying the server
// stops it.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "acco/analyze/snapshot.hpp"
#include "acco/core/result.hpp"
#include "acco/monitor/metrics.hpp"
#include "acco/monitor/sampler.hpp"
#include "acco/monitor/server.hpp"
#include "acco/monitor/sources.hpp"
#include "acco/sched/runtime.hpp"

namespace acco::monitor {

struct RuntimeServerOptions {
  ServerOptions server;
  std::chrono::milliseconds interval{200};
  MetricsOptions metrics;  // the version and host name /metrics names
};

// What a person is told once start() answered: "acco schedule: serving on
// http://127.0.0.1:9478/ (metrics at /metrics), sampling every 200 ms, NVML off". Pure.
[[nodiscard]] std::string serving_line(const RuntimeServerOptions& options, int port,
                                       std::string_view nvml_note);

// Pure: the counters of the runtimes that have ended (`retired`, totals per device index) plus
// the live one's (`current`, null between runtimes) as the sampler's plain value. Totals add up;
// the queue and running gauges are the live runtime's.
[[nodiscard]] analyze::ProcessCounters process_counters(
    const std::vector<sched::RuntimeDeviceCounters>& retired,
    const sched::RuntimeCounters* current);

class RuntimeServer {
 public:
  // Samples the live host and NVML GPUs (when NVML loads) and the runtime it observes, and
  // serves. kUnavailable when the address cannot be bound.
  [[nodiscard]] static Result<std::unique_ptr<RuntimeServer>> start(
      const RuntimeServerOptions& options);
  // Stops serving, then sampling.
  ~RuntimeServer();
  RuntimeServer(const RuntimeServer&) = delete;
  RuntimeServer& operator=(const RuntimeServer&) = delete;
  RuntimeServer(RuntimeServer&&) = delete;
  RuntimeServer& operator=(RuntimeServer&&) = delete;

  // For sched::WorkloadRunOptions::observe: the runtime to poll from now on, or null when it is
  // about to be destroyed (its final counters are kept). Thread-safe.
  void observe(const sched::Runtime* runtime);

  [[nodiscard]] int port() const { return port_; }
  // Whether NVML is sampled: "on", "off" or "unavailable (<why>)".
  [[nodiscard]] const std::string& nvml_note() const { return nvml_note_; }

 private:
  RuntimeServer() = default;
  [[nodiscard]] analyze::ProcessCounters counters() const;

  mutable std::mutex mutex_;  // guards runtime_ and retired_; held while polling the runtime
  const sched::Runtime* runtime_ = nullptr;
  std::vector<sched::RuntimeDeviceCounters> retired_;
  int port_ = 0;
  std::string nvml_note_;
  std::optional<Sources> sources_;  // the sampler's sources read its fs
  std::unique_ptr<Sampler> sampler_;
  std::unique_ptr<Server> server_;  // last: stopped and destroyed first
};

}  // namespace acco::monitor
