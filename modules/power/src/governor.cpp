// Governor::step: per-device states with hysteresis and dwell, the warm PI loop, load-following
// and energy-sweep caps while cool, and scheduler weights from temperature headroom.
#include "acco/power/governor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

namespace acco::power {

const char* to_string(GovernorState state) {
  switch (state) {
    case GovernorState::kNormal:
      return "normal";
    case GovernorState::kWarm:
      return "warm";
    case GovernorState::kHot:
      return "hot";
    case GovernorState::kDraining:
      return "draining";
  }
  return "normal";
}

const char* to_string(ActionKind kind) {
  switch (kind) {
    case ActionKind::kSetPowerLimit:
      return "set_power_limit";
    case ActionKind::kLockClocks:
      return "lock_clocks";
    case ActionKind::kUnlockClocks:
      return "unlock_clocks";
    case ActionKind::kSetWeight:
      return "set_weight";
    case ActionKind::kNoNewWork:
      return "no_new_work";
    case ActionKind::kDrain:
      return "drain";
    case ActionKind::kRestore:
      return "restore";
    case ActionKind::kLog:
      return "log";
  }
  return "log";
}

const std::vector<ActionKind>& all_action_kinds() {
  static const std::vector<ActionKind> kinds = {ActionKind::kSetPowerLimit, ActionKind::kLockClocks,
                                                ActionKind::kUnlockClocks,  ActionKind::kSetWeight,
                                                ActionKind::kNoNewWork,     ActionKind::kDrain,
                                                ActionKind::kRestore,       ActionKind::kLog};
  return kinds;
}

Status check_cap(const GovernorOptions& options, const std::vector<DeviceSample>& samples) {
  if (options.mode != GovernorMode::kCap) {
    return {};
  }
  std::optional<double> lowest;   // the smallest minimum
  std::optional<double> highest;  // the largest maximum
  for (const DeviceSample& s : samples) {
    if (s.power_limit_min_watts) {
      lowest = std::min(lowest.value_or(*s.power_limit_min_watts), *s.power_limit_min_watts);
    }
    if (s.power_limit_max_watts) {
      highest = std::max(highest.value_or(*s.power_limit_max_watts), *s.power_limit_max_watts);
    }
  }
  const auto range = [&] {
    return lowest && highest ? fmt::format("{:g} W to {:g} W", *lowest, *highest)
           : highest         ? fmt::format("at most {:g} W", *highest)
                             : fmt::format("at least {:g} W", *lowest);
  };
  if (highest && options.cap_watts > *highest) {
    return fail(Errc::kInvalidArgument,
                fmt::format("cap:{:g} is above every device's maximum power limit (the devices "
                            "accept {})",
                            options.cap_watts, range()));
  }
  if (lowest && options.cap_watts < *lowest) {
    return fail(Errc::kInvalidArgument,
                fmt::format("cap:{:g} is below every device's minimum power limit (the devices "
                            "accept {})",
                            options.cap_watts, range()));
  }
  return {};
}

Status parse_governor_mode(const std::string& text, GovernorOptions& options) {
  if (text == "thermal") {
    options.mode = GovernorMode::kThermal;
    return {};
  }
  if (text == "energy") {
    options.mode = GovernorMode::kEnergy;
    return {};
  }
  if (text.starts_with("cap:")) {
    const std::string number = text.substr(4);
    std::size_t used = 0;
    double watts = 0;
    try {
      watts = std::stod(number, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == number.size() && used > 0 && std::isfinite(watts) && watts > 0) {
      options.mode = GovernorMode::kCap;
      options.cap_watts = watts;
      return {};
    }
  }
  return fail(
      Errc::kInvalidArgument,
      fmt::format("governor mode '{}': expected thermal, energy or cap:W (watts > 0)", text));
}

std::string mode_string(const GovernorOptions& options) {
  switch (options.mode) {
    case GovernorMode::kThermal:
      return "thermal";
    case GovernorMode::kEnergy:
      return "energy";
    case GovernorMode::kCap:
      return fmt::format("cap:{:g}", options.cap_watts);
  }
  return "thermal";
}

namespace {

constexpr double kLimitEpsilonWatts = 1;     // smaller changes are not worth an NVML call
constexpr double kKeepUpUtilization = 0.85;  // a device below this had idle time between tasks
constexpr double kKeptUpTolerance = 0.1;     // work rates of kept-up points differ by noise only
constexpr double kTimeEpsilon = 1e-9;

struct EnergyPoint {
  double share = 0;  // of each device's default limit
  double joules_per_work = 0;
  double work_rate = 0;  // nominal seconds of work per second
  double utilization = 0;
};

enum class SweepPhase {
  kNotStarted,
  kSettling,
  kMeasuring,
  kChosen
};

}  // namespace

// One sweep for every cool device together: they run the same work stream, and a scheduler moves
// work between them, so only their sum says what a cap costs.
struct Governor::Sweep {
  SweepPhase phase = SweepPhase::kNotStarted;
  std::size_t point = 0;
  double phase_start = 0;
  std::optional<double> last_decision;
  double busy_seconds = 0;  // mean utilization x dt over the point
  std::vector<EnergyPoint> points;
  std::optional<double> share;  // what the cool devices run at now
  std::string reason;
  std::optional<double> chosen_share;
  double chosen_utilization = 0;
  double utilization_average = 0;  // exponentially weighted, time constant point_seconds
};

namespace {

double clamp_limit(double watts, double lo, double hi) {
  return std::clamp(watts, lo, std::max(lo, hi));
}

}  // namespace

struct Governor::Control {
  std::string device;
  std::string uuid;
  GovernorState state = GovernorState::kNormal;
  int warm_count = 0;
  std::optional<double> exit_since;  // since when the state's exit condition holds
  std::optional<double> last_decision;
  std::optional<double> limit;  // the limit asked for last (or found at the first sample)
  double pi_base = 0;
  double integral = 0;
  double weight = 1;
  bool no_new_work = false;
  bool drained = false;
  bool clocks_locked = false;
  bool lost = false;
  bool changed = false;  // a limit or clock action was issued
  std::optional<double> at_min_since;
  double temperature_at_min = 0;
  bool no_thermal_logged = false;
  // Work done, in nominal seconds (utilization x clock ratio integrated), and energy.
  std::optional<double> last_time;
  double last_utilization = 0;
  double last_speed = 1;
  double last_power = 0;
  double work = 0;
  double integrated_energy = 0;
  double energy = 0;         // the latest reading (or the integral)
  double default_watts = 0;  // the latest default limit
  bool sweepable = false;    // cool, controllable and read in this step
  bool in_point = false;     // measured since the point started
  double point_energy0 = 0;
  double point_work0 = 0;
};

namespace {

// Reads of one sample with the numbers every action quotes.
struct Reading {
  const DeviceSample* sample = nullptr;
  std::optional<double> temperature;
  std::optional<double> t_max;
  double t_slow = 0;
  std::optional<double> min_w;
  std::optional<double> max_w;
  std::optional<double> default_w;
  double utilization = 0;
  std::uint64_t reasons = 0;

  [[nodiscard]] bool can_limit() const { return min_w && max_w && default_w; }
};

Reading read(const DeviceSample& s) {
  Reading r;
  r.sample = &s;
  r.temperature = s.temperature_gpu_celsius;
  r.t_max = s.threshold_gpu_max_celsius;
  if (r.t_max) {
    r.t_slow = s.threshold_slowdown_celsius.value_or(*r.t_max + 2);
  }
  r.min_w = s.power_limit_min_watts;
  r.max_w = s.power_limit_max_watts;
  r.default_w = s.power_limit_default_watts;
  r.utilization = std::clamp(s.utilization_ratio.value_or(0), 0.0, 1.0);
  r.reasons = s.clock_event_reasons.value_or(0);
  return r;
}

}  // namespace

std::optional<GovernorState> thermal_state(const DeviceSample& s, const GovernorOptions& o) {
  if (!s.temperature_gpu_celsius || !s.threshold_gpu_max_celsius) {
    return std::nullopt;
  }
  const double t = *s.temperature_gpu_celsius;
  const double t_max = *s.threshold_gpu_max_celsius;
  const double t_slow = s.threshold_slowdown_celsius.value_or(t_max + 2);
  const std::uint64_t reasons = s.clock_event_reasons.value_or(0);
  if (t >= t_slow - o.drain_enter_below_slowdown ||
      (reasons & clock_event::kHwThermalSlowdown) != 0) {
    return GovernorState::kDraining;
  }
  if (t >= t_max - o.hot_enter_below_max || (reasons & clock_event::kSwThermalSlowdown) != 0) {
    return GovernorState::kHot;
  }
  if (t >= t_max - o.warm_enter_below_max) {
    return GovernorState::kWarm;
  }
  return GovernorState::kNormal;
}

Governor::Governor(GovernorOptions options)
    : options_(std::move(options)), sweep_(std::make_unique<Sweep>()) {}
Governor::~Governor() = default;
Governor::Governor(Governor&&) noexcept = default;
Governor& Governor::operator=(Governor&&) noexcept = default;

std::vector<GovernorDevice> Governor::devices() const {
  std::vector<GovernorDevice> out;
  for (const auto& control : controls_) {
    const Control& c = *control;
    out.push_back(
        {.device = c.device,
         .uuid = c.uuid,
         .state = c.state,
         .limit_watts = c.limit,
         .weight = c.weight,
         .no_new_work = c.no_new_work,
         .drained = c.drained,
         .clocks_locked = c.clocks_locked,
         .lost = c.lost,
         .energy_cap_watts = sweep_->chosen_share
                                 ? std::optional<double>(*sweep_->chosen_share * c.default_watts)
                                 : std::nullopt});
  }
  return out;
}

namespace {

class StepWriter {
 public:
  StepWriter(const GovernorOptions& options, Governor::Control& c, const Reading& r, double now,
             std::vector<Action>& out)
      : o_(options), c_(c), r_(r), now_(now), out_(out) {}

  void emit(ActionKind kind, double value, std::string reason) {
    Action a;
    a.time_seconds = now_;
    a.device = c_.device;
    a.uuid = c_.uuid;
    a.kind = kind;
    a.value = value;
    a.state = c_.state;
    a.reason = std::move(reason);
    const DeviceSample& s = *r_.sample;
    if (r_.temperature) {
      a.numbers.emplace_back("temperature_celsius", *r_.temperature);
    }
    if (r_.t_max) {
      a.numbers.emplace_back("t_max_celsius", *r_.t_max);
    }
    if (s.power_watts) {
      a.numbers.emplace_back("power_watts", *s.power_watts);
    }
    if (c_.limit) {
      a.numbers.emplace_back("limit_watts", *c_.limit);
    }
    a.numbers.emplace_back("utilization_ratio", r_.utilization);
    for (auto& extra : extra_) {
      a.numbers.push_back(std::move(extra));
    }
    extra_.clear();
    out_.push_back(std::move(a));
  }

  void number(std::string name, double value) { extra_.emplace_back(std::move(name), value); }

  // Asks for `watts` (clamped to the device's range) when it differs from the current limit.
  void set_limit(double watts, const std::string& reason) {
    if (!r_.can_limit()) {
      return;
    }
    const double target = clamp_limit(watts, *r_.min_w, *r_.max_w);
    if (c_.limit && std::abs(*c_.limit - target) < kLimitEpsilonWatts) {
      return;
    }
    number("previous_limit_watts", c_.limit.value_or(0));
    c_.limit = target;
    c_.changed = true;
    emit(ActionKind::kSetPowerLimit, target, reason);
  }

  void set_no_new_work(bool on, const std::string& reason) {
    if (c_.no_new_work != on) {
      c_.no_new_work = on;
      emit(ActionKind::kNoNewWork, on ? 1 : 0, reason);
    }
  }

  void set_drained(bool on, const std::string& reason) {
    if (c_.drained != on) {
      c_.drained = on;
      emit(ActionKind::kDrain, on ? 1 : 0, reason);
    }
  }

  void lock_clocks(const std::string& reason) {
    const auto& max_clock = r_.sample->sm_clock_max_hertz;
    if (c_.clocks_locked || o_.drain_clock_share <= 0 || !max_clock) {
      return;
    }
    c_.clocks_locked = true;
    c_.changed = true;
    emit(ActionKind::kLockClocks, std::round(*max_clock * o_.drain_clock_share / 1e6) * 1e6,
         reason);
  }

  void unlock_clocks(const std::string& reason) {
    if (c_.clocks_locked) {
      c_.clocks_locked = false;
      emit(ActionKind::kUnlockClocks, 0, reason);
    }
  }

 private:
  const GovernorOptions& o_;
  Governor::Control& c_;
  const Reading& r_;
  double now_;
  std::vector<Action>& out_;
  std::vector<std::pair<std::string, double>> extra_;
};

// The limit a cool device runs at in each mode (energy: the share the sweep runs at).
double cool_ceiling(const GovernorOptions& o, const std::optional<double>& energy_share,
                    const Reading& r) {
  switch (o.mode) {
    case GovernorMode::kCap:
      return clamp_limit(o.cap_watts, *r.min_w, *r.max_w);
    case GovernorMode::kEnergy:
      return clamp_limit(energy_share.value_or(1.0) * *r.default_w, *r.min_w, *r.max_w);
    case GovernorMode::kThermal:
      return *r.default_w;
  }
  return *r.default_w;
}

// The dwell rule: true once `holds` has been true continuously for `seconds`.
bool held(Governor::Control& c, bool holds, double seconds, double now) {
  if (!holds) {
    c.exit_since.reset();
    return false;
  }
  if (!c.exit_since) {
    c.exit_since = now;
  }
  return now - *c.exit_since + kTimeEpsilon >= seconds;
}

// Work (utilization x clock ratio) and energy since the previous sample.
void account(Governor::Control& c, const DeviceSample& s, const Reading& r, double now) {
  if (c.last_time) {
    const double dt = std::max(0.0, now - *c.last_time);
    c.work += c.last_utilization * c.last_speed * dt;
    c.integrated_energy += c.last_power * dt;
  }
  c.last_time = now;
  c.last_utilization = r.utilization;
  if (r.utilization > 0 && s.sm_clock_hertz && s.sm_clock_max_hertz && *s.sm_clock_max_hertz > 0) {
    c.last_speed = std::clamp(*s.sm_clock_hertz / *s.sm_clock_max_hertz, 0.0, 1.0);
  }
  c.last_power = s.power_watts.value_or(c.last_power);
  c.energy = s.energy_joules.value_or(c.integrated_energy);
  c.default_watts = s.power_limit_default_watts.value_or(c.default_watts);
}

// The state the device moves to (its own when none), and why.
std::pair<GovernorState, std::string> next_state(const GovernorOptions& o, Governor::Control& c,
                                                 const Reading& r, double now) {
  const double t = *r.temperature;
  const double t_max = *r.t_max;
  const GovernorState from = c.state;
  GovernorState to = from;
  std::string why;
  const bool hw = (r.reasons & clock_event::kHwThermalSlowdown) != 0;
  const bool sw = (r.reasons & clock_event::kSwThermalSlowdown) != 0;
  std::string drain_why;
  if (t >= r.t_slow - o.drain_enter_below_slowdown) {
    drain_why = fmt::format("T {:.0f} C >= {:.0f} C (T_slowdown {:.0f} - {:g})", t,
                            r.t_slow - o.drain_enter_below_slowdown, r.t_slow,
                            o.drain_enter_below_slowdown);
  } else if (hw) {
    drain_why = fmt::format("HW thermal slowdown active at T {:.0f} C", t);
  } else if (from == GovernorState::kHot && c.at_min_since &&
             now - *c.at_min_since + kTimeEpsilon >= o.drain_rising_seconds &&
             t > c.temperature_at_min) {
    drain_why = fmt::format("T {:.0f} C still above {:.0f} C after {:.0f} s at the minimum limit",
                            t, c.temperature_at_min, now - *c.at_min_since);
  }
  std::string hot_why;
  if (t >= t_max - o.hot_enter_below_max) {
    hot_why = fmt::format("T {:.0f} C >= {:.0f} C (T_max {:.0f} - {:g})", t,
                          t_max - o.hot_enter_below_max, t_max, o.hot_enter_below_max);
  } else if (sw) {
    hot_why = fmt::format("SW thermal slowdown active at T {:.0f} C", t);
  }
  switch (from) {
    case GovernorState::kNormal:
      if (!drain_why.empty()) {
        to = GovernorState::kDraining;
        why = drain_why;
      } else if (!hot_why.empty()) {
        to = GovernorState::kHot;
        why = hot_why;
      } else {
        c.warm_count = t >= t_max - o.warm_enter_below_max ? c.warm_count + 1 : 0;
        if (c.warm_count >= o.warm_enter_samples) {
          to = GovernorState::kWarm;
          why = fmt::format("T {:.0f} C >= {:.0f} C (T_max {:.0f} - {:g}) for {} samples", t,
                            t_max - o.warm_enter_below_max, t_max, o.warm_enter_below_max,
                            c.warm_count);
        }
      }
      break;
    case GovernorState::kWarm:
      if (!drain_why.empty()) {
        to = GovernorState::kDraining;
        why = drain_why;
      } else if (!hot_why.empty()) {
        to = GovernorState::kHot;
        why = hot_why;
      } else if (held(c, t <= t_max - o.warm_exit_below_max, o.warm_exit_dwell_seconds, now)) {
        to = GovernorState::kNormal;
        why = fmt::format("T {:.0f} C <= {:.0f} C (T_max {:.0f} - {:g}) for {:.0f} s", t,
                          t_max - o.warm_exit_below_max, t_max, o.warm_exit_below_max,
                          now - *c.exit_since);
      }
      break;
    case GovernorState::kHot:
      if (!drain_why.empty()) {
        to = GovernorState::kDraining;
        why = drain_why;
      } else if (held(c, t <= t_max - o.hot_exit_below_max, o.hot_exit_dwell_seconds, now)) {
        to = GovernorState::kWarm;
        why = fmt::format("T {:.0f} C <= {:.0f} C (T_max {:.0f} - {:g}) for {:.0f} s", t,
                          t_max - o.hot_exit_below_max, t_max, o.hot_exit_below_max,
                          now - *c.exit_since);
      }
      break;
    case GovernorState::kDraining:
      if (held(c, t <= t_max - o.drain_exit_below_max, o.drain_exit_dwell_seconds, now)) {
        to = GovernorState::kWarm;
        why = fmt::format("T {:.0f} C <= {:.0f} C (T_max {:.0f} - {:g}) for {:.0f} s", t,
                          t_max - o.drain_exit_below_max, t_max, o.drain_exit_below_max,
                          now - *c.exit_since);
      }
      break;
  }

  return {to, why};
}

// What entering `to` from `from` does: the state's limit, the scheduler, clocks.
void enter_state(Governor::Control& c, const Reading& r, const DeviceSample& s, StepWriter& w,
                 GovernorState from, GovernorState to, const std::string& why) {
  c.state = to;
  c.exit_since.reset();
  c.warm_count = 0;
  const std::string reason = fmt::format("{} -> {}: {}", to_string(from), to_string(to), why);
  w.emit(ActionKind::kLog, 0, reason);
  if (from == GovernorState::kDraining) {
    w.set_drained(false, reason);
    w.unlock_clocks(reason);
  }
  if (to == GovernorState::kNormal || to == GovernorState::kWarm) {
    w.set_no_new_work(false, reason);
    c.at_min_since.reset();
  }
  if (to == GovernorState::kWarm) {
    // Bumpless: the loop starts from the lower of the current limit and the power drawn.
    const double drawn = s.power_watts.value_or(c.limit.value_or(0));
    c.pi_base = c.limit ? std::min(*c.limit, std::max(drawn, r.min_w.value_or(0))) : drawn;
    c.integral = 0;
  }
  if (to == GovernorState::kHot || to == GovernorState::kDraining) {
    if (r.can_limit()) {
      w.set_limit(*r.min_w, reason);
    }
    w.set_no_new_work(true, reason);
  }
  if (to == GovernorState::kDraining) {
    w.set_drained(true, reason);
    w.lock_clocks(reason);
  }
  c.in_point = false;  // a device that left cool is out of the point being measured
}

// Warm: the PI loop on the power limit; hot: when the limit reached its minimum.
void hold_limit(const GovernorOptions& o, Governor::Control& c, const Reading& r, double ceiling,
                double dt, double now, StepWriter& w) {
  const double t = *r.temperature;
  const double t_max = *r.t_max;
  if (c.state == GovernorState::kWarm && r.can_limit()) {
    const double target_t = t_max - o.target_below_max;
    const double e = target_t - t;
    const double hi = ceiling;
    const double lo = *r.min_w;
    const double raw = c.pi_base + o.kp_watts_per_kelvin * e +
                       o.ki_watts_per_kelvin_second * (c.integral + e * dt);
    double next = clamp_limit(raw, lo, hi);
    const double current = c.limit.value_or(hi);
    const double step_max = o.slew_watts_per_second * dt;
    const bool slewed = std::abs(next - current) > step_max;
    if (slewed) {
      next = current + std::copysign(step_max, next - current);
    }
    // Anti-windup: integrate only while the output is free to follow.
    const bool saturated = (raw > hi && e > 0) || (raw < lo && e < 0) || slewed;
    if (!saturated) {
      c.integral += e * dt;
    }
    w.number("target_celsius", target_t);
    w.number("error_kelvin", e);
    const bool at_bound = next == lo || next == hi;
    if (std::abs(next - current) >= o.pi_dead_band_watts || (at_bound && next != current)) {
      w.set_limit(next, fmt::format("warm: PI on T {:.0f} C toward {:.0f} C", t, target_t));
    }
  }
  if (c.state == GovernorState::kHot && r.can_limit() && c.limit &&
      std::abs(*c.limit - *r.min_w) < kLimitEpsilonWatts) {
    if (!c.at_min_since) {
      c.at_min_since = now;
      c.temperature_at_min = t;
    }
  }
}

// The scheduler weight from the temperature headroom, published when it moved enough.
void publish_weight(const GovernorOptions& o, Governor::Control& c, const Reading& r,
                    StepWriter& w) {
  const double t = *r.temperature;
  const double t_max = *r.t_max;
  const double t_start = t_max - o.warm_enter_below_max - o.weight_band_kelvin;
  const double t_hot = t_max - o.hot_enter_below_max;
  double weight = 1;
  if (c.state == GovernorState::kHot || c.state == GovernorState::kDraining) {
    weight = o.min_weight;
  } else if (t_hot > t_start) {
    weight = 1 - (1 - o.min_weight) * std::clamp((t - t_start) / (t_hot - t_start), 0.0, 1.0);
  }
  weight = std::round(weight * 100) / 100;
  const bool moved = std::abs(weight - c.weight) + kTimeEpsilon >= o.weight_step;
  const bool to_bound = weight != c.weight && (weight == 1 || weight == o.min_weight);
  if (moved || to_bound) {
    w.number("previous_weight", c.weight);
    c.weight = weight;
    w.emit(ActionKind::kSetWeight, weight,
           fmt::format("headroom: T {:.0f} C, {:.0f} K below the hot threshold {:.0f} C", t,
                       t_hot - t, t_hot));
  }
}

// A cool device: the mode's limit (energy: the sweep's share, set by energy_round).
void cool_limit(const GovernorOptions& o, Governor::Control& c, const Reading& r, double ceiling,
                const std::string& energy_reason, double dt, StepWriter& w) {
  if (o.mode == GovernorMode::kCap) {
    w.set_limit(ceiling, fmt::format("cap mode: {:.0f} W", ceiling));
    return;
  }
  if (o.mode == GovernorMode::kThermal) {
    if (!o.load_following) {
      w.set_limit(ceiling, "cool: the default limit");
      return;
    }
    const double floor = o.follow_floor_share * *r.default_w;
    const double target = floor + (ceiling - floor) * r.utilization;
    const double current = c.limit.value_or(ceiling);
    if (std::abs(target - current) > o.follow_dead_band_share * *r.default_w) {
      const double step_max = o.slew_watts_per_second * dt;
      const double next = current + std::clamp(target - current, -step_max, step_max);
      w.number("target_watts", target);
      w.set_limit(next, fmt::format("load following: utilization {:.0f} % -> {:.0f} W",
                                    r.utilization * 100, target));
    }
    return;
  }

  // Energy mode: the share the sweep runs at (energy_round decides it for every device).
  c.sweepable = true;
  w.set_limit(ceiling, energy_reason.empty() ? "energy: the default limit" : energy_reason);
}

}  // namespace

std::vector<Action> Governor::step(const std::vector<DeviceSample>& samples, double now) {
  std::vector<Action> out;
  const GovernorOptions& o = options_;
  for (const auto& control : controls_) {
    control->sweepable = false;
  }
  for (const DeviceSample& s : samples) {
    if (s.suspended || s.uuid.empty()) {
      continue;
    }
    auto [it, inserted] = index_.try_emplace(s.uuid, controls_.size());
    if (inserted) {
      controls_.push_back(std::make_unique<Control>());
      controls_.back()->device = s.device;
      controls_.back()->uuid = s.uuid;
    }
    Control& c = *controls_[it->second];
    const Reading r = read(s);
    StepWriter w(o, c, r, now, out);

    if (s.lost) {
      if (!c.lost) {
        c.lost = true;
        w.emit(ActionKind::kLog, 0, "device lost: it answers nothing; its work moves elsewhere");
        w.set_drained(true, "device lost");
      }
      continue;
    }
    if (!c.limit) {
      if (s.power_limit_requested_watts) {
        c.limit = *s.power_limit_requested_watts;
      } else if (s.power_limit_enforced_watts) {
        c.limit = *s.power_limit_enforced_watts;
      }
    }

    account(c, s, r, now);

    if (c.last_decision && now - *c.last_decision + kTimeEpsilon < o.period_seconds) {
      continue;
    }
    const double dt = c.last_decision ? now - *c.last_decision : o.period_seconds;
    c.last_decision = now;

    // Thermal states.
    const bool thermal = r.temperature && r.t_max;
    if (!thermal && !c.no_thermal_logged) {
      c.no_thermal_logged = true;
      w.emit(ActionKind::kLog, 0,
             "no temperature or max operating threshold reported: thermal rules are off");
    }
    if (thermal) {
      const auto [to, why] = next_state(o, c, r, now);
      const GovernorState from = c.state;
      if (to != from) {
        enter_state(c, r, s, w, from, to, why);
      }
      hold_limit(o, c, r, cool_ceiling(o, sweep_->share, r), dt, now, w);
      publish_weight(o, c, r, w);
    }
    if (c.state != GovernorState::kNormal || !r.can_limit()) {
      continue;
    }

    cool_limit(o, c, r, cool_ceiling(o, sweep_->share, r), sweep_->reason, dt, w);
  }
  if (o.mode == GovernorMode::kEnergy) {
    energy_round(now, out);
  }
  return out;
}

void Governor::energy_round(double now, std::vector<Action>& out) {
  const GovernorOptions& o = options_;
  Sweep& sw = *sweep_;
  if (sw.last_decision && now - *sw.last_decision + kTimeEpsilon < o.period_seconds) {
    return;
  }
  const double dt = sw.last_decision ? now - *sw.last_decision : o.period_seconds;
  sw.last_decision = now;
  std::vector<Control*> cool;
  double utilization = 0;
  for (const auto& control : controls_) {
    if (control->sweepable) {
      cool.push_back(control.get());
      utilization += control->last_utilization;
    }
  }
  if (cool.empty() || o.energy_cap_shares.empty()) {
    return;
  }
  utilization /= static_cast<double>(cool.size());
  const auto log = [&](std::string reason) {
    Action a;
    a.time_seconds = now;
    a.kind = ActionKind::kLog;
    a.reason = std::move(reason);
    a.numbers = {{"utilization_ratio", utilization}, {"devices", static_cast<double>(cool.size())}};
    out.push_back(std::move(a));
  };
  const auto start_point = [&](std::size_t i) {
    sw.point = i;
    sw.phase = SweepPhase::kSettling;
    sw.phase_start = now;
    sw.share = o.energy_cap_shares.at(i);
    sw.reason = fmt::format("energy: measuring {:.0f} % of the default limit ({} of {})",
                            *sw.share * 100, i + 1, o.energy_cap_shares.size());
  };
  const double alpha = std::min(1.0, dt / std::max(o.energy_point_seconds, kTimeEpsilon));
  sw.utilization_average += alpha * (utilization - sw.utilization_average);
  const bool busy = utilization >= o.energy_busy_utilization;
  switch (sw.phase) {
    case SweepPhase::kNotStarted:
      if (busy) {
        sw.points.clear();
        start_point(0);
      }
      break;
    case SweepPhase::kSettling:
      if (now - sw.phase_start + kTimeEpsilon >= o.energy_settle_seconds) {
        sw.phase = SweepPhase::kMeasuring;
        sw.phase_start = now;
        sw.busy_seconds = 0;
        for (Control* c : cool) {
          c->in_point = true;
          c->point_energy0 = c->energy;
          c->point_work0 = c->work;
        }
      }
      break;
    case SweepPhase::kMeasuring: {
      sw.busy_seconds += utilization * dt;
      const double span = now - sw.phase_start;
      if (span + kTimeEpsilon < o.energy_point_seconds) {
        break;
      }
      double work = 0;
      double joules = 0;
      for (Control* c : cool) {
        if (c->in_point) {
          work += c->work - c->point_work0;
          joules += c->energy - c->point_energy0;
        }
        c->in_point = false;
      }
      const double util = sw.busy_seconds / std::max(span, kTimeEpsilon);
      if (work <= 0 || util < o.energy_busy_utilization) {
        start_point(sw.point);  // idle meanwhile: measure this cap again
        break;
      }
      sw.points.push_back({.share = *sw.share,
                           .joules_per_work = joules / work,
                           .work_rate = work / span,
                           .utilization = util});
      if (sw.point + 1 < o.energy_cap_shares.size()) {
        start_point(sw.point + 1);
        break;
      }
      const EnergyPoint& ref = sw.points.front();
      const EnergyPoint* best = &ref;
      for (const EnergyPoint& p : sw.points) {
        const bool fast_enough = p.work_rate >= (1 - o.energy_max_slowdown) * ref.work_rate;
        // Both had idle time: the work rate is the arrival rate, equal up to noise.
        const bool kept_up = p.utilization <= kKeepUpUtilization &&
                             ref.utilization <= kKeepUpUtilization &&
                             p.work_rate >= (1 - kKeptUpTolerance) * ref.work_rate;
        if ((fast_enough || kept_up) && p.joules_per_work < best->joules_per_work) {
          best = &p;
        }
      }
      std::string tried;
      for (const EnergyPoint& p : sw.points) {
        tried += fmt::format("{}{:.0f} %: {:.2f} J/work, {:.0f} % busy", tried.empty() ? "" : "; ",
                             p.share * 100, p.joules_per_work, p.utilization * 100);
      }
      sw.phase = SweepPhase::kChosen;
      sw.chosen_share = best->share;
      sw.share = best->share;
      sw.chosen_utilization = best->utilization;
      sw.utilization_average = best->utilization;
      sw.reason = fmt::format(
          "energy: {:.0f} % of the default limit uses {:.1f} % less energy per unit of work than "
          "{:.0f} % at {:.1f} % of its work rate",
          best->share * 100, 100 * (1 - best->joules_per_work / ref.joules_per_work),
          ref.share * 100, 100 * best->work_rate / ref.work_rate);
      log(fmt::format("energy: sweep done over {} device(s): {}; chosen {:.0f} %", cool.size(),
                      tried, best->share * 100));
      break;
    }
    case SweepPhase::kChosen:
      if (busy &&
          std::abs(sw.utilization_average - sw.chosen_utilization) > o.energy_recheck_utilization) {
        log(fmt::format("energy: utilization moved from {:.0f} % to {:.0f} %: sweeping again",
                        sw.chosen_utilization * 100, sw.utilization_average * 100));
        sw.chosen_share.reset();
        sw.points.clear();
        start_point(0);
      }
      break;
  }
}

std::vector<Action> Governor::finish(double now) {
  std::vector<Action> out;
  for (const auto& control : controls_) {
    Control& c = *control;
    const DeviceSample none;
    const Reading r = read(none);
    StepWriter w(options_, c, r, now, out);
    const std::string reason = "governor stopping";
    if (c.changed) {
      c.changed = false;
      c.clocks_locked = false;
      c.limit.reset();
      w.emit(ActionKind::kRestore, 0, reason);
    }
    if (!c.lost) {
      w.set_drained(false, reason);
    }
    w.set_no_new_work(false, reason);
    if (c.weight != 1) {
      c.weight = 1;
      w.emit(ActionKind::kSetWeight, 1, reason);
    }
    c.state = GovernorState::kNormal;
  }
  return out;
}

}  // namespace acco::power
