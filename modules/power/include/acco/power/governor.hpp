// The power and thermal governor's decisions: a pure state machine over DeviceSamples. Each
// step takes the latest sample of every device and the time, and answers the actions to take
// (set a power limit, lock or unlock clocks, tell the scheduler a device's weight, that it takes
// no new work, that it drains, restore, log), each with the numbers that caused it. Nothing here
// touches a device or a scheduler: the Controller (controller.hpp) applies the actions.
//
// States per device, thresholds relative to the device's own NVML thresholds (T_max = the max
// operating temperature, GPU_MAX; T_slow = the HW slowdown temperature), rules in
// docs/power.md and ../shared/reference/monitoring-power.md c.3:
//   normal   -> warm      T >= T_max - 10 for 3 samples
//   warm     -> normal    T <= T_max - 15 for 30 s           (the power limit is restored)
//   any cool -> hot       T >= T_max - 4, or SW thermal slowdown active
//   hot      -> warm      T <= T_max - 10 for 60 s
//   any      -> draining  T >= T_slow - 2, HW thermal slowdown active, or still rising after
//                         the limit has been at its minimum for 80 s
//   draining -> warm      T <= T_max - 15 for 120 s
// In warm a PI loop on the temperature sets the power limit (target T_max - 7, anti-windup,
// slew limit, clamped to the device's [min, max]); hot sets the minimum limit and stops new
// work; draining also evacuates the device's queue and locks its clocks low.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/power/sample.hpp"

namespace acco::power {

enum class GovernorState {
  kNormal,
  kWarm,
  kHot,
  kDraining
};
[[nodiscard]] const char* to_string(GovernorState state);

enum class GovernorMode {
  kThermal,  // thermal rules, and load-following caps while cool
  kEnergy,   // thermal rules, and the cap with the least energy per unit of work while cool
  kCap,      // thermal rules under a fixed cap
};

struct GovernorOptions {
  GovernorMode mode = GovernorMode::kThermal;
  double cap_watts = 0;  // kCap: clamped to each device's [min, max] (see check_cap)

  // Decisions are taken at most once per period per device (NVML's power is a 1 s average).
  double period_seconds = 1;

  // Thresholds in kelvin below T_max (T_slow for drain_enter) and dwell times in seconds.
  double warm_enter_below_max = 10;
  int warm_enter_samples = 3;
  double warm_exit_below_max = 15;
  double warm_exit_dwell_seconds = 30;
  double hot_enter_below_max = 4;
  double hot_exit_below_max = 10;
  double hot_exit_dwell_seconds = 60;
  double drain_enter_below_slowdown = 2;
  double drain_rising_seconds = 80;  // the heatsink's time constant
  double drain_exit_below_max = 15;
  double drain_exit_dwell_seconds = 120;
  // Draining locks the SM clock at this share of its maximum (0: no lock).
  double drain_clock_share = 0.5;

  // The warm PI loop: P = P0 + kp e + ki sum(e dt), e = (T_max - target_below_max) - T.
  // Gains from IMC tuning of a first-order plant, R = 0.1 K/W, tau = 80 s, closed loop 20 s.
  double target_below_max = 7;
  double kp_watts_per_kelvin = 40;
  double ki_watts_per_kelvin_second = 0.5;
  double slew_watts_per_second = 35;  // 5 % of a 700 W TDP per second
  double pi_dead_band_watts = 5;      // smaller corrections are not applied

  // Load-following caps while cool (kThermal): cap = floor + (max - floor) x utilization, moved
  // only when it differs from the current one by more than the dead band (a share of max).
  bool load_following = true;
  double follow_floor_share = 0.6;  // of the default limit
  double follow_dead_band_share = 0.05;

  // Energy mode: caps tried as shares of each device's default limit, every cool device at the
  // same share (they share the work, so only their sum tells), each measured for point_seconds
  // after settle_seconds; the share with the least energy per unit of work whose work rate is
  // within max_slowdown of the first (highest) share's is kept, or any share while the devices
  // kept up with their work (idle time left at both); a change of utilization by more than
  // recheck_utilization from the one measured restarts the sweep.
  std::vector<double> energy_cap_shares = {1.0, 0.85, 0.72, 0.6, 0.5, 0.42};
  double energy_settle_seconds = 3;
  double energy_point_seconds = 20;
  double energy_max_slowdown = 0.03;
  double energy_recheck_utilization = 0.2;
  double energy_busy_utilization = 0.05;  // below this the device is idle: nothing is measured

