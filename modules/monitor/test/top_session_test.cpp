#include "acco/monitor/top_session.hpp"

#include <chrono>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace acco::monitor {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::int64_t kStart = 1'764'600'000'000'000'000;

// A terminal on a fake clock: a wait passes its whole timeout at once unless a scripted key falls
// inside it, which ends the wait at the key's time.
class ScriptedTerminal final : public TopTerminal {
 public:
  explicit ScriptedTerminal(std::vector<std::pair<std::chrono::milliseconds, char>> keys,
                            bool with_keys = true)
      : keys_(keys.begin(), keys.end()), with_keys_(with_keys) {}

  char wait_key(std::chrono::milliseconds timeout) override {
    ++waits;
    if (!keys_.empty() && keys_.front().first <= elapsed_ + timeout) {
      elapsed_ = std::max(elapsed_, keys_.front().first);
      const char key = keys_.front().second;
      keys_.pop_front();
      return key;
    }
    elapsed_ += timeout;
    return 0;
  }
  [[nodiscard]] bool keys() const override { return with_keys_; }
  [[nodiscard]] std::size_t width() const override { return 0; }
  [[nodiscard]] std::chrono::steady_clock::time_point now() const override {
    return std::chrono::steady_clock::time_point(elapsed_);
  }
  [[nodiscard]] std::int64_t now_unix_nanos() const override {
    return kStart + std::chrono::nanoseconds(elapsed_).count();
  }
  [[nodiscard]] std::chrono::milliseconds elapsed() const { return elapsed_; }

  int waits = 0;

 private:
  std::deque<std::pair<std::chrono::milliseconds, char>> keys_;
  bool with_keys_;
  std::chrono::milliseconds elapsed_{0};
};

analyze::Snapshot round_at(std::uint64_t n, double interval_seconds) {
  analyze::Snapshot s;
  s.time_unix_nanos = kStart + static_cast<std::int64_t>(n) * 1'000'000'000;
  s.stats.rounds = n;
  s.stats.interval_seconds = interval_seconds;
  for (const char* id : {"0", "1", "2"}) {
    power::DeviceSample d;
    d.device = id;
    d.model = "simulated";
    d.source = "simulated";
    s.devices.push_back(d);
  }
  return s;
}

// A source that takes a round every `interval` on the terminal's clock (round 1 at time 0).
TopFeed rounds_every(const ScriptedTerminal& terminal, std::chrono::milliseconds interval,
                     int* reads = nullptr) {
  return {[&terminal, interval, reads]() -> Result<analyze::Snapshot> {
            if (reads != nullptr) {
              ++*reads;
            }
            const auto n = static_cast<std::uint64_t>(terminal.elapsed() / interval) + 1;
            return round_at(n, std::chrono::duration<double>(interval).count());
          },
          100ms, "node-1", "from http://node-1:9477"};
}

std::vector<std::string> run(const TopFeed& feed, ScriptedTerminal& terminal, int frames,
                             std::chrono::milliseconds interval = 1000ms) {
  std::vector<std::string> drawn;
  const auto status = run_top(feed, terminal, {.interval = interval, .frames = frames, .view = {}},
                              [&](const std::string& frame) { drawn.push_back(frame); });
  EXPECT_TRUE(status.has_value()) << status.error().message;
  return drawn;
}

TEST(TopSessionTest, TheSKeyStepsThroughTheSortOrdersAndBack) {
  const auto shown = round_at(1, 1);
  TopOptions view;
  std::vector<std::string> orders;
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(apply_top_key('s', shown, view));
    orders.emplace_back(to_string(view.sort));
  }
  EXPECT_EQ(orders, (std::vector<std::string>{"util", "power", "temp", "id"}));
}

TEST(TopSessionTest, TheFKeyShowsEachDeviceAloneThenAllAgain) {
  const auto shown = round_at(1, 1);
  TopOptions view;
  std::vector<std::string> devices;
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(apply_top_key('f', shown, view));
    devices.push_back(view.device);
  }
  EXPECT_EQ(devices, (std::vector<std::string>{"0", "1", "2", ""}));
  view.device = "7";  // a device gone from the round: back to all
  EXPECT_TRUE(apply_top_key('f', shown, view));
  EXPECT_EQ(view.device, "");
}

TEST(TopSessionTest, OtherKeysLeaveTheViewAlone) {
  const auto shown = round_at(1, 1);
  TopOptions view;
  EXPECT_FALSE(apply_top_key('x', shown, view));
  EXPECT_FALSE(apply_top_key(0, shown, view));
  EXPECT_EQ(view.sort, TopSort::kId);
  EXPECT_EQ(view.device, "");
}

