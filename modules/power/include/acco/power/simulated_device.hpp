// A simulated accelerator for tests, benchmarks and `--simulate N`: an H100/H200-SXM-class
// device whose temperature follows a two-node RC thermal model, whose power follows its load and
// clock, and whose "firmware" throttles as NVIDIA's does: it lowers the clock to hold the
// enforced power limit (clock event sw_power_cap), slows down gradually at the max operating
// temperature (sw_thermal), halves the clock at the slowdown threshold (hw_thermal) and is lost
// at the shutdown threshold. It reports like NVML: power as a 1-second moving average,
// cumulative energy, violation and byte counters, and optional NOT_SUPPORTED series. Model and
// constants: ../shared/reference/monitoring-power.md, section c (all estimates, uncalibrated).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/power/sample.hpp"
#include "acco/power/sensor_source.hpp"

namespace acco::power {

struct SimulatedModel {
  std::string model = "acco simulated H100-class 700 W";
  double ambient_celsius = 25;
  // Two-node RC: junction (package and HBM) to heatsink to inlet air.
  double r_junction_sink = 0.02;     // K/W
  double c_junction = 40;            // J/K
  double r_sink_air = 0.05;          // K/W at full airflow; a failed fan raises it
  double c_sink = 1600;              // J/K
  double memory_offset_celsius = 9;  // HBM above the heatsink
  double idle_watts = 75;
  double max_watts = 700;  // at utilization 1, activity 1, full clock
  double power_limit_default_watts = 700;
  double power_limit_min_watts = 200;
  double power_limit_max_watts = 700;
  double sm_clock_max_hertz = 1980e6;
  double sm_clock_idle_hertz = 345e6;
  double memory_clock_hertz = 2619e6;
  double dvfs_exponent = 2.5;  // P_dynamic ~ (f / f_max)^alpha
  double gpu_max_celsius = 87;
  double slowdown_celsius = 89;
  double shutdown_celsius = 92;
  double memory_max_celsius = 95;
  std::uint64_t memory_total_bytes = 85520809984;
  double pcie_peak_bytes_per_second = 53.6e9;  // ~85 % of Gen5 x16
  // NVML quirks: series this device answers NOT_SUPPORTED for.
  bool memory_temperature_supported = true;
  bool nvlink_supported = false;
};

// What runs on the device: the share of time a kernel runs, how power-hungry the kernels are
// (1 = a DGEMM at full clock draws max_watts; the same kernel on other data can draw 30 % less),
// and the host traffic it asks for.
struct SimulatedLoad {
  double utilization = 0;               // 0..1
  double activity = 1;                  // 0..1.2
  double pcie_rx_bytes_per_second = 0;  // host to device, asked for
  double pcie_tx_bytes_per_second = 0;  // device to host
  std::uint64_t memory_used_bytes = 0;
  bool operator==(const SimulatedLoad&) const = default;
};

class SimulatedDevice {
 public:
  explicit SimulatedDevice(int index, SimulatedModel model = {});

  void set_load(const SimulatedLoad& load);
  // NVML's rules: kInvalidArgument outside [min, max] (the limit is unchanged).
  [[nodiscard]] Status set_power_limit(double watts);
  void reset_power_limit();
  // Locks the SM clock at or below `hertz` (nvmlDeviceSetGpuLockedClocks' upper bound); 0 unlocks.
  void lock_sm_clock(double hertz);
  // A failed fan or a blocked inlet: multiplies the heatsink-to-air resistance.
  void set_cooling_factor(double factor);
  // Starts the model from these temperatures (a device that has been busy for a while).
  void set_temperatures(double junction_celsius, double sink_celsius);

  // Advances the model by `seconds` of simulated time (in steps of at most 0.1 s).
  void advance(double seconds);
  // What NVML would report now, stamped with `time_unix_nanos`.
  [[nodiscard]] DeviceSample sample(std::int64_t time_unix_nanos) const;

