// `acco top` run for real: one frame on a pipe, a frame read from a running `acco serve`, the
// live view redrawn inside a tmux pane, and its errors (an unreachable daemon, bad flags).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon.hpp"
#include "sysroot_builder.hpp"

namespace acco::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kCleanEnv =
    "env -u ACCO_SYSROOT -u ACCO_NVML -u ACCO_NVML_LIBRARY -u ACCO_CONFIG ";

struct Run {
  int exit_code = -1;
  std::string out;
  std::string err;
};

Run run_top(const std::string& args) {
  TempDir io;
  const std::string cmd = std::string(kCleanEnv) + "timeout 60 " + ACCO_BINARY + " top " + args +
                          " >" + (io.path() / "out").string() + " 2>" +
                          (io.path() / "err").string() + " </dev/null";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(io.path() / "out"),
          slurp(io.path() / "err")};
}

// The frame's line for device `id`, or "".
std::string device_row(const std::string& frame, const std::string& id) {
  std::istringstream in(frame);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(id + "  ", 0) == 0) {
      return line;
    }
  }
  return "";
}

int round_of(const std::string& frame) {
  std::smatch m;
  return std::regex_search(frame, m, std::regex("round ([0-9]+) every ")) ? std::stoi(m[1]) : -1;
}

TEST(TopTest, OnceWithSimulatedDevicesPrintsOneFrameWithBoth) {
  const auto r = run_top("--once --simulate 2 --nvml off --interval 200ms");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("2 device(s), NVML off, host /"));
  EXPECT_THAT(r.out, HasSubstr("POWER W / LIMIT W"));
  for (const char* id : {"0", "1"}) {
    const auto row = device_row(r.out, id);
    EXPECT_THAT(row, HasSubstr("sim H100-class 700 W")) << r.out;
    EXPECT_THAT(row, HasSubstr("  ok")) << r.out;
  }
  EXPECT_THAT(r.out, Not(HasSubstr("\x1b")));
  // One frame, drawn on the second round so the host's rates have two rounds behind them.
  EXPECT_GE(round_of(r.out), 2) << r.out;
  EXPECT_THAT(r.out, Not(HasSubstr("CPU % BUSY - of"))) << r.out;
  EXPECT_THAT(r.out, HasSubstr("\nNET   ")) << r.out;
  EXPECT_THAT(r.out, Not(HasSubstr("\nNET   -"))) << r.out;
  EXPECT_THAT(r.out, Not(HasSubstr("\nDISK  -"))) << r.out;
}

TEST(TopTest, PipeWithoutOnceGetsOneFrameAndIterationsGiveMore) {
  const auto one = run_top("--simulate 1 --nvml off");
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out.find("acco top - "), one.out.rfind("acco top - "));
  const auto two = run_top("--simulate 1 --nvml off --iterations 2 --interval 200ms");
  EXPECT_EQ(two.exit_code, 0) << two.err;
  EXPECT_NE(two.out.find("acco top - "), two.out.rfind("acco top - ")) << two.out;
  EXPECT_THAT(two.out, Not(HasSubstr("\x1b")));
  EXPECT_THAT(two.out, Not(HasSubstr("CPU % BUSY - of 0")));
}

TEST(TopTest, FromReadsTheDevicesOfARunningDaemon) {
  Daemon d({"--simulate", "2", "--listen", "127.0.0.1:0", "--interval", "200ms", "--nvml", "off"});
  ASSERT_GT(d.port(), 0) << d.early_stderr();
  const std::string url = "http://127.0.0.1:" + std::to_string(d.port());
  const auto r = run_top("--from " + url + " --once");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("from " + url));
  EXPECT_THAT(device_row(r.out, "0"), HasSubstr("sim H100-class 700 W")) << r.out;
  EXPECT_THAT(device_row(r.out, "1"), HasSubstr("sim H100-class 700 W")) << r.out;
  EXPECT_GE(round_of(r.out), 1) << r.out;
  // HOST:PORT as acco serve --listen takes it.
  const auto bare = run_top("--from 127.0.0.1:" + std::to_string(d.port()) + " --once");
  EXPECT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_THAT(bare.out, HasSubstr("from " + url));
  EXPECT_EQ(d.stop(SIGTERM).exit_code, 0);
}

