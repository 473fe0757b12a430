#include "acco/monitor/stdio_terminal.hpp"

#include <cctype>
#include <cstdio>
#include <string_view>

#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "acco/core/clock.hpp"

namespace acco::monitor {

StdioTerminal::StdioTerminal(const core::SignalScope& signals, bool live)
    : signals_(signals), live_(live) {
  if (live && ::isatty(STDIN_FILENO) == 1 && ::tcgetattr(STDIN_FILENO, &saved_) == 0) {
    termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    keys_ = ::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
}

StdioTerminal::~StdioTerminal() {
  if (keys_) {
    ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }
}

char StdioTerminal::wait_key(std::chrono::milliseconds timeout) {
  if (!keys_) {
    return signals_.wait(timeout) == 0 ? 0 : 'q';
  }
  if (signals_.wait(std::chrono::milliseconds(0)) != 0) {
    return 'q';
  }
  pollfd p{STDIN_FILENO, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) {
    return 0;
  }
  char c = 0;
  char last = 0;
  while (::read(STDIN_FILENO, &c, 1) == 1) {
    last = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (last == 'q') {
      break;
    }
  }
  return last;
}

std::size_t StdioTerminal::width() const {
  winsize size{};
  // ioctl is variadic in POSIX; TIOCGWINSZ takes exactly one winsize*.
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg)
  if (!live_ || ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) != 0) {
    return 0;
  }
  return size.ws_col;
}

std::chrono::steady_clock::time_point StdioTerminal::now() const {
  return std::chrono::steady_clock::now();
}

std::int64_t StdioTerminal::now_unix_nanos() const {
  return core::now_unix_nanos();
}

namespace {

constexpr const char* kClear = "\x1b[H\x1b[2J";
constexpr const char* kHideCursor = "\x1b[?25l";
constexpr const char* kShowCursor = "\x1b[?25h";

void write_stdout(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

Result<std::string> top_on_stdio(const core::SignalScope& signals, const TopFeed& feed,
                                 std::chrono::milliseconds interval, int iterations, bool once) {
  const bool live = ::isatty(STDOUT_FILENO) == 1 && !once;
  TopSessionOptions session{.interval = interval,
                            .frames = once             ? 1
                                      : iterations > 0 ? iterations
                                                       : (live ? 0 : 1),
                            .view = {}};
  session.view.colour = live;
  StdioTerminal terminal(signals, live);
  if (live) {
    write_stdout(kHideCursor);
  }
  std::string single;
  int drawn = 0;
  const Status ran = run_top(feed, terminal, session, [&](const std::string& text) {
    if (live) {
      write_stdout(kClear + text);
    } else if (session.frames == 1) {
      single = text;
    } else {
      write_stdout((drawn++ == 0 ? "" : "\n") + text);
    }
  });
  if (live) {
    write_stdout(kShowCursor);
  }
  ACCO_RETURN_IF_ERROR(ran);
  return single;
}

}  // namespace acco::monitor
