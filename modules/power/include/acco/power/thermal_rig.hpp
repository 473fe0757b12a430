// Simulated devices that run a real workload's kernels: a kernel holds its caller's thread for
// its cost divided by the clock share the device runs at (compute-bound time grows as f falls,
// firmware throttling included), and the device's utilization is the share of time a kernel ran.
// Simulated time runs `time_scale` times faster than the wall clock, so a 70 s thermal time
// constant passes in about a second at 60x and an hour of load fits in a minute; everything a
// governor reads from the rig (samples, their times) is in simulated time.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/power/actuator.hpp"
#include "acco/power/sample.hpp"
#include "acco/power/sensor_source.hpp"
#include "acco/power/simulated_device.hpp"

namespace acco::power {

struct ThermalRigOptions {
  int devices = 4;
  double time_scale = 60;  // simulated seconds per wall second, >= 1
  SimulatedModel model;
  std::vector<double> cooling_factors;  // per device (heatsink-to-air resistance x); missing: 1
  double activity = 1;                  // how power-hungry the kernels are (SimulatedLoad)
};

// Totals per device since the rig started, for benchmarks.
struct RigDeviceTotals {
  double energy_joules = 0;
  double max_temperature_celsius = 0;
  double hw_thermal_seconds = 0;  // simulated seconds with HW thermal slowdown active
  double sw_thermal_seconds = 0;
  double busy_seconds = 0;  // simulated seconds a kernel ran
  bool lost = false;
  bool operator==(const RigDeviceTotals&) const = default;
};

class ThermalRig final : public SensorSource {
 public:
  // kInvalidArgument for devices < 1 or a time scale below 1.
  [[nodiscard]] static Result<std::unique_ptr<ThermalRig>> create(const ThermalRigOptions& options);
  ~ThermalRig() override;
  ThermalRig(const ThermalRig&) = delete;
  ThermalRig& operator=(const ThermalRig&) = delete;
  ThermalRig(ThermalRig&&) = delete;
  ThermalRig& operator=(ThermalRig&&) = delete;

  [[nodiscard]] std::string name() const override { return "simulated"; }
  // Advances every device to now with the utilization its kernels gave it since the previous
  // read, and answers their samples stamped in simulated time (unix nanoseconds from the rig's
  // start at 0). Thread-safe.
  [[nodiscard]] Result<std::vector<DeviceSample>> read() override;

  // Runs `seconds` of work (its wall time at the full clock) on device `index`, holding the
  // calling thread meanwhile. false when the device is lost (the work is not done).
  [[nodiscard]] bool run_kernel(int index, double seconds);

  // Reads every `period_seconds` of simulated time on a thread of the rig and hands the samples
  // and the simulated time to `on_tick` (the governor's loop). stop_ticks() (or the destructor)
  // ends it; on_tick must not call them.
  void start_ticks(double period_seconds,
                   std::function<void(const std::vector<DeviceSample>&, double)> on_tick);
  void stop_ticks();

  [[nodiscard]] double simulated_seconds() const;
  [[nodiscard]] int size() const { return static_cast<int>(devices_.size()); }
  [[nodiscard]] std::vector<RigDeviceTotals> totals() const;
  // Sets limits and clocks on the rig's devices, by the uuid their samples carry.
  [[nodiscard]] std::unique_ptr<Actuator> actuator();

  // Runs `fn` on device `index` under the rig's lock.
  [[nodiscard]] Status with_device(int index, const std::function<void(SimulatedDevice&)>& fn);

 private:
  explicit ThermalRig(const ThermalRigOptions& options);
  using Clock = std::chrono::steady_clock;
  void advance_locked(Clock::time_point now);

  struct Busy {
    int running = 0;
    Clock::time_point counted_from;  // busy time before this is in busy_wall
    double busy_wall = 0;            // seconds since the last advance
  };

  ThermalRigOptions options_;
  mutable std::mutex mutex_;
  std::vector<SimulatedDevice> devices_;
  std::vector<Busy> busy_;
  std::vector<RigDeviceTotals> totals_;
  Clock::time_point start_;
  Clock::time_point last_;

  std::mutex tick_mutex_;
  std::condition_variable tick_cv_;
  bool stopping_ = false;
  std::thread ticker_;
};

// An actuator over simulated devices reached through `with_device` (SimulatedSource's or a
// ThermalRig's), addressed by simulated_uuid(index) for index in [0, count).
[[nodiscard]] std::unique_ptr<Actuator> make_simulated_actuator(
    std::function<Status(int, const std::function<void(SimulatedDevice&)>&)> with_device,
    int count);

}  // namespace acco::power
