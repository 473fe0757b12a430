#include "acco/monitor/stdio_terminal.hpp"

#include <cctype>

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

}  // namespace acco::monitor
