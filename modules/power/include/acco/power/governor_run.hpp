// The governor's loop, in one place for every caller (`acco power run`, `acco serve
// --governor`, `acco schedule --simulate-thermal`, the benchmarks): step the governor on each
// round of samples, apply its actions through the controller, hand each to a log, and keep the
// status that /metrics and `acco power status` show. Thread-safe: the sampler ticks while a
// scrape reads status().
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/power/controller.hpp"
#include "acco/power/governor.hpp"
#include "acco/power/sample.hpp"

namespace acco::power {

class GovernorRun {
 public:
  using Log = std::function<void(const Action&)>;
  GovernorRun(Governor governor, Controller controller, Log log = {});

  // The first round: restores what a crashed run left (Controller::recover), then steps.
  // Errors of recover (a bad state file) are returned and nothing is applied.
  [[nodiscard]] Result<std::vector<Action>> start(const std::vector<DeviceSample>& samples,
                                                  double now_seconds);
  // One round: step, apply, log. Before start(), start() is called.
  [[nodiscard]] std::vector<Action> tick(const std::vector<DeviceSample>& samples,
                                         double now_seconds);
  // The end: the governor's restore actions applied, then anything still changed restored.
  [[nodiscard]] std::vector<Action> finish(const std::vector<DeviceSample>& samples,
                                           double now_seconds);

  [[nodiscard]] GovernorStatus status() const;

 private:
  void log_all(const std::vector<Action>& actions);

  mutable std::mutex mutex_;
  Governor governor_;
  Controller controller_;
  Log log_;
  bool started_ = false;
  bool finished_ = false;
};

}  // namespace acco::power
