#include "acco/power/simulated_device.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "acco/core/clock.hpp"
#include "acco/core/names.hpp"

namespace acco::power {
namespace {

constexpr double kMaxStepSeconds = 0.1;  // a fifth of the junction's time constant (0.8 s)
// SW thermal slowdown moves the clock by this share of its maximum per second.
constexpr double kThermalSlewPerSecond = 0.05;
constexpr double kThermalRecoveryBand = 2;  // degrees below max operating before recovering
constexpr double kMinClockShare = 0.1;      // the lowest clock the "firmware" runs a busy device

}  // namespace

SimulatedDevice::SimulatedDevice(int index, SimulatedModel model)
    : index_(index),
      model_(std::move(model)),
      limit_(model_.power_limit_default_watts),
      // Idle steady state: the idle power across both resistances.
      t_junction_(model_.ambient_celsius +
                  model_.idle_watts * (model_.r_sink_air + model_.r_junction_sink)),
      t_sink_(model_.ambient_celsius + model_.idle_watts * model_.r_sink_air),
      clock_(model_.sm_clock_idle_hertz),
      busy_clock_(model_.sm_clock_max_hertz),
      thermal_clock_cap_(model_.sm_clock_max_hertz),
      power_(model_.idle_watts) {}

void SimulatedDevice::set_load(const SimulatedLoad& load) {
  load_ = load;
}

Status SimulatedDevice::set_power_limit(double watts) {
  if (!(watts >= model_.power_limit_min_watts && watts <= model_.power_limit_max_watts)) {
    return fail(Errc::kInvalidArgument,
                fmt::format("power limit {:.0f} W is outside [{:.0f}, {:.0f}] W", watts,
                            model_.power_limit_min_watts, model_.power_limit_max_watts));
  }
  limit_ = watts;
  return {};
}

void SimulatedDevice::reset_power_limit() {
  limit_ = model_.power_limit_default_watts;
}

void SimulatedDevice::lock_sm_clock(double hertz) {
  locked_clock_ = std::max(0.0, hertz);
}

void SimulatedDevice::set_cooling_factor(double factor) {
  cooling_factor_ = std::max(0.1, factor);
}

void SimulatedDevice::set_temperatures(double junction_celsius, double sink_celsius) {
  t_junction_ = junction_celsius;
  t_sink_ = sink_celsius;
}

void SimulatedDevice::advance(double seconds) {
  while (seconds > 1e-12 && !lost_) {
    const double dt = std::min(seconds, kMaxStepSeconds);
    step(dt);
    seconds -= dt;
  }
}

void SimulatedDevice::step(double dt) {
  const SimulatedModel& m = model_;
  const double u = std::clamp(load_.utilization, 0.0, 1.0);
  const double activity = std::clamp(load_.activity, 0.0, 1.2);
  const double f_max = m.sm_clock_max_hertz;

  double f = u > 0 ? f_max : m.sm_clock_idle_hertz;
  if (locked_clock_ > 0) {
    f = std::min(f, locked_clock_);
  }
  // SW thermal slowdown: the clock ceiling falls while the junction is at or above the max
  // operating temperature and recovers once it is a little below.
  if (t_junction_ >= m.gpu_max_celsius) {
    thermal_clock_cap_ =
        std::max(kMinClockShare * f_max, thermal_clock_cap_ - kThermalSlewPerSecond * f_max * dt);
  } else if (t_junction_ < m.gpu_max_celsius - kThermalRecoveryBand) {
    thermal_clock_cap_ = std::min(f_max, thermal_clock_cap_ + kThermalSlewPerSecond * f_max * dt);
  }
  // The firmware reports SW thermal slowdown for as long as its ceiling holds the clock down,
  // also while the temperature sits in the band between recovery and max operating.
  const bool sw_thermal = thermal_clock_cap_ < f;
  f = std::min(f, thermal_clock_cap_);
  // HW thermal slowdown halves the clock at once.
  const bool hw_thermal = t_junction_ >= m.slowdown_celsius;
  if (hw_thermal) {
    f = std::min(f, f_max / 2);
  }
  // The power limiter acts on the draw while kernels run (the firmware's loop is far faster than
  // the utilization window): the highest clock at which idle + busy dynamic x (f / f_max)^alpha
  // holds the enforced limit. Utilization then scales the average.
  const double busy_dynamic = activity * (m.max_watts - m.idle_watts);
  const double dynamic = u * busy_dynamic;
  const auto power_at = [&](double clock) {
    return m.idle_watts + dynamic * std::pow(clock / f_max, m.dvfs_exponent);
  };
  bool power_capped = false;
  if (dynamic > 0 && m.idle_watts + busy_dynamic * std::pow(f / f_max, m.dvfs_exponent) > limit_) {
    const double headroom = std::max(0.0, limit_ - m.idle_watts);
    const double f_cap = f_max * std::pow(headroom / busy_dynamic, 1.0 / m.dvfs_exponent);
    f = std::max(kMinClockShare * f_max, std::min(f, f_cap));
    power_capped = true;
  }
  clock_ = f;
  power_ = power_at(f);
  if (u > 0) {
    busy_clock_ = f;
  } else {
    // What a kernel starting now would get: the ceilings of the moment, no power cap yet.
    busy_clock_ = locked_clock_ > 0 ? std::min(f_max, locked_clock_) : f_max;
    busy_clock_ = std::min(busy_clock_, thermal_clock_cap_);
    if (hw_thermal) {
      busy_clock_ = std::min(busy_clock_, f_max / 2);
    }
    if (busy_dynamic > 0 && m.idle_watts + busy_dynamic > limit_) {
      const double headroom = std::max(0.0, limit_ - m.idle_watts);
      busy_clock_ = std::max(
          kMinClockShare * f_max,
          std::min(busy_clock_, f_max * std::pow(headroom / busy_dynamic, 1.0 / m.dvfs_exponent)));
    }
  }

  // Two-node RC, explicit Euler.
  const double to_sink = (t_junction_ - t_sink_) / m.r_junction_sink;
  const double to_air = (t_sink_ - m.ambient_celsius) / (m.r_sink_air * cooling_factor_);
  t_junction_ += (power_ - to_sink) / m.c_junction * dt;
  t_sink_ += (to_sink - to_air) / m.c_sink * dt;

  time_ += dt;
  energy_joules_ += power_ * dt;
  power_window_.emplace_back(time_, power_);
  while (!power_window_.empty() && power_window_.front().first <= time_ - 1.0) {
    power_window_.pop_front();
  }
  violation_power_ += power_capped ? dt : 0;
  violation_sw_thermal_ += sw_thermal ? dt : 0;
  violation_hw_thermal_ += hw_thermal ? dt : 0;
  pcie_rx_rate_ = std::clamp(load_.pcie_rx_bytes_per_second, 0.0, m.pcie_peak_bytes_per_second);
  pcie_tx_rate_ = std::clamp(load_.pcie_tx_bytes_per_second, 0.0, m.pcie_peak_bytes_per_second);
  events_ = (u == 0 ? clock_event::kGpuIdle : 0) | (power_capped ? clock_event::kSwPowerCap : 0) |
            (sw_thermal ? clock_event::kSwThermalSlowdown : 0) |
            (hw_thermal ? clock_event::kHwThermalSlowdown : 0);
  if (t_junction_ >= m.shutdown_celsius) {
    lost_ = true;  // the firmware's thermal shutdown: NVML answers GPU_IS_LOST from now on
  }
}

double SimulatedDevice::speed_ratio() const {
  return lost_ ? 0 : clock_ / model_.sm_clock_max_hertz;
}

double SimulatedDevice::running_speed_ratio() const {
  return lost_ ? 0 : busy_clock_ / model_.sm_clock_max_hertz;
}

std::string simulated_uuid(int index) {
  return fmt::format("SIM-{:08x}-0000-4000-8000-{:012x}", 0xacc0U + static_cast<unsigned>(index),
                     static_cast<unsigned>(index));
}

DeviceSample SimulatedDevice::sample(std::int64_t time_unix_nanos) const {
  const SimulatedModel& m = model_;
  DeviceSample s;
  s.device = std::to_string(index_);
  s.uuid = simulated_uuid(index_);
  s.model = m.model;
  s.source = "simulated";
  s.time_unix_nanos = time_unix_nanos;
  if (lost_) {
    s.lost = true;
    return s;
  }
  s.temperature_gpu_celsius = std::round(t_junction_);  // NVML reports whole degrees
  if (m.memory_temperature_supported) {
    s.temperature_memory_celsius = std::round(t_sink_ + m.memory_offset_celsius);
  }
  s.threshold_gpu_max_celsius = m.gpu_max_celsius;
  s.threshold_slowdown_celsius = m.slowdown_celsius;
  s.threshold_shutdown_celsius = m.shutdown_celsius;
  s.threshold_memory_max_celsius = m.memory_max_celsius;
  s.thermal_margin_celsius = std::round(m.gpu_max_celsius - t_junction_);

  // Ampere and later report power as a one-second moving average.
  double sum = 0;
  for (const auto& [age, watts] : power_window_) {
    sum += watts;
  }
  s.power_watts = power_window_.empty() ? power_ : sum / static_cast<double>(power_window_.size());
  s.power_limit_enforced_watts = limit_;
  s.power_limit_requested_watts = limit_;
  s.power_limit_default_watts = m.power_limit_default_watts;
  s.power_limit_min_watts = m.power_limit_min_watts;
  s.power_limit_max_watts = m.power_limit_max_watts;
  s.energy_joules = energy_joules_;

  s.sm_clock_hertz = clock_;
  s.memory_clock_hertz = m.memory_clock_hertz;
  s.sm_clock_max_hertz = m.sm_clock_max_hertz;
  s.memory_clock_max_hertz = m.memory_clock_hertz;
  s.pstate = 0;

  const double u = std::clamp(load_.utilization, 0.0, 1.0);
  s.utilization_ratio = u;
  const double traffic = (pcie_rx_rate_ + pcie_tx_rate_) / m.pcie_peak_bytes_per_second;
  s.memory_utilization_ratio =
      std::min(1.0, 0.6 * u * std::clamp(load_.activity, 0.0, 1.2) + 0.2 * traffic);
  s.memory_total_bytes = m.memory_total_bytes;
  s.memory_used_bytes = std::min(load_.memory_used_bytes, m.memory_total_bytes);
  s.memory_free_bytes = m.memory_total_bytes - *s.memory_used_bytes;

  s.pcie_rx_bytes_per_second = pcie_rx_rate_;
  s.pcie_tx_bytes_per_second = pcie_tx_rate_;
  s.pcie_replays = 0;
  s.pcie_gen_current = 5;
  s.pcie_width_current = 16;
  s.pcie_gen_max = 5;
  s.pcie_width_max = 16;

  s.clock_event_reasons = events_;
  s.throttle_seconds = {{"power", violation_power_},
                        {"thermal", violation_sw_thermal_ + violation_hw_thermal_},
                        {"sw_thermal", violation_sw_thermal_},
                        {"hw_thermal", violation_hw_thermal_}};
  if (m.nvlink_supported) {
    for (int link = 0; link < 18; ++link) {
      s.nvlinks.push_back({link, true, 25e9, 0, 0});
    }
  }
  return s;
}

Result<SimulatedScenario> parse_simulated_scenario(const std::string& text) {
  static constexpr std::array kScenarios = {
      SimulatedScenario::kCycle,           SimulatedScenario::kIdle,
      SimulatedScenario::kCompute,         SimulatedScenario::kTransferBound,
      SimulatedScenario::kThermalThrottle, SimulatedScenario::kPowerCapped};
  if (const auto scenario = core::find_named(text, kScenarios)) {
    return *scenario;
  }
  return fail(Errc::kInvalidArgument, fmt::format("unknown scenario '{}' (expected {})", text,
                                                  core::name_list(kScenarios)));
}

const char* to_string(SimulatedScenario scenario) {
  switch (scenario) {
    case SimulatedScenario::kCycle:
      return "cycle";
    case SimulatedScenario::kIdle:
      return "idle";
    case SimulatedScenario::kCompute:
      return "compute";
    case SimulatedScenario::kTransferBound:
      return "transfer-bound";
    case SimulatedScenario::kThermalThrottle:
      return "thermal-throttle";
    case SimulatedScenario::kPowerCapped:
      return "power-capped";
  }
  return "cycle";
}

namespace {

constexpr double kPhaseSeconds = 30;
constexpr std::uint64_t kGiB = 1ULL << 30;

SimulatedLoad compute_load() {
  return {.utilization = 1,
          .activity = 0.8,
          .pcie_rx_bytes_per_second = 0.5e9,
          .pcie_tx_bytes_per_second = 0.1e9,
          .memory_used_bytes = 60 * kGiB};
}
SimulatedLoad transfer_load() {
  return {.utilization = 0.25,
          .activity = 0.5,
          .pcie_rx_bytes_per_second = 50e9,
          .pcie_tx_bytes_per_second = 5e9,
          .memory_used_bytes = 40 * kGiB};
}

}  // namespace

SimulatedLoad scenario_load(SimulatedScenario scenario, int index, double seconds) {
  switch (scenario) {
    case SimulatedScenario::kIdle:
      return {};
    case SimulatedScenario::kCompute:
      return compute_load();
    case SimulatedScenario::kTransferBound:
      return transfer_load();
    case SimulatedScenario::kThermalThrottle:
    case SimulatedScenario::kPowerCapped: {
      auto load = compute_load();
      load.activity = 1;
      return load;
    }
    case SimulatedScenario::kCycle: {
      const auto phase =
          (static_cast<long long>(std::floor(std::max(0.0, seconds) / kPhaseSeconds)) + index) % 4;
      switch (phase) {
        case 0:
          return {};
        case 1:
          return compute_load();
        case 2:
          return transfer_load();
        default: {
          auto heavy = compute_load();
          heavy.activity = 1.1;
          return heavy;
        }
      }
    }
  }
  return {};
}

SimulatedSource::SimulatedSource(int devices, SimulatedScenario scenario, Clock clock,
                                 const SimulatedModel& model)
    : scenario_(scenario), clock_(clock ? std::move(clock) : Clock(core::now_unix_nanos)) {
  devices_.reserve(static_cast<std::size_t>(std::max(0, devices)));
  for (int i = 0; i < devices; ++i) {
    devices_.emplace_back(i, model);
    SimulatedDevice& d = devices_.back();
    if (scenario == SimulatedScenario::kThermalThrottle) {
      // A failed fan on a device that has been busy for a while: it reaches its max operating
      // temperature within a minute instead of after the heatsink's several minutes.
      d.set_cooling_factor(4);
      d.set_temperatures(82, 80);
    } else if (scenario == SimulatedScenario::kPowerCapped) {
      (void)d.set_power_limit(300);
    }
  }
}

Result<std::vector<DeviceSample>> SimulatedSource::read() {
  const std::lock_guard lock(mutex_);
  const std::int64_t now = clock_();
  if (last_ == 0) {
    start_ = now;
    last_ = now;
  }
  const double elapsed = static_cast<double>(std::max<std::int64_t>(0, now - last_)) / 1e9;
  const double since_start = static_cast<double>(now - start_) / 1e9;
  last_ = now;
  std::vector<DeviceSample> out;
  out.reserve(devices_.size());
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    auto& d = devices_[i];
    d.set_load(scenario_load(scenario_, static_cast<int>(i), since_start - elapsed));
    d.advance(elapsed);
    out.push_back(d.sample(now));
  }
  return out;
}

Status SimulatedSource::with_device(int index, const std::function<void(SimulatedDevice&)>& fn) {
  const std::lock_guard lock(mutex_);
  if (index < 0 || index >= static_cast<int>(devices_.size())) {
    return fail(Errc::kInvalidArgument, fmt::format("simulated device {} does not exist (0-{})",
                                                    index, static_cast<int>(devices_.size()) - 1));
  }
  fn(devices_[static_cast<std::size_t>(index)]);
  return {};
}

}  // namespace acco::power
