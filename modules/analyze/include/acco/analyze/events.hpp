// What changed between two rounds, as events for the log and /api/v1/events: devices found,
// lost, suspended or resumed, clock-event (throttle) reasons starting and stopping, a PCIe link
// retraining to another generation or width, XID errors, sources failing, readings dropped.
// detect_events is pure, so `acco analyze` finds in a recording the events the daemon logged;
// the daemon's log of them is monitor::EventLog.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "acco/analyze/snapshot.hpp"
#include "acco/power/governor.hpp"

namespace acco::analyze {

struct Event {
  std::int64_t time_unix_nanos = 0;
  std::string level;   // "info", "warning", "error"
  std::string event;   // "throttle_start", "device_lost", ...
  std::string device;  // empty for events of the daemon or the host
  std::string message;
  std::map<std::string, double> numbers;  // the readings that caused it, base units
  bool operator==(const Event&) const = default;
};

// Events between `previous` (null for the first round) and `current`, in device order.
[[nodiscard]] std::vector<Event> detect_events(const Snapshot* previous, const Snapshot& current);

// A governor action as an event "governor_<kind>" (governor_set_power_limit, ...): level
// warning for no new work, drain and a failed action, info otherwise; the message is the reason
// and whether it was applied; the numbers are the action's.
[[nodiscard]] Event governor_event(const power::Action& action, std::int64_t time_unix_nanos);

// One JSON object on one line: {"time": RFC 3339, "level", "event", "device", "message", ...}.
[[nodiscard]] std::string to_json_line(const Event& event);

}  // namespace acco::analyze