TEST(TopSessionTest, AKeyRedrawsAtOnceAndDoesNotCountAsAFrame) {
  ScriptedTerminal terminal({{1500ms, 's'}});
  const auto feed = rounds_every(terminal, 1000ms);
  const auto frames = run(feed, terminal, 3);
  ASSERT_EQ(frames.size(), 4U);  // three rounds and one redraw
  EXPECT_THAT(frames[1], HasSubstr("round 2 every"));
  EXPECT_THAT(frames[1], HasSubstr("sort (by id)"));
  EXPECT_THAT(frames[2], HasSubstr("round 2 every"));  // the same round, sorted anew
  EXPECT_THAT(frames[2], HasSubstr("sort (by util)"));
  EXPECT_THAT(frames[3], HasSubstr("round 3 every"));
  EXPECT_THAT(frames[3], HasSubstr("sort (by util)"));
}

TEST(TopSessionTest, QStopsBetweenFrames) {
  ScriptedTerminal terminal({{2500ms, 'q'}});
  const auto feed = rounds_every(terminal, 1000ms);
  const auto frames = run(feed, terminal, 0);
  EXPECT_EQ(frames.size(), 3U);  // at 0, 1 s and 2 s
  EXPECT_EQ(terminal.elapsed(), 2500ms);
}

TEST(TopSessionTest, OneFrameFromASlowerDaemonWaitsForItsNextRound) {
  ScriptedTerminal terminal({}, false);
  int reads = 0;
  const auto feed = rounds_every(terminal, 5000ms, &reads);
  const auto frames = run(feed, terminal, 1);
  ASSERT_EQ(frames.size(), 1U);
  // Round 1 fed the rates; after a second the daemon still shows it, so the view asks again
  // until round 2 is there rather than drawing round 1 twice.
  EXPECT_THAT(frames[0], HasSubstr("round 2 every 5.00 s"));
  EXPECT_EQ(terminal.elapsed(), 5000ms);
  EXPECT_GT(reads, 2);
}

TEST(TopSessionTest, ADaemonThatStaysOnOneRoundIsAskedForAtMostItsInterval) {
  ScriptedTerminal terminal({}, false);
  const TopFeed feed([] { return Result<analyze::Snapshot>(round_at(1, 2)); }, 100ms, "node-1",
                     "from http://node-1:9477");
  const auto frames = run(feed, terminal, 1);
  ASSERT_EQ(frames.size(), 1U);
  EXPECT_THAT(frames[0], HasSubstr("round 1 every"));
  EXPECT_EQ(terminal.elapsed(), 3000ms);  // the view's second, then the daemon's two
}

TEST(TopSessionTest, AFailedReadAfterAFrameIsTheStatusLineAndTheFrameStays) {
  ScriptedTerminal terminal({});
  int reads = 0;
  const TopFeed feed(
      [&]() -> Result<analyze::Snapshot> {
        if (++reads == 2) {
          return fail(Errc::kUnavailable, "cannot reach node-1:9477");
        }
        return round_at(static_cast<std::uint64_t>(reads), 1);
      },
      100ms, "node-1", "from http://node-1:9477");
  const auto frames = run(feed, terminal, 3);
  ASSERT_EQ(frames.size(), 3U);
  EXPECT_THAT(frames[1], HasSubstr("round 1 every"));
  EXPECT_THAT(frames[1], HasSubstr("cannot reach node-1:9477 (retrying every 1.00 s)"));
  EXPECT_THAT(frames[2], HasSubstr("round 3 every"));
  EXPECT_THAT(frames[2], Not(HasSubstr("cannot reach")));
}

TEST(TopSessionTest, AFailedFirstReadIsTheError) {
  ScriptedTerminal terminal({});
  const TopFeed feed(
      []() -> Result<analyze::Snapshot> {
        return fail(Errc::kUnavailable, "cannot reach node-1:9477");
      },
      100ms, "node-1", "from http://node-1:9477");
  int drawn = 0;
  const auto status = run_top(feed, terminal, {.interval = 1000ms, .frames = 2, .view = {}},
                              [&](const std::string&) { ++drawn; });
  ASSERT_FALSE(status.has_value());
  EXPECT_EQ(status.error().message, "cannot reach node-1:9477");
  EXPECT_EQ(drawn, 0);
}

}  // namespace
}  // namespace acco::monitor