TEST(TopTest, UnreachableDaemonIsOneLineAndExit69) {
  // Port 1 (tcpmux) is not served on a test machine.
  const auto r = run_top("--from http://127.0.0.1:1 --once");
  EXPECT_EQ(r.exit_code, 69);
  EXPECT_THAT(r.err, HasSubstr("acco: cannot reach http://127.0.0.1:1/api/v1/snapshot"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(TopTest, BadFlagsAreOneLineAndExit64) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--interval 10ms", "--interval: '10ms' is not a duration from 100ms to 1h"},
      {"--interval soon", "--interval: 'soon' is not a duration"},
      {"--iterations 0", "--iterations: '0' is not a frame count of 1 or more"},
      {"--iterations many", "--iterations: 'many' is not a frame count"},
      {"--from https://127.0.0.1:9477", "--from: 'https://127.0.0.1:9477' is not HOST:PORT or "},
      {"--from http://host:port",
       "--from: 'http://host:port' is not HOST:PORT or http://HOST:PORT"},
      {"--scenario hot", "--scenario: 'hot' is not one of cycle, idle"},
      {"--simulate 100", "--simulate: '100' is not a device count from 0 to 64"},
      {"--from http://127.0.0.1:9477 --simulate 2", "--simulate: not used with --from"},
  };
  for (const auto& [args, message] : cases) {
    const auto r = run_top(args);
    EXPECT_EQ(r.exit_code, 64) << args;
    EXPECT_THAT(r.err, HasSubstr(message)) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// The live view in a real terminal: a detached tmux pane (160x50 unless told) on a server of
// its own.
class TmuxSession {
 public:
  explicit TmuxSession(const std::string& command, int columns = 160)
      : socket_("acco-top-test-" + std::to_string(::getpid()) + "-" + std::to_string(columns)) {
    const std::string cmd = "tmux -L " + socket_ + " -f /dev/null new-session -d -s top -x " +
                            std::to_string(columns) + " -y 50 '" + kCleanEnv + command + "'";
    started_ = std::system(cmd.c_str()) == 0;
  }
  ~TmuxSession() {
    const std::string cmd = "tmux -L " + socket_ + " kill-session -t top >/dev/null 2>&1";
    (void)std::system(cmd.c_str());
  }
  TmuxSession(const TmuxSession&) = delete;
  TmuxSession& operator=(const TmuxSession&) = delete;

  [[nodiscard]] bool started() const { return started_; }
  void send_keys(const std::string& keys) const {
    const std::string cmd = "tmux -L " + socket_ + " send-keys -t top " + keys;
    (void)std::system(cmd.c_str());
  }
  // Whether the session (its one pane, acco top) still runs.
  [[nodiscard]] bool alive() const {
    const std::string cmd = "tmux -L " + socket_ + " has-session -t top >/dev/null 2>&1";
    return std::system(cmd.c_str()) == 0;
  }
  [[nodiscard]] std::string capture() const {
    TempDir io;
    const std::string cmd = "tmux -L " + socket_ + " capture-pane -p -t top > " +
                            (io.path() / "pane").string() + " 2>&1";
    (void)std::system(cmd.c_str());
    return slurp(io.path() / "pane");
  }

 private:
  std::string socket_;
  bool started_ = false;
};

// The pane's text once it shows a frame at or after `round` (at most 10 s).
std::string capture_round(const TmuxSession& tmux, int round) {
  std::string pane;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    pane = tmux.capture();
    if (round_of(pane) >= round && !device_row(pane, "1").empty()) {
      return pane;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return pane;
}

TEST(TopTest, LiveViewRedrawsInATmuxPaneAndQQuits) {
  if (!have("tmux")) {
    GTEST_SKIP() << "tmux is not installed (Debian package tmux)";
  }
  const TmuxSession tmux(std::string(ACCO_BINARY) +
                         " top --simulate 2 --nvml off --interval 200ms");
  ASSERT_TRUE(tmux.started());
  const auto first = capture_round(tmux, 1);
  const int first_round = round_of(first);
  ASSERT_GE(first_round, 1) << first;
  EXPECT_THAT(device_row(first, "0"), HasSubstr("sim H100-class 700 W")) << first;
  EXPECT_THAT(device_row(first, "1"), HasSubstr("sim H100-class 700 W")) << first;
  // One frame on the screen, not frames scrolled one under the other.
  EXPECT_EQ(first.find("acco top - "), first.rfind("acco top - ")) << first;
  // Every fixed column fits in 160: the state is on screen.
  EXPECT_THAT(device_row(first, "1"), HasSubstr("  ok")) << first;
  const auto later = capture_round(tmux, first_round + 2);
  EXPECT_GT(round_of(later), first_round) << later;
  EXPECT_THAT(later, HasSubstr("CPU % BUSY ")) << later;
  EXPECT_THAT(later, Not(HasSubstr("CPU % BUSY - of"))) << later;  // rates after two rounds
  tmux.send_keys("q");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (tmux.alive() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_FALSE(tmux.alive()) << "q did not end acco top";
}

// The pane's text once `pred` holds for it (at most 10 s).
template <typename Pred>
std::string capture_until(const TmuxSession& tmux, Pred pred) {
  std::string pane;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    pane = tmux.capture();
    if (pred(pane)) {
      return pane;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return pane;
}

class TopWidthTest : public ::testing::TestWithParam<int> {};

TEST_P(TopWidthTest, TheFrameFitsThePaneAndTheKeysSortAndFilter) {
  if (!have("tmux")) {
    GTEST_SKIP() << "tmux is not installed (Debian package tmux)";
  }
  const int columns = GetParam();
  const TmuxSession tmux(std::string(ACCO_BINARY) + " top --simulate 3 --nvml off --interval 200ms",
                         columns);
  ASSERT_TRUE(tmux.started());
  const auto first = capture_round(tmux, 1);
  ASSERT_GE(round_of(first), 1) << first;
  std::istringstream in(first);
  for (std::string line; std::getline(in, line);) {
    EXPECT_LE(static_cast<int>(line.size()), columns) << line;
  }
  EXPECT_THAT(first, HasSubstr("keys: q quit   s sort (by id)   f device (all)")) << first;
  if (columns >= 160) {
    EXPECT_THAT(first, Not(HasSubstr("hidden to fit"))) << first;
  } else {
    EXPECT_THAT(first, HasSubstr("hidden to fit " + std::to_string(columns) +
                                 " columns: SM MHz / MAX, PCIe TX GB/s (%)"))
        << first;
  }
  EXPECT_THAT(device_row(first, "2"), HasSubstr(" ok ")) << "STATE is never hidden: " << first;
  tmux.send_keys("s");
  const auto sorted = capture_until(tmux, [](const std::string& pane) {
    return pane.find("s sort (by util)") != std::string::npos;
  });
  EXPECT_THAT(sorted, HasSubstr("s sort (by util)")) << sorted;
  tmux.send_keys("f");
  const auto one = capture_until(
      tmux, [](const std::string& pane) { return pane.find("f device (0)") != std::string::npos; });
  EXPECT_THAT(one, HasSubstr("f device (0)")) << one;
  EXPECT_FALSE(device_row(one, "0").empty()) << one;
  EXPECT_TRUE(device_row(one, "1").empty()) << one;
  tmux.send_keys("q");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (tmux.alive() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_FALSE(tmux.alive()) << "q did not end acco top";
}

INSTANTIATE_TEST_SUITE_P(Columns, TopWidthTest, ::testing::Values(80, 100, 160));

}  // namespace
}  // namespace acco::testing
