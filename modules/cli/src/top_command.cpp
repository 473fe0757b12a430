// `acco top`: a live terminal view of the devices and the host. Samples the sources itself
// (NVML, simulated devices, the host) or reads a running `acco serve` with --from, and redraws
// a plain-ANSI frame every interval, so it works over ssh and inside tmux without curses. A
// stdout that is not a terminal, or --once, gets one frame without escape codes.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "acco/analyze/json.hpp"
#include "acco/core/clock.hpp"
#include "acco/core/units.hpp"
#include "acco/monitor/client.hpp"
#include "acco/monitor/sampler.hpp"
#include "acco/monitor/sources.hpp"
#include "acco/monitor/top_view.hpp"
#include "acco/power/simulated_device.hpp"

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

std::size_t terminal_width() {
  winsize size{};
  // ioctl is variadic in POSIX; TIOCGWINSZ takes exactly one winsize*.
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg)
  const int rc = ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size);
  if (rc != 0 || size.ws_col == 0) {
    return 0;
  }
  return size.ws_col;
}

// The live view's keys: a terminal stdin goes non-canonical without echo, so a 'q' arrives at
// once and is not printed over the frame; the terminal's settings come back at the end.
class Keys {
 public:
  explicit Keys(bool enabled) {
    if (enabled && ::isatty(STDIN_FILENO) == 1 && ::tcgetattr(STDIN_FILENO, &saved_) == 0) {
      termios raw = saved_;
      raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
      raw.c_cc[VMIN] = 0;
      raw.c_cc[VTIME] = 0;
      active_ = ::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
    }
  }
  ~Keys() {
    if (active_) {
      ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
    }
  }
  Keys(const Keys&) = delete;
  Keys& operator=(const Keys&) = delete;

  [[nodiscard]] bool active() const { return active_; }
  // The last key typed within `timeout` (q first when it came), or 0.
  [[nodiscard]] char key(std::chrono::milliseconds timeout) const {
    if (!active_) {
      return 0;
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

 private:
  termios saved_{};
  bool active_ = false;
};

// How a wait ended: its time passed, a stop (SIGTERM, SIGINT, q), or a key that changes the view.
enum class Woken {
  kTime,
  kStop,
  kKey
};

// Sleeps `duration`. With keys it looks at them and the signals every 50 ms, so a stop takes at
// most that long; `key` gets the key that ended the wait.
Woken pause(const SignalScope& signals, const Keys& keys, std::chrono::milliseconds duration,
            char& key) {
  if (!keys.active()) {
    return signals.wait(duration) == 0 ? Woken::kTime : Woken::kStop;
  }
  const auto until = std::chrono::steady_clock::now() + duration;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return Woken::kTime;
    }
    if (signals.wait(std::chrono::milliseconds(0)) != 0) {
      return Woken::kStop;
    }
    key = keys.key(std::min(left, std::chrono::milliseconds(50)));
    if (key == 'q') {
      return Woken::kStop;
    }
    if (key == 's' || key == 'f') {
      return Woken::kKey;
    }
  }
}

// The `s` and `f` keys: the next sort order, or the next device to show alone (then all again).
void apply_key(char key, const analyze::Snapshot& shown, monitor::TopOptions& view) {
  if (key == 's') {
    view.sort = monitor::next_sort(view.sort);
    return;
  }
  std::vector<std::string> ids;
  for (const auto& d : shown.devices) {
    ids.push_back(d.device);
  }
  const auto at = std::find(ids.begin(), ids.end(), view.device);
  view.device = view.device.empty()                      ? (ids.empty() ? "" : ids.front())
                : at == ids.end() || at + 1 == ids.end() ? ""
                                                         : *(at + 1);
}

// Where the frames come from: a running acco serve (--from), or a sampler started here.
struct Feed {
  std::function<Result<analyze::Snapshot>()> next;
  std::unique_ptr<core::Fs> fs;               // what the sampler's sources read: outlives them
  std::unique_ptr<monitor::Sampler> sampler;  // null with --from
  std::string hostname;
  std::string source;  // the header's "2 device(s), NVML off, host /" or "from http://..."
};

Result<Feed> open_feed(const TopCommandOptions& options) {
  Feed feed;
  if (options.from) {
    feed.hostname = options.from->host;
    feed.source = "from " + options.from->text();
    // A daemon that does not answer within an interval (at least a second) is late: the
    // view says so and tries again rather than freezing.
    const auto timeout = std::max(options.interval, std::chrono::milliseconds(1000));
    feed.next = [url = *options.from, timeout] { return monitor::fetch_snapshot(url, timeout); };
    return feed;
  }
  ACCO_ASSIGN_OR_RETURN(monitor::Sources sources,
                        monitor::make_sources(options.sysroot, options.sources));
  const std::string nvml = sources.nvml_note.substr(0, sources.nvml_note.find(' '));
  feed.fs = std::move(sources.fs);
  feed.sampler =
      std::make_unique<monitor::Sampler>(std::move(sources.devices), std::move(sources.host),
                                         monitor::SamplerOptions{.interval = options.interval});
  feed.sampler->start();
  const auto first = feed.sampler->latest();
  feed.hostname = hostname();
  feed.source = fmt::format("{} device(s), NVML {}, host {}",
                            first ? first->snapshot.devices.size() : 0, nvml, options.sysroot);
  feed.next = [sampler = feed.sampler.get()]() -> Result<analyze::Snapshot> {
    return sampler->latest()->snapshot;
  };
  return feed;
}

