// The live loop of `acco top` as a library: rounds from a feed (a sampler started here or a
// running `acco serve`), keys and time from a terminal, frames out as text. The terminal is an
// interface, so the loop, its keys and its timing are tested with a scripted one and a fake clock.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "acco/analyze/snapshot.hpp"
#include "acco/core/fs.hpp"
#include "acco/core/result.hpp"
#include "acco/monitor/client.hpp"
#include "acco/monitor/sources.hpp"
#include "acco/monitor/top_view.hpp"

namespace acco::monitor {

class Sampler;

// Where the rounds come from. Move-only; a sampler started here stops when the feed goes.
class TopFeed {
 public:
  // Rounds from `latest`, looked at every `poll` while waiting for the round after the one on
  // screen; `hostname` and `source` go into the header.
  TopFeed(std::function<Result<analyze::Snapshot>()> latest, std::chrono::milliseconds poll,
          std::string hostname, std::string source);
  ~TopFeed();
  TopFeed(TopFeed&& other) noexcept;
  // Not assignable: a running sampler must stop before the files it reads go.
  TopFeed& operator=(TopFeed&& other) = delete;
  TopFeed(const TopFeed&) = delete;
  TopFeed& operator=(const TopFeed&) = delete;

  // A running acco serve at `url`, fetched with a timeout of `interval` (at least a second): a
  // daemon that does not answer by then is late, and the view says so rather than freezing.
  [[nodiscard]] static TopFeed from_daemon(const ServerUrl& url,
                                           std::chrono::milliseconds interval);
  // A sampler started here over the sources under `sysroot`, one round per `interval`;
  // `hostname` is this host's name for the header. Errors: make_sources' (NVML required but
  // absent, a bad sysroot).
  [[nodiscard]] static Result<TopFeed> sample_here(const std::string& sysroot,
                                                   const SourceOptions& sources,
                                                   std::chrono::milliseconds interval,
                                                   std::string hostname);

  // The latest round, or why it could not be read (a daemon down or late).
  [[nodiscard]] Result<analyze::Snapshot> latest() const { return latest_(); }
  [[nodiscard]] std::chrono::milliseconds poll() const { return poll_; }
  [[nodiscard]] const std::string& hostname() const { return hostname_; }
  [[nodiscard]] const std::string& source() const { return source_; }

 private:
  std::function<Result<analyze::Snapshot>()> latest_;
  std::chrono::milliseconds poll_;
  std::string hostname_;
  std::string source_;
  std::unique_ptr<core::Fs> fs_;      // what the sampler's sources read: outlives them
  std::unique_ptr<Sampler> sampler_;  // null for a daemon's rounds
};

// The screen the loop draws on: its keys, its width and its clocks. The CLI's terminal reads
// stdin raw and takes SIGTERM/SIGINT as 'q'; tests script keys on a fake clock.
class TopTerminal {
 public:
  virtual ~TopTerminal() = default;
  // Waits up to `timeout` for a key: the key typed (lower case; 'q' also for a stop such as a
  // signal), or 0 when the time passed without one.
  [[nodiscard]] virtual char wait_key(std::chrono::milliseconds timeout) = 0;
  // Whether keys are read at all (a terminal on stdin); without them only a stop ends a wait.
  [[nodiscard]] virtual bool keys() const = 0;
  // Columns to fit the frame to; 0: not cut.
  [[nodiscard]] virtual std::size_t width() const = 0;
  [[nodiscard]] virtual std::chrono::steady_clock::time_point now() const = 0;
  // The wall clock, for the time on a failed fetch's status line.
  [[nodiscard]] virtual std::int64_t now_unix_nanos() const = 0;
};

struct TopSessionOptions {
  std::chrono::milliseconds interval{1000};  // a frame per interval
  // Frames drawn before the session ends (redraws after a key do not count); 0: until 'q'. One
  // frame waits for a second round first, so its rates have two rounds behind them.
  int frames = 0;
  TopOptions view;  // colour and the keys line; hostname and source come from the feed
};

// The `s` and `f` keys on the view: the next sort order, or the next device of `shown` to show
// alone (after the last, every device again). False for any other key (the view is unchanged).
bool apply_top_key(char key, const analyze::Snapshot& shown, TopOptions& view);

// Draws frames of `feed` onto `draw` (text without clear-screen codes) until `options.frames`
// frames are drawn or the terminal says 'q'. Between frames it waits an interval, then up to the
// shown round's own interval (the sampler's, or the daemon's) for a round after the one on
// screen, so no frame repeats a round while a newer one is due. A failed read once a frame is on
// screen becomes the status line and the frame stays. Errors: the first round's read failure.
// Not thread-safe; runs on the caller's thread.
[[nodiscard]] Status run_top(const TopFeed& feed, TopTerminal& terminal,
                             const TopSessionOptions& options,
                             const std::function<void(const std::string& frame)>& draw);

}  // namespace acco::monitor
