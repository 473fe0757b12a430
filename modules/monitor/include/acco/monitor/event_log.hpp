// The daemon's event log: keeps the recent events (analyze::detect_events and the daemon's own)
// for /api/v1/events and writes them as JSON Lines through spdlog, rotating the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "acco/analyze/events.hpp"
#include "acco/core/result.hpp"

namespace spdlog {
class logger;
}

namespace acco::monitor {

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

  void add(const std::vector<analyze::Event>& events);
  void add(const analyze::Event& event);
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
