// What the long-running commands (serve, top, record, power run) need from the process: SIGTERM
// and SIGINT taken on the command's own threads (and turned into a stop of the flow it runs), and
// the host's name for headers and labels.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <ctime>
#include <string>
#include <thread>

#include <pthread.h>
#include <unistd.h>

#include "acco/core/stop.hpp"

namespace acco::cli {

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

inline std::string hostname() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) {
    return "localhost";
  }
  return name.data();
}

}  // namespace acco::cli
