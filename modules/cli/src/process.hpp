// What the long-running commands (serve, top) need from the process: SIGTERM and SIGINT taken
// on the command's own thread, and the host's name for headers and labels.
#pragma once

#include <array>
#include <chrono>
#include <csignal>
#include <ctime>
#include <string>

#include <pthread.h>
#include <unistd.h>

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

inline std::string hostname() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) {
    return "localhost";
  }
  return name.data();
}

}  // namespace acco::cli
