// Applies the governor's actions, safely: device settings only through an Actuator and only when
// control is allowed (otherwise every action is logged as not applied: dry-run); the original
// limit of a device written to a state file before its first change, restored on exit and by
// the next start after a crash; a device whose limit someone else changed since acco set it
// left alone from then on; a refused or failed change logged, and the others go on. Scheduler
// actions (weight, no new work, drain) go to a callback. Not thread-safe: one caller.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/power/actuator.hpp"
#include "acco/power/governor.hpp"
#include "acco/power/sample.hpp"

namespace acco::power {

struct ControllerOptions {
  // Device actions reach the actuator only when true; false is a dry run.
  bool allow_control = false;
  // Where original limits are kept while acco has changed them (acco.governor-state/1, see
  // docs/power.md); empty: nowhere (simulated devices, which a crash resets anyway).
  std::filesystem::path state_file;
  // kSetWeight, kNoNewWork, kDrain; applied whatever allow_control says (they change acco's own
  // scheduler, no device). Empty: such actions are recorded as not applied.
  std::function<Status(const Action&)> scheduler;
};

// What the state file holds per device while acco has changed it.
struct SavedDevice {
  std::string uuid;
  std::string device;
  double original_limit_watts = 0;
  double set_limit_watts = 0;  // the last limit acco applied
  bool clocks_locked = false;
  bool operator==(const SavedDevice&) const = default;
};

// Reads a state file; an absent file is an empty list. kInvalidArgument naming the file for
// anything that is not acco.governor-state/1.
[[nodiscard]] Result<std::vector<SavedDevice>> read_state_file(const std::filesystem::path& path);

class Controller {
 public:
  // `actuator` may be null (nothing to control: scheduler actions only); it must outlive this.
  Controller(Actuator* actuator, ControllerOptions options);

  // At start, with control allowed: what a previous run left in the state file (it crashed or
  // was killed) is restored where the device still has the limit acco set, and dropped where
  // someone changed it since; the returned kRestore / kLog actions say which. Errors:
  // kInvalidArgument for a state file that cannot be read (nothing is changed then).
  [[nodiscard]] Result<std::vector<Action>> recover(const std::vector<DeviceSample>& samples,
                                                    double now_seconds);

  // Applies each action in order, filling `applied` and `error`. `samples` are the ones the
  // actions were decided on (for the check that nobody else changed a limit).
  void apply(std::vector<Action>& actions, const std::vector<DeviceSample>& samples);

  // Restores every device acco changed (on exit); the state file is removed once all are back.
  [[nodiscard]] std::vector<Action> restore_all(double now_seconds);

  // Devices the controller no longer touches, with the reason.
  [[nodiscard]] const std::map<std::string, std::string>& hands_off() const { return hands_off_; }
  // Actions seen by kind (applied or not), for acco_governor_actions_total.
  [[nodiscard]] const std::map<ActionKind, std::uint64_t>& counts() const { return counts_; }
  [[nodiscard]] bool allow_control() const { return options_.allow_control; }

 private:
  // `checked`: the outside-change check was done for this device earlier in the same apply.
  [[nodiscard]] Status apply_device(Action& action, const DeviceSample* sample, bool checked);
  [[nodiscard]] Status restore_device(const SavedDevice& saved);
  [[nodiscard]] Status save();
  void count(const Action& action);

  Actuator* actuator_;
  ControllerOptions options_;
  std::map<std::string, SavedDevice> saved_;      // by uuid, what the state file holds
  std::map<std::string, double> first_seen_;      // by uuid, the limit at first sight
  std::map<std::string, double> previous_limit_;  // by uuid, before acco's last change
  std::map<std::string, double> current_;         // by uuid, what acco last put there
  std::map<std::string, std::string> hands_off_;  // by uuid
  std::map<ActionKind, std::uint64_t> counts_;
};

}  // namespace acco::power
