#include "acco/monitor/event_log.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <utility>

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <sys/stat.h>
#include <unistd.h>

namespace acco::monitor {

EventLog::EventLog(EventLogOptions options) : options_(std::move(options)) {}

EventLog::~EventLog() {
  flush();
}

namespace {

// A daemon killed (kill -9, a power cut) while writing a line leaves it without its newline; the
// next start would glue its first event to it, losing both. The cut line is ended, so it alone
// is unreadable. Regular files only; a failure here is the sink's to report.
void end_the_last_line(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return;  // new, or a pipe or a terminal: nothing to end
  }
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg)
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    return;
  }
  struct stat st {};
  char last = '\n';
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
      ::pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n') {
    (void)::pwrite(fd, "\n", 1, st.st_size);
  }
  ::close(fd);
}

}  // namespace

Result<std::unique_ptr<EventLog>> EventLog::open(const EventLogOptions& options) {
  std::unique_ptr<EventLog> log(new EventLog(options));
  if (!options.path.empty()) {
    // spdlog's file sink makes missing directories; acco's outputs never do (a typo would
    // scatter directories): a missing one is an error as for every other output.
    const std::filesystem::path path(options.path);
    const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
      return fail(Errc::kCannotWrite,
                  fmt::format("cannot open the event log {}: directory '{}' does not exist",
                              options.path, dir.string()));
    }
    // A named pipe that no one reads would hold the sink's open() for ever (a pipe with a
    // reader, or /dev/stdout in a container, is written as before). The probe's descriptor stays
    // open until the sink has its own, so a reader woken by it does not see the end first; and
    // a reader that goes away later must not end the daemon with SIGPIPE.
    int held = -1;
    if (std::filesystem::is_fifo(path, ec)) {
      // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg)
      held = ::open(options.path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (held < 0) {
        const int err = errno;
        return fail(Errc::kCannotWrite,
                    fmt::format("cannot open the event log {}: {}", options.path,
                                err == ENXIO ? "a pipe that no one reads" : std::strerror(err)));
      }
      (void)std::signal(SIGPIPE, SIG_IGN);
    }
    end_the_last_line(options.path);
    try {
      auto sink = std::make_shared<spdlog::sinks::rotating_file_sink_mt>(
          options.path, std::max<std::size_t>(options.max_file_bytes, 4096),
          std::max<std::size_t>(options.max_files, 1));
      log->file_ = std::make_shared<spdlog::logger>("acco-events", sink);
      log->file_->set_pattern("%v");
      log->file_->flush_on(spdlog::level::trace);
    } catch (const std::exception& e) {
      if (held >= 0) {
        ::close(held);
      }
      return fail(Errc::kCannotWrite,
                  fmt::format("cannot open the event log {}: {}", options.path, e.what()));
    }
    if (held >= 0) {
      ::close(held);
    }
  }
  return log;
}

void EventLog::add(const analyze::Event& event) {
  const std::string line = analyze::to_json_line(event);
  if (file_) {
    try {
      file_->info(line);
    } catch (const std::exception&) {
      // A full disk must not stop the daemon; the event stays in memory.
    }
  }
  const std::lock_guard lock(mutex_);
  recent_.emplace_back(event.time_unix_nanos, line);
  while (recent_.size() > options_.keep) {
    recent_.pop_front();
  }
}

void EventLog::add(const std::vector<analyze::Event>& events) {
  for (const auto& e : events) {
    add(e);
  }
}

std::string EventLog::since(std::int64_t since_unix_nanos) const {
  const std::lock_guard lock(mutex_);
  std::string out;
  for (const auto& [time, line] : recent_) {
    if (time >= since_unix_nanos) {
      out += line;
      out += '\n';
    }
  }
  return out;
}

std::size_t EventLog::size() const {
  const std::lock_guard lock(mutex_);
  return recent_.size();
}

void EventLog::flush() {
  if (file_) {
    file_->flush();
  }
}

}  // namespace acco::monitor
