#include "acco/monitor/checks.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace acco::monitor {
namespace {

using ::testing::ElementsAre;

topo::Finding finding(const char* rule, topo::Severity s, std::vector<std::string> devices) {
  topo::Finding f;
  f.rule = rule;
  f.severity = s;
  f.devices = std::move(devices);
  f.message = std::string(rule) + " message";
  return f;
}

std::vector<std::string> kinds_and_levels(const std::vector<analyze::Event>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    out.push_back(e.event + " " + e.level);
  }
  return out;
}

TEST(ChecksTest, FirstProbeReportsWarningsAndCriticalsOnly) {
  const std::vector<topo::Finding> now = {
      finding("ib-port-down", topo::Severity::kCritical, {"mlx5_0"}),
      finding("numa-unknown", topo::Severity::kWarning, {"0000:18:00.0"}),
      finding("nvml-unavailable", topo::Severity::kInfo, {})};
  const auto events = finding_events(std::nullopt, now, 5);
  EXPECT_THAT(kinds_and_levels(events),
              ElementsAre("finding_appeared error", "finding_appeared warning"));
  EXPECT_EQ(events[0].message, "[critical] ib-port-down: ib-port-down message");
  EXPECT_EQ(events[0].time_unix_nanos, 5);
}

TEST(ChecksTest, LaterProbesReportWhatAppearedAndWhatCleared) {
  const std::vector<topo::Finding> before = {
      finding("ib-port-down", topo::Severity::kCritical, {"mlx5_0"}),
      finding("numa-unknown", topo::Severity::kWarning, {"0000:18:00.0"})};
  const std::vector<topo::Finding> after = {
      finding("numa-unknown", topo::Severity::kWarning, {"0000:18:00.0"}),
      finding("ib-port-down", topo::Severity::kCritical, {"mlx5_1"}),  // another port
      finding("nvml-unavailable", topo::Severity::kInfo, {})};
  EXPECT_THAT(
      kinds_and_levels(finding_events(before, after, 1)),
      ElementsAre("finding_appeared error", "finding_appeared info", "finding_cleared info"));
  EXPECT_TRUE(finding_events(after, after, 1).empty());
}

TEST(ChecksTest, ARegressionIsAWarningWithItsNumbers) {
  BenchRegression worse;
  worse.case_key = "h2d_pinned_plain";
  worse.device = "0";
  worse.previous = 50e9;
  worse.current = 40e9;
  worse.relative_change = -0.2;
  worse.threshold = 0.05;
  const auto events = bench_events({worse}, 9);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].event, "bench_regression");
  EXPECT_EQ(events[0].level, "warning");
  EXPECT_EQ(events[0].device, "0");
  EXPECT_EQ(events[0].message,
            "h2d_pinned_plain on 0 dropped 20.0% since the last run on this machine (beyond the "
            "5.0% noise threshold)");
  EXPECT_EQ(events[0].numbers.at("current"), 40e9);
  EXPECT_EQ(events[0].time_unix_nanos, 9);
}

TEST(ChecksTest, ABenchIsDoneThenItsRegressionsThenWhatFailedAroundIt) {
  BenchCheck check;
  check.note = "host memory bandwidth only";
  check.results = 2;
  check.regressions.resize(1);
  check.regressions[0].case_key = "host_memcpy";
  check.regressions[0].device = "host";
  check.errors = {"the bench history could not be written: disk full"};
  const auto events = bench_check_events(check, 3);
  EXPECT_THAT(kinds_and_levels(events),
              ElementsAre("bench_done info", "bench_regression warning", "bench_failed error"));
  EXPECT_EQ(events[0].message,
            "quick bench: host memory bandwidth only (2 result(s), 1 regression(s))");
  EXPECT_EQ(events[2].message, "the bench history could not be written: disk full");
}

}  // namespace
}  // namespace acco::monitor
