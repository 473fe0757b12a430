#include "acco/monitor/top_session.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "acco/analyze/json.hpp"
#include "acco/core/units.hpp"
#include "acco/monitor/sampler.hpp"

namespace acco::monitor {
namespace {

// How often a live view looks at its keys while it waits, so a key or a stop takes at most this.
constexpr std::chrono::milliseconds kKeyLook{50};
// How often a daemon is asked again for a round after the one on screen (a sampler here is
// looked at every 10 ms: that costs a copy, not a request).
constexpr std::chrono::milliseconds kDaemonPoll{100};
constexpr std::chrono::milliseconds kSamplerPoll{10};

// How a wait ended: its time passed, a stop ('q', a signal), or a key that changes the view.
enum class Woken {
  kTime,
  kStop,
  kKey
};

Woken pause(TopTerminal& terminal, std::chrono::milliseconds duration, char& key) {
  const auto until = terminal.now() + duration;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - terminal.now());
    if (left.count() <= 0) {
      return Woken::kTime;
    }
    key = terminal.wait_key(terminal.keys() ? std::min(left, kKeyLook) : left);
    if (key == 'q') {
      return Woken::kStop;
    }
    if (key == 's' || key == 'f') {
      return Woken::kKey;
    }
  }
}

// Waits an interval, or until a stop or a key; then reads rounds until one comes after the one
// on screen, for at most that round's own interval (the sampler's and this loop's clocks drift
// apart; a daemon may sample slower than this view draws). `round` gets the last read.
Woken wait_for_next(const TopFeed& feed, TopTerminal& terminal, std::chrono::milliseconds interval,
                    const std::optional<analyze::Snapshot>& current, char& key,
                    std::optional<Result<analyze::Snapshot>>& round) {
  if (const Woken woken = pause(terminal, interval, key); woken != Woken::kTime) {
    return woken;
  }
  round = feed.latest();
  if (!current) {
    return Woken::kTime;
  }
  const auto bound = current->stats.interval_seconds > 0
                         ? std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::duration<double>(current->stats.interval_seconds))
                         : interval;
  const auto until = terminal.now() + bound;
  while (*round && (*round)->time_unix_nanos == current->time_unix_nanos &&
         terminal.now() < until) {
    if (const Woken woken = pause(terminal, feed.poll(), key); woken != Woken::kTime) {
      return woken;
    }
    round = feed.latest();
  }
  return Woken::kTime;
}

// A read round into the view: a new one moves `current` to `previous` (the rates' round); a
// failed read once a frame is on screen becomes the status line under the header, and the
// frame stays. The error when there is no frame yet.
Status take(Result<analyze::Snapshot> snapshot, std::optional<analyze::Snapshot>& current,
            std::optional<analyze::Snapshot>& previous, TopOptions& view,
            std::chrono::milliseconds interval, std::int64_t now_unix_nanos) {
  view.status.clear();
  if (!snapshot) {
    if (!current) {
      return tl::unexpected(std::move(snapshot).error());
    }
    view.status = fmt::format(
        "{}: {} (retrying every {})", analyze::rfc3339(now_unix_nanos), snapshot.error().message,
        units::format_seconds(std::chrono::duration<double>(interval).count()));
  } else if (!current || snapshot->time_unix_nanos != current->time_unix_nanos) {
    previous = std::move(current);
    current = std::move(*snapshot);
  }
  return {};
}

}  // namespace

TopFeed::TopFeed(std::function<Result<analyze::Snapshot>()> latest, std::chrono::milliseconds poll,
                 std::string hostname, std::string source)
    : latest_(std::move(latest)),
      poll_(poll),
      hostname_(std::move(hostname)),
      source_(std::move(source)) {}

TopFeed::~TopFeed() = default;
TopFeed::TopFeed(TopFeed&&) noexcept = default;

TopFeed TopFeed::from_daemon(const ServerUrl& url, std::chrono::milliseconds interval) {
  const auto timeout = std::max(interval, std::chrono::milliseconds(1000));
  return {[url, timeout] { return fetch_snapshot(url, timeout); }, kDaemonPoll, url.host,
          "from " + url.text()};
}

Result<TopFeed> TopFeed::sample_here(const std::string& sysroot, const SourceOptions& sources,
                                     std::chrono::milliseconds interval, std::string hostname) {
  ACCO_ASSIGN_OR_RETURN(Sources made, make_sources(sysroot, sources));
  const std::string nvml = made.nvml_note.substr(0, made.nvml_note.find(' '));
  auto sampler = std::make_unique<Sampler>(std::move(made.devices), std::move(made.host),
                                           SamplerOptions{.interval = interval});
  sampler->start();
  const auto first = sampler->latest();
  TopFeed feed([s = sampler.get()]() -> Result<analyze::Snapshot> { return s->latest()->snapshot; },
               kSamplerPoll, std::move(hostname),
               fmt::format("{} device(s), NVML {}, host {}",
                           first ? first->snapshot.devices.size() : 0, nvml, sysroot));
  feed.fs_ = std::move(made.fs);
  feed.sampler_ = std::move(sampler);
  return feed;
}

bool apply_top_key(char key, const analyze::Snapshot& shown, TopOptions& view) {
  if (key == 's') {
    view.sort = next_sort(view.sort);
    return true;
  }
  if (key != 'f') {
    return false;
  }
  std::vector<std::string> ids;
  for (const auto& d : shown.devices) {
    ids.push_back(d.device);
  }
  const auto at = std::find(ids.begin(), ids.end(), view.device);
  view.device = view.device.empty()                      ? (ids.empty() ? "" : ids.front())
                : at == ids.end() || at + 1 == ids.end() ? ""
                                                         : *(at + 1);
  return true;
}

Status run_top(const TopFeed& feed, TopTerminal& terminal, const TopSessionOptions& options,
               const std::function<void(const std::string& frame)>& draw) {
  TopOptions view = options.view;
  view.hostname = feed.hostname();
  view.source = feed.source();
  view.keys = terminal.keys();
  std::optional<analyze::Snapshot> current;
  std::optional<analyze::Snapshot> previous;
  std::optional<Result<analyze::Snapshot>> round;
  if (options.frames ==
      1) {  // rates (CPU busy, network, disk) need two rounds: the first feeds them
    auto first = feed.latest();
    if (!first) {
      return tl::unexpected(first.error());
    }
    current = std::move(*first);
    char key = 0;
    if (wait_for_next(feed, terminal, options.interval, current, key, round) == Woken::kStop) {
      return {};  // stopped before a frame was drawn
    }
  }
  for (int drawn = 0; options.frames == 0 || drawn < options.frames;) {
    bool redraw = false;  // a key changed the view: the same round again, not a frame counted
    if (drawn > 0) {
      char key = 0;
      round.reset();
      const Woken woken = wait_for_next(feed, terminal, options.interval, current, key, round);
      if (woken == Woken::kStop) {
        break;
      }
      redraw = woken == Woken::kKey && current && apply_top_key(key, *current, view);
    }
    if (!redraw) {
      ACCO_RETURN_IF_ERROR(take(round ? std::move(*round) : feed.latest(), current, previous, view,
                                options.interval, terminal.now_unix_nanos()));
      round.reset();
      ++drawn;
    }
    view.width = terminal.width();
    draw(render_top(*current, previous ? &*previous : nullptr, view));
  }
  return {};
}

}  // namespace acco::monitor
