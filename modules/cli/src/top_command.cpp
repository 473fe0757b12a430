// `acco top`: a live terminal view of the devices and the host. Samples the sources itself
// (NVML, simulated devices, the host) or reads a running `acco serve` with --from, and redraws
// a plain-ANSI frame every interval, so it works over ssh and inside tmux without curses. A
// stdout that is not a terminal, or --once, gets one frame without escape codes. The loop is
// monitor::run_top; this file holds the flags and the terminal.
#include <cctype>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "acco/core/clock.hpp"
#include "acco/core/units.hpp"
#include "acco/monitor/client.hpp"
#include "acco/monitor/sources.hpp"
#include "acco/monitor/top_session.hpp"

#include "command_spec.hpp"
#include "commands.hpp"
#include "monitor_flags.hpp"
#include "process.hpp"

namespace acco::cli {
namespace {

constexpr const char* kClear = "\x1b[H\x1b[2J";
constexpr const char* kHideCursor = "\x1b[?25l";
constexpr const char* kShowCursor = "\x1b[?25h";

struct TopCommandOptions {
  std::optional<monitor::ServerUrl> from;
  std::chrono::milliseconds interval{1000};
  int iterations = 0;  // 0: until a signal (one frame when stdout is not a terminal)
  bool once = false;
  monitor::SourceOptions sources;
  std::string sysroot = "/";
};

void write_stdout(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

// stdin and stdout as the view's terminal: a terminal stdin goes non-canonical without echo, so a
// 'q' arrives at once and is not printed over the frame (its settings come back at the end);
// SIGTERM and SIGINT read as 'q'.
class Terminal final : public monitor::TopTerminal {
 public:
  Terminal(const SignalScope& signals, bool live) : signals_(signals), live_(live) {
    if (live && ::isatty(STDIN_FILENO) == 1 && ::tcgetattr(STDIN_FILENO, &saved_) == 0) {
      termios raw = saved_;
      raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
      raw.c_cc[VMIN] = 0;
      raw.c_cc[VTIME] = 0;
      keys_ = ::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
    }
  }
  ~Terminal() override {
    if (keys_) {
      ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
    }
  }
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;

  // The last key typed within `timeout` ('q' first when it came), or 0.
  char wait_key(std::chrono::milliseconds timeout) override {
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
  [[nodiscard]] bool keys() const override { return keys_; }
  [[nodiscard]] std::size_t width() const override {
    winsize size{};
    // ioctl is variadic in POSIX; TIOCGWINSZ takes exactly one winsize*.
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg)
    if (!live_ || ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) != 0) {
      return 0;
    }
    return size.ws_col;
  }
  [[nodiscard]] std::chrono::steady_clock::time_point now() const override {
    return std::chrono::steady_clock::now();
  }
  [[nodiscard]] std::int64_t now_unix_nanos() const override { return core::now_unix_nanos(); }

 private:
  const SignalScope& signals_;
  bool live_;
  termios saved_{};
  bool keys_ = false;
};

class TopCommand final : public Command {
 public:
  explicit TopCommand(TopCommandOptions options) : options_(std::move(options)) {}

  Result<Output> run(const Invocation& /*invocation*/) const override {
    const SignalScope signals;
    ACCO_ASSIGN_OR_RETURN(const monitor::TopFeed feed,
                          options_.from
                              ? Result<monitor::TopFeed>(monitor::TopFeed::from_daemon(
                                    *options_.from, options_.interval))
                              : monitor::TopFeed::sample_here(options_.sysroot, options_.sources,
                                                              options_.interval, hostname()));
    const bool live = ::isatty(STDOUT_FILENO) == 1 && !options_.once;
    monitor::TopSessionOptions session{.interval = options_.interval,
                                       .frames = options_.once             ? 1
                                                 : options_.iterations > 0 ? options_.iterations
                                                                           : (live ? 0 : 1),
                                       .view = {}};
    session.view.colour = live;
    Terminal terminal(signals, live);
    if (live) {
      write_stdout(kHideCursor);
    }
    Output out;
    int drawn = 0;
    const Status ran = monitor::run_top(feed, terminal, session, [&](const std::string& text) {
      if (live) {
        write_stdout(kClear + text);
      } else if (session.frames == 1) {
        out.out = text;
      } else {
        write_stdout((drawn++ == 0 ? "" : "\n") + text);
      }
    });
    if (live) {
      write_stdout(kShowCursor);
    }
    ACCO_RETURN_IF_ERROR(ran);
    return out;
  }

 private:
  TopCommandOptions options_;
};

struct TopFlags {
  std::string from;
  MonitorFlags monitor;
  std::string iterations;
  bool once = false;
};

Result<TopCommandOptions> top_options(const TopFlags& flags, const core::Settings& settings) {
  TopCommandOptions o;
  if (!flags.from.empty()) {
    auto url = monitor::parse_server_url(flags.from);
    if (!url) {
      return bad_value("--from", flags.from, "HOST:PORT or http://HOST:PORT (e.g. 127.0.0.1:9477)");
    }
    o.from = *url;
    if (flags.monitor.simulate != 0) {
      return usage("--simulate: not used with --from (the daemon samples its own devices)");
    }
  }
  ACCO_ASSIGN_OR_RETURN(auto monitor, monitor_options(flags.monitor, settings));
  o.interval = monitor.interval;
  o.sources = monitor.sources;
  o.sysroot = monitor.sysroot;
  if (!flags.iterations.empty()) {
    const auto n = units::parse_int(flags.iterations);
    if (!n || *n < 1 || *n > 1'000'000'000) {
      return bad_value("--iterations", flags.iterations, "a frame count of 1 or more");
    }
    o.iterations = static_cast<int>(*n);
  }
  o.once = flags.once;
  return o;
}

}  // namespace

CommandSpec top_command() {
  return command_with_flags<TopFlags>(
      "top", "live terminal view of devices and host (sampled here or read from acco serve)",
      [](CLI::App& sub, SharedFlags& shared, TopFlags& flags) {
        sub.add_option(
               "--from", flags.from,
               "read a running acco serve instead of sampling here: HOST:PORT or http://HOST:PORT")
            ->type_name("ADDRESS");
        add_monitor_flags(sub, shared, flags.monitor, "refresh period (default 1s)");
        sub.add_option("--iterations", flags.iterations, "stop after N frames")->type_name("N");
        sub.add_flag("--once", flags.once, "print one frame without escape codes and exit");
      },
      [](const TopFlags& flags,
         const core::Settings& settings) -> Result<std::unique_ptr<Command>> {
        return command_from<TopCommand>(top_options(flags, settings));
      });
}

}  // namespace acco::cli
