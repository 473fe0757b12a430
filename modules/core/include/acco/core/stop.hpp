// How a long-running flow (the daemon, the governor loop, a recording) is told to stop: another
// thread (a signal watcher, a test, a job queue) requests a stop with the reason it wants
// reported, and the flow waits on the flag between rounds, so a stop is an ordinary return.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>

namespace acco::core {

// What a flow that ran its whole duration reports as what stopped it: the value acco's
// published outputs carry (stopped_by of acco.power-run/1, the serve_stopped event).
inline constexpr const char* kStoppedByDuration = "the end of --duration";

// Thread-safe; the first request's reason is kept. Not copyable: flows hold a reference.
class StopFlag {
 public:
  StopFlag() = default;
  ~StopFlag() = default;
  StopFlag(const StopFlag&) = delete;
  StopFlag& operator=(const StopFlag&) = delete;
  StopFlag(StopFlag&&) = delete;
  StopFlag& operator=(StopFlag&&) = delete;

  // Wakes every wait; later requests keep the first reason.
  void request(std::string reason) {
    {
      const std::lock_guard lock(mutex_);
      if (!reason_) {
        reason_ = std::move(reason);
      }
    }
    wake_.notify_all();
  }

  [[nodiscard]] bool requested() const {
    const std::lock_guard lock(mutex_);
    return reason_.has_value();
  }

  // The first request's reason; nullopt while none was made.
  [[nodiscard]] std::optional<std::string> reason() const {
    const std::lock_guard lock(mutex_);
    return reason_;
  }

  // Waits until a stop is requested or `timeout` has passed; true when one was requested.
  template <typename Rep, typename Period>
  [[nodiscard]] bool wait_for(std::chrono::duration<Rep, Period> timeout) const {
    std::unique_lock lock(mutex_);
    return wake_.wait_for(lock, timeout, [this] { return reason_.has_value(); });
  }

  // Waits until a stop is requested.
  void wait() const {
    std::unique_lock lock(mutex_);
    wake_.wait(lock, [this] { return reason_.has_value(); });
  }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable wake_;
  std::optional<std::string> reason_;
};

}  // namespace acco::core
