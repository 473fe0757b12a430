// stdin and stdout as `acco top`'s terminal (monitor::run_top): a terminal stdin goes
// non-canonical without echo, so a key arrives at once and is not printed over the frame (its
// settings come back when the terminal is destroyed); SIGTERM and SIGINT, blocked by the caller's
// core::SignalScope, read as 'q'.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include <termios.h>

#include "acco/core/process.hpp"
#include "acco/monitor/top_session.hpp"

namespace acco::monitor {

class StdioTerminal final : public TopTerminal {
 public:
  // `live`: stdout is a terminal the view redraws (keys are read and the width is known only
  // then). `signals` must outlive the terminal.
  StdioTerminal(const core::SignalScope& signals, bool live);
  ~StdioTerminal() override;
  StdioTerminal(const StdioTerminal&) = delete;
  StdioTerminal& operator=(const StdioTerminal&) = delete;

  // The last key typed within `timeout` ('q' first when it came, or for a signal), or 0.
  char wait_key(std::chrono::milliseconds timeout) override;
  [[nodiscard]] bool keys() const override { return keys_; }
  [[nodiscard]] std::size_t width() const override;
  [[nodiscard]] std::chrono::steady_clock::time_point now() const override;
  [[nodiscard]] std::int64_t now_unix_nanos() const override;

 private:
  const core::SignalScope& signals_;
  bool live_;
  termios saved_{};
  bool keys_ = false;
};

// `acco top` on this process's stdin and stdout (`signals`, blocked before `feed` started its
// threads, must outlive it): a terminal stdout is redrawn in place, in colour with the cursor
// hidden, until 'q' or `iterations` frames (0: until 'q'). Otherwise, or with `once`, frames
// follow one another, a blank line between them: `iterations` of them, one by default. A single
// frame is returned, unwritten, for the caller to print; several are written as they come and
// nothing is returned. Errors: run_top's.
[[nodiscard]] Result<std::string> top_on_stdio(const core::SignalScope& signals,
                                               const TopFeed& feed,
                                               std::chrono::milliseconds interval, int iterations,
                                               bool once);

}  // namespace acco::monitor
