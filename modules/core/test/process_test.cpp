// SIGTERM and SIGINT sent to this test process while a SignalScope blocks them: taken by the
// scope's wait, a StopOnSignal's thread or an InterruptWatch, never by a default action.
#include "acco/core/process.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <unistd.h>

namespace acco::core {
namespace {

using std::chrono::milliseconds;

TEST(SignalScope, TakesABlockedSignalOnceAndTimesOutWithoutOne) {
  const SignalScope signals;
  EXPECT_EQ(signals.wait(milliseconds(10)), 0);
  ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);
  EXPECT_EQ(signals.wait(milliseconds(1000)), SIGTERM);
  EXPECT_EQ(signals.wait(milliseconds(10)), 0);  // taken: not pending any more
}

TEST(StopOnSignal, RequestsAStopNamingTheSignal) {
  const SignalScope signals;
  StopFlag stop;
  {
    const StopOnSignal watch(signals, stop);
    ASSERT_EQ(::kill(::getpid(), SIGINT), 0);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!stop.requested() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(5));
    }
  }
  ASSERT_TRUE(stop.requested());
  EXPECT_EQ(stop.reason(), "SIGINT");
}

TEST(StopOnSignal, LeavesTheFlagAloneWithoutASignal) {
  const SignalScope signals;
  StopFlag stop;
  { const StopOnSignal watch(signals, stop); }  // gone within 100 ms, no stop requested
  EXPECT_FALSE(stop.requested());
}

TEST(InterruptWatch, AFirstSignalIsRequestedAndReportedOnce) {
  std::atomic<int> seen{0};
  const InterruptWatch watch([&seen](int signal) { seen = signal; });
  EXPECT_FALSE(watch.requested());
  ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (seen == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  EXPECT_EQ(seen, SIGTERM);
  EXPECT_TRUE(watch.requested());
}

TEST(Hostname, IsThisHostsName) {
  std::array<char, 256> name{};
  ASSERT_EQ(::gethostname(name.data(), name.size() - 1), 0);
  EXPECT_EQ(hostname(), std::string(name.data()));
}

}  // namespace
}  // namespace acco::core