  // The clock the device runs at relative to its maximum: compute-bound work takes 1/ratio as
  // long. 0 when lost.
  [[nodiscard]] double speed_ratio() const;
  // The clock share a kernel runs at on this device now: speed_ratio() while busy; while idle,
  // what the next kernel would start at (the thermal and locked ceilings of the moment).
  [[nodiscard]] double running_speed_ratio() const;
  [[nodiscard]] double junction_celsius() const { return t_junction_; }
  [[nodiscard]] double power_watts() const { return power_; }
  [[nodiscard]] double enforced_limit_watts() const { return limit_; }
  [[nodiscard]] bool lost() const { return lost_; }
  [[nodiscard]] const SimulatedModel& model() const { return model_; }

 private:
  void step(double dt);

  int index_;
  SimulatedModel model_;
  SimulatedLoad load_;
  double limit_;
  double locked_clock_ = 0;
  double cooling_factor_ = 1;
  double t_junction_;
  double t_sink_;
  double clock_;
  double busy_clock_;
  double thermal_clock_cap_;  // SW thermal slowdown lowers this gradually
  double power_ = 0;
  std::deque<std::pair<double, double>> power_window_;  // (age, watts) over the last second
  double energy_joules_ = 0;
  double time_ = 0;
  std::uint64_t events_ = 0;
  double violation_power_ = 0;
  double violation_sw_thermal_ = 0;
  double violation_hw_thermal_ = 0;
  double pcie_rx_rate_ = 0;
  double pcie_tx_rate_ = 0;
  bool lost_ = false;
};

// The uuid device `index` reports: "SIM-0000acc0-0000-4000-8000-000000000000".
[[nodiscard]] std::string simulated_uuid(int index);

// How `--simulate N` drives its devices when nothing else does: each device repeats a cycle of
// idle, compute, transfer-bound and power-heavy phases, device i shifted by i phases, so every
// chart moves. Scenarios for tests and the analyzer's golden recordings hold one state.
enum class SimulatedScenario {
  kCycle,            // the default for serve
  kIdle,             // nothing runs
  kCompute,          // utilization 1, little host traffic
  kTransferBound,    // PCIe near its peak, the device mostly waiting
  kThermalThrottle,  // compute with a failed fan: sw/hw thermal slowdown
  kPowerCapped,      // compute under a 300 W limit: sw_power_cap
};
[[nodiscard]] Result<SimulatedScenario> parse_simulated_scenario(const std::string& text);
[[nodiscard]] const char* to_string(SimulatedScenario scenario);

// The load a scenario gives device `index` at `seconds` since start.
[[nodiscard]] SimulatedLoad scenario_load(SimulatedScenario scenario, int index, double seconds);

// Simulated time for rounds run back to back (`acco power run --fast`, `acco record --fast`): the
// loop moves it on by an interval each round and the simulated devices read it through clock().
// Thread-safe; the clock it hands out must not outlive it.
class SimulatedClock {
 public:
  explicit SimulatedClock(std::int64_t start_unix_nanos) : now_(start_unix_nanos) {}
  [[nodiscard]] std::int64_t now() const { return now_.load(); }
  void advance(std::chrono::nanoseconds by) { now_ += by.count(); }
  // now() as a SimulatedSource::Clock (and a SamplerOptions::clock).
  [[nodiscard]] std::function<std::int64_t()> clock() const {
    return [this] { return now(); };
  }

 private:
  std::atomic<std::int64_t> now_;
};

// A SensorSource over N simulated devices. Each read advances every device by the time since
// the previous read (the first read by nothing) on `clock` (unix nanoseconds; the system clock
// unless given) and applies the scenario's load first. Thread-safe: the governor may set limits
// while the sampler reads.
class SimulatedSource final : public SensorSource {
 public:
  using Clock = std::function<std::int64_t()>;
  SimulatedSource(int devices, SimulatedScenario scenario, Clock clock = {},
                  const SimulatedModel& model = {});

  [[nodiscard]] std::string name() const override { return "simulated"; }
  [[nodiscard]] Result<std::vector<DeviceSample>> read() override;

  // Runs `fn` on device `index` under the source's lock (for the governor and tests).
  [[nodiscard]] Status with_device(int index, const std::function<void(SimulatedDevice&)>& fn);
  [[nodiscard]] int size() const { return static_cast<int>(devices_.size()); }

 private:
  std::mutex mutex_;
  std::vector<SimulatedDevice> devices_;
  SimulatedScenario scenario_;
  Clock clock_;
  std::int64_t start_ = 0;
  std::int64_t last_ = 0;
};

}  // namespace acco::power
