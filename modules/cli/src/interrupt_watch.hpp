// SIGINT and SIGTERM for a command that runs long steps and stops between two of them (bench):
// the first signal asks it to stop at its next check; a second one ends the process at once.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

#include "process.hpp"

namespace acco::cli {

// Blocks SIGINT and SIGTERM (a SignalScope: construct it before any thread starts, so every
// thread inherits the mask) and takes them on a thread of its own. The first signal sets
// requested() and calls `on_first` on that thread; the command stops at its next check as
// before. A second signal ends the process there and then, killed by that signal (a shell reports
// 130 for SIGINT, 143 for SIGTERM), so a step that never returns (a GPU that stopped answering)
// needs no SIGKILL. Not copyable; the destructor stops the thread and restores the mask.
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

}  // namespace acco::cli