  // Scheduler weight from temperature headroom: 1 up to warm_enter - weight_band kelvin, falling
  // linearly to min_weight at the hot threshold; published when it moves by weight_step.
  double weight_band_kelvin = 10;
  double min_weight = 0.25;
  double weight_step = 0.1;
};

// "thermal", "energy", "cap:300" (watts). kInvalidArgument naming the forms otherwise.
[[nodiscard]] Status parse_governor_mode(const std::string& text, GovernorOptions& options);
[[nodiscard]] std::string mode_string(const GovernorOptions& options);

// A fixed cap no device can take: above every device's maximum power limit, or below every
// device's minimum (of the devices that report one). kInvalidArgument naming the range the
// devices accept; OK for the other modes, and for a cap within some device's range (the others
// clamp it to theirs).
[[nodiscard]] Status check_cap(const GovernorOptions& options,
                               const std::vector<DeviceSample>& samples);

enum class ActionKind {
  kSetPowerLimit,  // value: watts
  kLockClocks,     // value: the highest SM clock, hertz
  kUnlockClocks,
  kSetWeight,  // value: the scheduler weight (0, 1]
  kNoNewWork,  // value: 1 stop placing work there, 0 resume
  kDrain,      // value: 1 evacuate the queue, 0 back in service
  kRestore,    // the device's original limit and clocks
  kLog,        // nothing to apply: a decision worth a line (a lost device, no thresholds)
};
[[nodiscard]] const char* to_string(ActionKind kind);
[[nodiscard]] const std::vector<ActionKind>& all_action_kinds();

struct Action {
  double time_seconds = 0;  // the governor's clock (step's `now`)
  std::string device;
  std::string uuid;
  ActionKind kind = ActionKind::kLog;
  double value = 0;
  GovernorState state = GovernorState::kNormal;  // the device's state after this step
  std::string reason;                            // one line: "T 84 C >= 83 C (T_max 87 - 4)"
  // The numbers behind it, in a stable order: "temperature_celsius", "power_watts", ...
  std::vector<std::pair<std::string, double>> numbers;
  // Filled by the controller.
  bool applied = false;
  std::string error;
  bool operator==(const Action&) const = default;
};

// What the governor holds about a device now (for `acco power status`, /metrics).
struct GovernorDevice {
  std::string device;
  std::string uuid;
  GovernorState state = GovernorState::kNormal;
  std::optional<double> limit_watts;  // the limit the governor asked for last
  double weight = 1;
  bool no_new_work = false;
  bool drained = false;
  bool clocks_locked = false;
  bool lost = false;
  std::optional<double> energy_cap_watts;  // energy mode: the cap chosen, once chosen
  bool operator==(const GovernorDevice&) const = default;
};

// The state a device's temperature and throttle reasons alone put it in, without the samples
// and dwell times a running governor also needs (acco power status); nullopt without a
// temperature or a max operating threshold.
[[nodiscard]] std::optional<GovernorState> thermal_state(const DeviceSample& sample,
                                                         const GovernorOptions& options = {});

// What a running governor shows (`acco power run --json`, /metrics).
struct GovernorStatus {
  std::string mode;  // "thermal", "energy", "cap:300"
  bool allow_control = false;
  std::vector<GovernorDevice> devices;
  std::map<std::string, std::uint64_t> actions_total;  // by to_string(ActionKind), all kinds
  std::map<std::string, std::string> hands_off;        // uuid -> why the governor stopped
  bool operator==(const GovernorStatus&) const = default;
};

class Governor {
 public:
  explicit Governor(GovernorOptions options = {});
  ~Governor();
  Governor(Governor&& other) noexcept;
  Governor& operator=(Governor&& other) noexcept;
  Governor(const Governor&) = delete;
  Governor& operator=(const Governor&) = delete;

  // One control step at `now_seconds` (any monotonic clock; simulated time in simulations).
  // Samples of unknown devices start them in normal; devices missing from `samples` keep their
  // state.
  [[nodiscard]] std::vector<Action> step(const std::vector<DeviceSample>& samples,
                                         double now_seconds);
  // Restore every device the governor changed, and put it back into service (on exit).
  [[nodiscard]] std::vector<Action> finish(double now_seconds);

  [[nodiscard]] std::vector<GovernorDevice> devices() const;
  [[nodiscard]] const GovernorOptions& options() const { return options_; }

  struct Control;  // per-device state, defined in governor.cpp
  struct Sweep;    // the energy mode's sweep over every cool device

 private:
  void energy_round(double now_seconds, std::vector<Action>& out);

  GovernorOptions options_;
  std::unique_ptr<Sweep> sweep_;
  std::vector<std::unique_ptr<Control>> controls_;  // in first-seen order
  std::map<std::string, std::size_t> index_;        // by uuid
};

}  // namespace acco::power
