// What a long-running program (the daemon, the governor loop, a recording, a benchmark) needs
// from its process: SIGTERM and SIGINT taken on its own threads and turned into a stop of the
// flow it runs, or into a stop between two steps with a second signal ending it at once; and the
// host's name for headers and labels.
#pragma once

#include <atomic>
#include <chrono>
#include <csignal>
#include <ctime>
#include <functional>
#include <string>
#include <thread>

#include <pthread.h>

#include "acco/core/stop.hpp"

namespace acco::core {

// SIGTERM and SIGINT are blocked before any thread starts, so every thread inherits the mask
// and the command's thread alone takes them with sigtimedwait: no handler runs in a random
// thread, and a stop is an ordinary return.
class SignalScope {
 public:
  SignalScope() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGTERM);
    sigaddset(&set_, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~SignalScope() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

  // The signal that arrived within `timeout`, or 0.
  [[nodiscard]] int wait(std::chrono::milliseconds timeout) const {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
    const timespec ts{static_cast<time_t>(ns / 1'000'000'000),
                      static_cast<long>(ns % 1'000'000'000)};
    const int sig = sigtimedwait(&set_, nullptr, &ts);
    return sig > 0 ? sig : 0;
  }

 private:
  sigset_t set_{};
  sigset_t old_{};
};

// While it lives, a thread of its own waits for SIGTERM or SIGINT (blocked by `signals`, which
// must be made first so every thread inherits the mask) and requests `stop` with the signal's
// name ("SIGTERM", "SIGINT"). Gone within 100 ms of its destruction.
class StopOnSignal {
 public:
  StopOnSignal(const SignalScope& signals, core::StopFlag& stop)
      : thread_([this, &signals, &stop] {
          while (!done_) {
            if (const int sig = signals.wait(std::chrono::milliseconds(100)); sig != 0) {
              stop.request(sig == SIGTERM ? "SIGTERM" : "SIGINT");
              return;
            }
          }
        }) {}
  ~StopOnSignal() {
    done_ = true;
    thread_.join();
  }
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// Blocks SIGINT and SIGTERM (a SignalScope: construct it before any thread starts, so every
// thread inherits the mask) and takes them on a thread of its own. The first signal sets
// requested() and calls `on_first` on that thread; the command stops at its next check as
// before. A second signal ends the process there and then, killed by that signal (a shell reports
// 130 for SIGINT, 143 for SIGTERM), so a step that never returns (a GPU that stopped answering)
// needs no SIGKILL (bench). Not copyable; the destructor stops the thread and restores the
// mask.
class InterruptWatch {
 public:
  explicit InterruptWatch(std::function<void(int signal)> on_first = {});
  ~InterruptWatch();
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;

  // A first signal arrived. Thread-safe.
  [[nodiscard]] bool requested() const { return first_.load() != 0; }

 private:
  void watch();

  SignalScope mask_;  // first: blocked before the thread starts
  std::function<void(int)> on_first_;
  std::atomic<int> first_{0};
  int signals_ = -1;  // signalfd of SIGINT and SIGTERM
  int wake_ = -1;     // eventfd the destructor writes to stop the thread
  std::thread watcher_;
};

// This host's name ("localhost" when it cannot be read).
[[nodiscard]] std::string hostname();

}  // namespace acco::core
