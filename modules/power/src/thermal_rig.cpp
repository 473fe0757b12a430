// ThermalRig: simulated devices on a scaled clock whose utilization comes from the kernels run
// on them and whose clocks set how long those kernels take.
#include "acco/power/thermal_rig.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace acco::power {
namespace {

// Kernels re-read their device's clock at least this often (wall seconds).
constexpr double kSliceSeconds = 0.002;
// A device whose clock share is below this still makes progress (the firmware's floor is 0.1).
constexpr double kMinSpeed = 0.05;

double seconds_between(std::chrono::steady_clock::time_point a,
                       std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

Result<std::unique_ptr<ThermalRig>> ThermalRig::create(const ThermalRigOptions& options) {
  if (options.devices < 1) {
    return fail(Errc::kInvalidArgument,
                fmt::format("thermal rig: {} devices: expected at least 1", options.devices));
  }
  if (!(options.time_scale >= 1)) {
    return fail(Errc::kInvalidArgument,
                fmt::format("thermal rig: time scale {}: expected >= 1", options.time_scale));
  }
  return std::unique_ptr<ThermalRig>(new ThermalRig(options));
}

ThermalRig::ThermalRig(const ThermalRigOptions& options)
    : options_(options), start_(Clock::now()), last_(start_) {
  const auto n = static_cast<std::size_t>(options.devices);
  devices_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    devices_.emplace_back(static_cast<int>(i), options.model);
    if (i < options.cooling_factors.size()) {
      devices_.back().set_cooling_factor(options.cooling_factors[i]);
    }
  }
  busy_.resize(n);
  totals_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    totals_[i].max_temperature_celsius = devices_[i].junction_celsius();
  }
}

ThermalRig::~ThermalRig() {
  stop_ticks();
}

void ThermalRig::advance_locked(Clock::time_point now) {
  const double wall = seconds_between(last_, now);
  if (wall <= 0) {
    return;
  }
  const double simulated = wall * options_.time_scale;
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    Busy& b = busy_[i];
    if (b.running > 0) {
      b.busy_wall += seconds_between(b.counted_from, now);
      b.counted_from = now;
    }
    const double utilization = std::clamp(b.busy_wall / wall, 0.0, 1.0);
    b.busy_wall = 0;
    SimulatedDevice& d = devices_[i];
    d.set_load({.utilization = utilization, .activity = options_.activity});
    d.advance(simulated);
    RigDeviceTotals& t = totals_[i];
    t.busy_seconds += utilization * simulated;
    t.max_temperature_celsius = std::max(t.max_temperature_celsius, d.junction_celsius());
    const DeviceSample s = d.sample(0);
    t.lost = d.lost();
    if (!t.lost) {
      t.energy_joules = s.energy_joules.value_or(0);
      t.hw_thermal_seconds = s.throttle_seconds.contains("hw_thermal")
                                 ? s.throttle_seconds.at("hw_thermal")
                                 : t.hw_thermal_seconds;
      t.sw_thermal_seconds = s.throttle_seconds.contains("sw_thermal")
                                 ? s.throttle_seconds.at("sw_thermal")
                                 : t.sw_thermal_seconds;
    }
  }
  last_ = now;
}

Result<std::vector<DeviceSample>> ThermalRig::read() {
  const std::lock_guard lock(mutex_);
  const auto now = Clock::now();
  advance_locked(now);
  const auto stamp =
      static_cast<std::int64_t>(seconds_between(start_, now) * options_.time_scale * 1e9);
  std::vector<DeviceSample> out;
  out.reserve(devices_.size());
  for (const SimulatedDevice& d : devices_) {
    out.push_back(d.sample(stamp));
  }
  return out;
}

bool ThermalRig::run_kernel(int index, double seconds) {
  const auto i = static_cast<std::size_t>(index);
  {
    const std::lock_guard lock(mutex_);
    if (i >= devices_.size() || devices_[i].lost()) {
      return false;
    }
    if (busy_[i].running++ == 0) {
      busy_[i].counted_from = Clock::now();
    }
  }
  double remaining = seconds;
  bool lost = false;
  while (remaining > 0) {
    double speed = 0;
    {
      const std::lock_guard lock(mutex_);
      speed = devices_[i].running_speed_ratio();
      lost = devices_[i].lost();
    }
    if (lost) {
      break;
    }
    speed = std::max(speed, kMinSpeed);
    const double slice = std::min(remaining / speed, kSliceSeconds);
    const auto begin = Clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(slice));
    remaining -= seconds_between(begin, Clock::now()) * speed;
  }
  const std::lock_guard lock(mutex_);
  Busy& b = busy_[i];
  const auto now = Clock::now();
  b.busy_wall += seconds_between(b.counted_from, now);
  b.counted_from = now;
  --b.running;
  return !lost;
}

void ThermalRig::start_ticks(
    double period_seconds, std::function<void(const std::vector<DeviceSample>&, double)> on_tick) {
  stop_ticks();
  {
    const std::lock_guard lock(tick_mutex_);
    stopping_ = false;
  }
  const auto wall_period = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(period_seconds / options_.time_scale));
  ticker_ = std::thread([this, wall_period, on_tick = std::move(on_tick)] {
    auto next = Clock::now() + wall_period;
    for (;;) {
      {
        std::unique_lock lock(tick_mutex_);
        if (tick_cv_.wait_until(lock, next, [this] { return stopping_; })) {
          return;
        }
      }
      next += wall_period;
      auto samples = read();
      if (samples && on_tick) {
        on_tick(*samples, simulated_seconds());
      }
    }
  });
}

void ThermalRig::stop_ticks() {
  {
    const std::lock_guard lock(tick_mutex_);
    stopping_ = true;
  }
  tick_cv_.notify_all();
  if (ticker_.joinable()) {
    ticker_.join();
  }
}

double ThermalRig::simulated_seconds() const {
  const std::lock_guard lock(mutex_);
  return seconds_between(start_, last_) * options_.time_scale;
}

std::vector<RigDeviceTotals> ThermalRig::totals() const {
  const std::lock_guard lock(mutex_);
  return totals_;
}

Status ThermalRig::with_device(int index, const std::function<void(SimulatedDevice&)>& fn) {
  const std::lock_guard lock(mutex_);
  if (index < 0 || index >= static_cast<int>(devices_.size())) {
    return fail(Errc::kNotFound, fmt::format("simulated device {} does not exist (0-{})", index,
                                             static_cast<int>(devices_.size()) - 1));
  }
  fn(devices_[static_cast<std::size_t>(index)]);
  return {};
}

std::unique_ptr<Actuator> ThermalRig::actuator() {
  return make_simulated_actuator(
      [this](int index, const std::function<void(SimulatedDevice&)>& fn) {
        return with_device(index, fn);
      },
      size());
}

}  // namespace acco::power
