// The node daemon's clock: every interval it reads each source, builds a Snapshot, renders its
// Prometheus text once and publishes both, so a scrape only copies a string and never calls a
// sensor. Rounds run on the sampler's own thread; a source that fails is counted and logged,
// and the round goes on with the others. The last rounds' snapshots are kept for the JSON API's
// series.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "acco/analyze/snapshot.hpp"
#include "acco/monitor/metrics.hpp"
#include "acco/power/sensor_source.hpp"

namespace acco::monitor {

struct Published {
  analyze::Snapshot snapshot;
  std::string metrics;  // render_metrics(snapshot)
};

struct SamplerOptions {
  std::chrono::milliseconds interval{1000};
  MetricsOptions metrics = {};
  std::size_t history_rounds = 3600;  // one hour at 1 s
  // Unix nanoseconds stamped on each round; empty: the system clock. Recordings of simulated
  // devices on simulated time pass the same clock to the devices.
  std::function<std::int64_t()> clock = {};
  // Called on the sampler's thread once per round for Snapshot::process (acco's own counters);
  // empty: none. An exception it throws is counted as a read error of source "process".
  std::function<analyze::ProcessCounters()> process_counters = {};
  // Called on the sampler's thread once per round with the devices' samples and the round's
  // time, after the sources are read: the governor's tick (acco serve --governor), which answers
  // Snapshot::governor. An exception is counted as a read error of source "governor".
  std::function<power::GovernorStatus(const std::vector<power::DeviceSample>&, std::int64_t)>
      governor = {};
};

class Sampler {
 public:
  using Observer = std::function<void(const Published&)>;

  Sampler(std::vector<std::unique_ptr<power::SensorSource>> sources,
          std::unique_ptr<power::HostSource> host, SamplerOptions options);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Called on the sampler thread after each round (the event log, the store). Before start().
  void add_observer(Observer observer);
  // Takes one round at once, then one per interval on a thread of its own.
  void start();
  // Ends the thread after the round in progress; idempotent.
  void stop();
  // One round on the calling thread (tests; start() takes the first this way).
  void round();

  // The latest round; null before the first.
  [[nodiscard]] std::shared_ptr<const Published> latest() const;
  // Rounds taken at or after `since_unix_nanos`, oldest first: their snapshots, with an empty
  // `metrics` (the history does not keep the text; latest() has it).
  [[nodiscard]] std::vector<std::shared_ptr<const Published>> since(
      std::int64_t since_unix_nanos) const;
  [[nodiscard]] const SamplerOptions& options() const { return options_; }

 private:
  void loop();

  std::vector<std::unique_ptr<power::SensorSource>> sources_;
  std::unique_ptr<power::HostSource> host_;
  SamplerOptions options_;
  std::vector<Observer> observers_;
  analyze::SamplerStats stats_;  // touched by the round's thread only

  mutable std::mutex mutex_;  // guards latest_, history_, stopping_
  std::condition_variable wake_;
  std::shared_ptr<const Published> latest_;
  std::deque<std::shared_ptr<const Published>> history_;
  bool stopping_ = false;
  std::mutex round_mutex_;  // one round at a time
  std::thread thread_;
};

}  // namespace acco::monitor
