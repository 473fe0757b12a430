// Controller: dry-run or actuation, the state file of original limits, crash recovery, and
// backing off devices that someone else adjusts.
#include "acco/power/controller.hpp"

#include <cmath>
#include <system_error>

#include <fmt/format.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "acco/core/file.hpp"
#include "acco/core/json.hpp"

namespace acco::power {
namespace {

constexpr const char* kSchema = "acco.governor-state/1";
constexpr double kLimitToleranceWatts = 1;

const DeviceSample* find_sample(const std::vector<DeviceSample>& samples, const std::string& uuid) {
  for (const DeviceSample& s : samples) {
    if (s.uuid == uuid) {
      return &s;
    }
  }
  return nullptr;
}

std::optional<double> observed_limit(const DeviceSample& s) {
  if (s.power_limit_requested_watts) {
    return s.power_limit_requested_watts;
  }
  return s.power_limit_enforced_watts;
}

bool is_device_action(ActionKind kind) {
  return kind == ActionKind::kSetPowerLimit || kind == ActionKind::kLockClocks ||
         kind == ActionKind::kUnlockClocks || kind == ActionKind::kRestore;
}

bool is_scheduler_action(ActionKind kind) {
  return kind == ActionKind::kSetWeight || kind == ActionKind::kNoNewWork ||
         kind == ActionKind::kDrain;
}

Action note(const std::string& uuid, const std::string& device, double now, ActionKind kind,
            std::string reason) {
  Action a;
  a.time_seconds = now;
  a.uuid = uuid;
  a.device = device;
  a.kind = kind;
  a.reason = std::move(reason);
  return a;
}

// The devices of a parsed state file (`bad` makes the error naming the file).
template <typename Bad>
Result<std::vector<SavedDevice>> saved_devices(const nlohmann::json& j, const Bad& bad) {
  if (!j.is_object() || j.value("schema", "") != kSchema) {
    return bad("not a governor state file");
  }
  const auto devices = j.find("devices");
  if (devices == j.end() || !devices->is_array()) {
    return bad("no devices list");
  }
  std::vector<SavedDevice> out;
  for (const nlohmann::json& d : *devices) {
    if (!d.is_object() || !d.contains("uuid") || !d["uuid"].is_string() ||
        !d.contains("original_limit_watts") || !d["original_limit_watts"].is_number() ||
        !d.contains("set_limit_watts") || !d["set_limit_watts"].is_number()) {
      return bad("a device entry lacks uuid, original_limit_watts or set_limit_watts");
    }
    SavedDevice s;
    s.uuid = d["uuid"].get<std::string>();
    s.device = d.value("device", "");
    s.original_limit_watts = d["original_limit_watts"].get<double>();
    s.set_limit_watts = d["set_limit_watts"].get<double>();
    s.clocks_locked = d.value("clocks_locked", false);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

Result<std::vector<SavedDevice>> read_state_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return std::vector<SavedDevice>{};
  }
  auto json = core::read_json_file(path.string());
  if (!json) {
    // The message names the file already ("F: not valid JSON ..."); a file that cannot be
    // opened (no permission) keeps its code: it is not a malformed one.
    return fail(json.error().code, "governor state file " + json.error().message);
  }
  const auto bad = [&](const std::string& what) {
    return fail(Errc::kInvalidArgument, fmt::format("governor state file {}: {} (expected {})",
                                                    path.string(), what, kSchema));
  };
  // A field of another type ("schema": 5, "clocks_locked": "s") is a malformed file.
  return core::catch_type_errors(fmt::format("governor state file {}: a field", path.string()),
                                 [&] { return saved_devices(*json, bad); });
}

Controller::Controller(Actuator* actuator, ControllerOptions options)
    : actuator_(actuator), options_(std::move(options)) {}

Status Controller::save() {
  if (options_.state_file.empty()) {
    return {};
  }
  if (saved_.empty()) {
    std::error_code ec;
    std::filesystem::remove(options_.state_file, ec);
    if (ec) {
      return fail(Errc::kCannotWrite, fmt::format("governor state file {}: {}",
                                                  options_.state_file.string(), ec.message()));
    }
    return {};
  }
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& [uuid, s] : saved_) {
    devices.push_back({{"uuid", s.uuid},
                       {"device", s.device},
                       {"original_limit_watts", s.original_limit_watts},
                       {"set_limit_watts", s.set_limit_watts},
                       {"clocks_locked", s.clocks_locked}});
  }
  const nlohmann::json doc = {{"schema", kSchema},
                              {"pid", static_cast<long long>(::getpid())},
                              {"actuator", actuator_ != nullptr ? actuator_->name() : ""},
                              {"devices", devices}};
  std::error_code ec;
  const auto dir = options_.state_file.parent_path();
  if (!dir.empty()) {
    std::filesystem::create_directories(dir, ec);
  }
  return core::write_file_atomic(options_.state_file.string(), doc.dump(2) + "\n");
}

Status Controller::restore_device(const SavedDevice& saved) {
  if (actuator_ == nullptr) {
    return fail(Errc::kUnavailable, "no actuator");
  }
  Status limit = actuator_->set_power_limit(saved.uuid, saved.original_limit_watts);
  if (saved.clocks_locked) {
    Status clocks = actuator_->unlock_sm_clocks(saved.uuid);
    if (!clocks && limit) {
      return clocks;
    }
  }
  return limit;
}

Result<std::vector<Action>> Controller::recover(const std::vector<DeviceSample>& samples,
                                                double now) {
  std::vector<Action> out;
  if (!options_.allow_control || options_.state_file.empty()) {
    return out;
  }
  auto left = read_state_file(options_.state_file);
  if (!left) {
    return tl::unexpected(left.error());
  }
  for (const SavedDevice& saved : *left) {
    const DeviceSample* s = find_sample(samples, saved.uuid);
    const auto limit = s != nullptr ? observed_limit(*s) : std::nullopt;
    if (s == nullptr || s->lost) {
      // Keep it: the device may come back (a driver reload resets its limit anyway).
      saved_[saved.uuid] = saved;
      out.push_back(note(saved.uuid, saved.device, now, ActionKind::kLog,
                         "a previous run changed this device, which is not answering now: its "
                         "entry stays in the state file"));
      continue;
    }
    if (limit && !saved.clocks_locked &&
        std::abs(*limit - saved.original_limit_watts) <= kLimitToleranceWatts) {
      // Killed before the change reached the driver (or restored by hand): nothing to put back.
      out.push_back(note(saved.uuid, saved.device, now, ActionKind::kLog,
                         fmt::format("a previous run's entry: the device already has its original "
                                     "{:.0f} W, nothing to restore",
                                     saved.original_limit_watts)));
      continue;
    }
    if (!limit || std::abs(*limit - saved.set_limit_watts) > kLimitToleranceWatts) {
      out.push_back(
          note(saved.uuid, saved.device, now, ActionKind::kLog,
               fmt::format("a previous run set {:.0f} W; the device now has {}: changed by someone "
                           "else since, left alone",
                           saved.set_limit_watts,
                           limit ? fmt::format("{:.0f} W", *limit) : "no limit")));
      continue;
    }
    Action a = note(saved.uuid, saved.device, now, ActionKind::kRestore,
                    fmt::format("a previous run ended without restoring: {:.0f} W back to {:.0f} W",
                                saved.set_limit_watts, saved.original_limit_watts));
    a.value = saved.original_limit_watts;
    a.numbers = {{"set_limit_watts", saved.set_limit_watts},
                 {"original_limit_watts", saved.original_limit_watts}};
    Status done = restore_device(saved);
    a.applied = done.has_value();
    if (done) {
      previous_limit_[saved.uuid] = saved.set_limit_watts;  // this round's samples show it
      current_[saved.uuid] = saved.original_limit_watts;
    } else {
      a.error = done.error().message;
      saved_[saved.uuid] = saved;  // try again at exit
    }
    count(a);
    out.push_back(std::move(a));
  }
  Status written = save();
  if (!written) {
    return tl::unexpected(written.error());
  }
  return out;
}

void Controller::count(const Action& action) {
  ++counts_[action.kind];
}

Status Controller::apply_device(Action& a, const DeviceSample* sample, bool checked) {
  if (actuator_ == nullptr) {
    return fail(Errc::kUnavailable, "no actuator for this device");
  }
  const auto now_limit = sample != nullptr ? observed_limit(*sample) : std::nullopt;
  auto saved = saved_.find(a.uuid);
  // Someone else changed the limit since acco set it (or since acco first saw it)?
  std::optional<double> expected;
  if (saved != saved_.end()) {
    expected = saved->second.set_limit_watts;
  } else if (const auto known = current_.find(a.uuid); known != current_.end()) {
    expected = known->second;
  } else if (const auto first = first_seen_.find(a.uuid); first != first_seen_.end()) {
    expected = first->second;
  }
  // A sample read before acco's own last change still shows the limit before it: stale, not
  // someone else's.
  const auto before = previous_limit_.find(a.uuid);
  const bool stale = before != previous_limit_.end() && now_limit &&
                     std::abs(*now_limit - before->second) <= kLimitToleranceWatts;
  if (!checked && !stale && now_limit && expected &&
      std::abs(*now_limit - *expected) > kLimitToleranceWatts) {
    const std::string why = fmt::format(
        "the limit changed from {:.0f} W to {:.0f} W outside acco: the governor leaves this "
        "device alone from now on",
        *expected, *now_limit);
    hands_off_[a.uuid] = why;
    saved_.erase(a.uuid);
    (void)save();
    return fail(Errc::kUnavailable, why);
  }
  if (a.kind == ActionKind::kRestore) {
    if (saved == saved_.end()) {
      return {};
    }
    Status done = restore_device(saved->second);
    if (done) {
      previous_limit_[a.uuid] = saved->second.set_limit_watts;
      current_[a.uuid] = saved->second.original_limit_watts;
      saved_.erase(saved);
      Status written = save();
      if (!written) {
        return written;
      }
    }
    return done;
  }
  // Before the first change: the original goes to the state file.
  if (saved == saved_.end()) {
    // What acco last put there (a restore this run) is newer than a sample read before it.
    const auto known = current_.find(a.uuid);
    const std::optional<double> original =
        known != current_.end() ? std::optional<double>(known->second) : now_limit;
    if (!original) {
      return fail(Errc::kUnsupported,
                  "the device reports no power limit, so it could not be restored: not changed");
    }
    SavedDevice s{.uuid = a.uuid,
                  .device = a.device,
                  .original_limit_watts = *original,
                  .set_limit_watts = *original,
                  .clocks_locked = false};
    saved = saved_.emplace(a.uuid, s).first;
    Status written = save();
    if (!written) {
      saved_.erase(saved);
      return fail(written.error().code, fmt::format("not changed: {}", written.error().message));
    }
  }
  SavedDevice& s = saved->second;
  Status done;
  switch (a.kind) {
    case ActionKind::kSetPowerLimit: {
      // The state file names the new limit before the driver has it: a kill in between leaves an
      // entry the next run restores, not one that looks changed by someone else.
      const double was_set = s.set_limit_watts;
      s.set_limit_watts = a.value;
      if (Status written = save(); !written) {
        s.set_limit_watts = was_set;
        return written;
      }
      done = actuator_->set_power_limit(a.uuid, a.value);
      if (done) {
        previous_limit_[a.uuid] = was_set;
        current_[a.uuid] = a.value;
      } else {
        s.set_limit_watts = was_set;
      }
      break;
    }
    case ActionKind::kLockClocks:
      // The state file says "locked" before the lock, so a crash in between still unlocks.
      s.clocks_locked = true;
      if (Status written = save(); !written) {
        return written;
      }
      done = actuator_->lock_sm_clocks(a.uuid, 0, a.value);
      break;
    case ActionKind::kUnlockClocks:
      done = actuator_->unlock_sm_clocks(a.uuid);
      if (done) {
        s.clocks_locked = false;
      }
      break;
    default:
      break;
  }
  Status written = save();
  if (done && !written) {
    return written;
  }
  return done;
}

void Controller::apply(std::vector<Action>& actions, const std::vector<DeviceSample>& samples) {
  for (const DeviceSample& s : samples) {
    if (!first_seen_.contains(s.uuid)) {
      if (const auto limit = observed_limit(s)) {
        first_seen_[s.uuid] = *limit;
      }
    }
  }
  // The samples predate this call's own changes: a device is checked once, before its first.
  std::set<std::string> checked;
  for (Action& a : actions) {
    count(a);
    a.applied = false;
    a.error.clear();
    if (a.kind == ActionKind::kLog) {
      continue;
    }
    if (is_scheduler_action(a.kind)) {
      if (!options_.scheduler) {
        continue;  // no scheduler in this process: the action is information
      }
      Status done = options_.scheduler(a);
      a.applied = done.has_value();
      if (!done) {
        a.error = done.error().message;
      }
      continue;
    }
    if (!is_device_action(a.kind) || !options_.allow_control) {
      continue;  // dry run: logged, not applied
    }
    if (const auto off = hands_off_.find(a.uuid); off != hands_off_.end()) {
      a.error = off->second;
      continue;
    }
    Status done = apply_device(a, find_sample(samples, a.uuid), checked.contains(a.uuid));
    checked.insert(a.uuid);
    a.applied = done.has_value();
    if (!done) {
      a.error = done.error().message;
      // No permission or a lost device will answer the same next time: stop asking.
      if (done.error().code == Errc::kUnavailable || done.error().code == Errc::kDeviceError) {
        hands_off_.try_emplace(a.uuid, a.error);
      }
    }
  }
}

std::vector<Action> Controller::restore_all(double now) {
  std::vector<Action> out;
  std::vector<SavedDevice> pending;
  for (const auto& [uuid, s] : saved_) {
    pending.push_back(s);
  }
  for (const SavedDevice& s : pending) {
    Action a = note(
        s.uuid, s.device, now, ActionKind::kRestore,
        fmt::format("exit: {:.0f} W back to {:.0f} W", s.set_limit_watts, s.original_limit_watts));
    a.value = s.original_limit_watts;
    Status done = restore_device(s);
    a.applied = done.has_value();
    if (done) {
      current_[s.uuid] = s.original_limit_watts;
      saved_.erase(s.uuid);
    } else {
      a.error = done.error().message;
    }
    count(a);
    out.push_back(std::move(a));
  }
  if (Status written = save(); !written) {
    Action a = note("", "", now, ActionKind::kLog, written.error().message);
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace acco::power