// A fetched round into the view: a new one moves `current` to `previous` (the rates' round); a
// failed fetch once a frame is on screen becomes the status line under the header, and the
// frame stays. The error when there is no frame yet.
Status take(Result<analyze::Snapshot> snapshot, std::optional<analyze::Snapshot>& current,
            std::optional<analyze::Snapshot>& previous, monitor::TopOptions& view,
            std::chrono::milliseconds interval) {
  view.status.clear();
  if (!snapshot) {
    if (!current) {
      return tl::unexpected(std::move(snapshot).error());
    }
    view.status =
        fmt::format("{}: {} (retrying every {})", analyze::rfc3339(core::now_unix_nanos()),
                    snapshot.error().message,
                    units::format_seconds(std::chrono::duration<double>(interval).count()));
  } else if (!current || snapshot->time_unix_nanos != current->time_unix_nanos) {
    previous = std::move(current);
    current = std::move(*snapshot);
  }
  return {};
}

class TopCommand final : public Command {
 public:
  explicit TopCommand(TopCommandOptions options) : options_(std::move(options)) {}

  Result<Output> run(const Invocation& /*invocation*/) const override {
    const SignalScope signals;
    monitor::TopOptions view;
    ACCO_ASSIGN_OR_RETURN(Feed feed, open_feed(options_));
    view.hostname = feed.hostname;
    view.source = feed.source;
    const auto next = [&feed] { return feed.next(); };
    std::unique_ptr<monitor::Sampler>& sampler = feed.sampler;

    const bool terminal = ::isatty(STDOUT_FILENO) == 1;
    const bool live = terminal && !options_.once;
    const int frames = options_.once             ? 1
                       : options_.iterations > 0 ? options_.iterations
                                                 : (live ? 0 : 1);
    view.colour = live;
    const Keys keys(live);
    std::optional<analyze::Snapshot> current;
    std::optional<analyze::Snapshot> previous;
    std::string streamed;
    if (frames == 1) {  // rates (CPU busy, network, disk) need two rounds: the first feeds them
      auto first = next();
      if (!first) {
        return tl::unexpected(first.error());
      }
      current = std::move(*first);
      char key = 0;
      if (wait_for_next(signals, keys, sampler.get(), current, key) == Woken::kStop) {
        return Output{};  // stopped before a frame was drawn
      }
    }
    if (live) {
      write_stdout(kHideCursor);
    }
    view.keys = keys.active();
    for (int frame = 0; frames == 0 || frame < frames; ++frame) {
      bool redraw = false;  // a key changed the view: the same round again
      if (frame > 0) {
        char key = 0;
        const Woken woken = wait_for_next(signals, keys, sampler.get(), current, key);
        if (woken == Woken::kStop) {
          break;
        }
        if (woken == Woken::kKey && current) {
          apply_key(key, *current, view);
          redraw = true;
        }
      }
      if (!redraw) {
        if (auto taken = take(next(), current, previous, view, options_.interval); !taken) {
          if (live) {
            write_stdout(kShowCursor);
          }
          return tl::unexpected(taken.error());
        }
      }
      view.width = live ? terminal_width() : 0;
      const std::string text = monitor::render_top(*current, previous ? &*previous : nullptr, view);
      if (live) {
        write_stdout(kClear + text);
      } else if (frames == 1) {
        streamed = text;
      } else {
        write_stdout((frame == 0 ? "" : "\n") + text);
      }
    }
    if (sampler) {
      sampler->stop();
    }
    if (live) {
      write_stdout(kShowCursor);
    }
    Output out;
    out.out = streamed;
    return out;
  }

 private:
  // Waits an interval, or until a stop or a key. The sampler's clock and this loop's drift
  // apart, so with a sampler it then waits (up to another interval) for the round after the one
  // on screen: no frame repeats a round and every rate has two rounds behind it.
  Woken wait_for_next(const SignalScope& signals, const Keys& keys, const monitor::Sampler* sampler,
                      const std::optional<analyze::Snapshot>& current, char& key) const {
    if (const Woken woken = pause(signals, keys, options_.interval, key); woken != Woken::kTime) {
      return woken;
    }
    if (sampler == nullptr || !current) {
      return Woken::kTime;
    }
    const auto until = std::chrono::steady_clock::now() + options_.interval;
    while (sampler->latest()->snapshot.stats.rounds == current->stats.rounds &&
           std::chrono::steady_clock::now() < until) {
      if (const Woken woken = pause(signals, keys, std::chrono::milliseconds(10), key);
          woken != Woken::kTime) {
        return woken;
      }
    }
    return Woken::kTime;
  }

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
