// What changed between two rounds, as events for the log and /api/v1/events: devices found,
// lost, suspended or resumed, clock-event (throttle) reasons starting and stopping, a PCIe link
// retraining to another generation or width, XID errors, sources failing, readings dropped.
// detect_events is pure; EventLog keeps the recent ones and writes JSON Lines through spdlog.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/monitor/snapshot.hpp"

namespace spdlog {
class logger;
}

namespace acco::monitor {

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

struct EventLogOptions {
  std::string path;                       // JSON Lines file; empty: keep in memory only
  std::size_t max_file_bytes = 10 << 20;  // rotate beyond this
  std::size_t max_files = 3;              // rotated files kept
  std::size_t keep = 1000;                // events kept in memory for the API
};

class EventLog {
 public:
  // kCannotWrite naming the file when it cannot be opened.
  [[nodiscard]] static Result<std::unique_ptr<EventLog>> open(const EventLogOptions& options);
  ~EventLog();
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  void add(const std::vector<Event>& events);
  void add(const Event& event);
  // Kept events at or after `since_unix_nanos`, JSON Lines, oldest first.
  [[nodiscard]] std::string since(std::int64_t since_unix_nanos) const;
  [[nodiscard]] std::size_t size() const;
  void flush();

 private:
  explicit EventLog(EventLogOptions options);
  EventLogOptions options_;
  std::shared_ptr<spdlog::logger> file_;
  mutable std::mutex mutex_;
  std::deque<std::pair<std::int64_t, std::string>> recent_;
};

}  // namespace acco::monitor
