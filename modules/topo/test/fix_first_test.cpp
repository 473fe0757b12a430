// The doctor's "start with" list: one entry per rule, devices grouped, ranked by impact.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/topo/checks.hpp"

namespace acco::topo {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

Finding finding(const std::string& rule, Severity severity, std::vector<std::string> devices) {
  Finding f;
  f.rule = rule;
  f.severity = severity;
  f.devices = std::move(devices);
  return f;
}

std::vector<std::string> rules_of(const std::vector<RuleSummary>& summary) {
  std::vector<std::string> out;
  for (const auto& s : summary) {
    out.push_back(s.rule);
  }
  return out;
}

// The workstation's problems: two GPUs far from the one NIC were two of three slots.
TEST(FixFirstTest, OneRuleOnSeveralDevicesIsOneEntryWithItsDevicesGrouped) {
  const std::vector<Finding> findings = {
      finding("pcie-link-downtrained", Severity::kCritical, {"0000:41:00.0"}),
      finding("gpu-nic-remote", Severity::kWarning, {"0000:01:00.0", "0000:a1:00.0"}),
      finding("gpu-nic-remote", Severity::kWarning, {"0000:21:00.0", "0000:a1:00.0"}),
      finding("roce-mtu-low", Severity::kWarning, {"mlx5_0", "0000:a1:00.0"}),
      finding("nvme-poll-queues-none", Severity::kInfo, {"nvme0n1", "nvme1n1", "nvme2n1"}),
  };
  const auto summary = fix_first(findings);
  ASSERT_EQ(summary.size(), 3U);
  EXPECT_EQ(summary[0],
            (RuleSummary{"pcie-link-downtrained", Severity::kCritical, {0}, {"0000:41:00.0"}}));
  EXPECT_EQ(summary[1], (RuleSummary{"gpu-nic-remote",
                                     Severity::kWarning,
                                     {1, 2},
                                     {"0000:01:00.0", "0000:a1:00.0", "0000:21:00.0"}}));
  EXPECT_EQ(summary[2].rule, "roce-mtu-low");
}

// Critical first whatever the device counts; among equals, the rule touching more devices.
TEST(FixFirstTest, RanksBySeverityThenDevicesThenFindingsThenRuleId) {
  const std::vector<Finding> findings = {
      finding("a-few-devices", Severity::kWarning, {"a"}),
      finding("many-devices", Severity::kWarning, {"a", "b", "c"}),
      finding("one-critical", Severity::kCritical, {"x"}),
      finding("two-findings", Severity::kWarning, {"a"}),
      finding("two-findings", Severity::kWarning, {"a"}),
      finding("b-tie", Severity::kWarning, {"y", "z"}),
      finding("a-tie", Severity::kWarning, {"y", "z"}),
  };
  EXPECT_THAT(rules_of(fix_first(findings)), ElementsAre("one-critical", "many-devices", "a-tie",
                                                         "b-tie", "two-findings", "a-few-devices"));
}

// A rule whose findings range over severities counts as its worst, and only its warning and
// critical findings are problems to fix.
TEST(FixFirstTest, ARuleRanksByItsWorstFindingAndLeavesItsInfoOut) {
  const std::vector<Finding> findings = {
      finding("wide-warnings", Severity::kWarning, {"a", "b", "c", "d"}),
      finding("pcie-link-downtrained", Severity::kInfo, {"e", "f", "g", "h", "i"}),
      finding("pcie-link-downtrained", Severity::kWarning, {"j"}),
      finding("pcie-link-downtrained", Severity::kCritical, {"k"}),
  };
  const auto summary = fix_first(findings);
  ASSERT_EQ(summary.size(), 2U);
  EXPECT_EQ(summary[0],
            (RuleSummary{"pcie-link-downtrained", Severity::kCritical, {2, 3}, {"j", "k"}}));
  EXPECT_EQ(summary[1].rule, "wide-warnings");
}

TEST(FixFirstTest, NothingButInfoIsNothingToFix) {
  EXPECT_THAT(fix_first({finding("nvml-unavailable", Severity::kInfo, {"a"})}), IsEmpty());
  EXPECT_THAT(fix_first({}), IsEmpty());
}

}  // namespace
}  // namespace acco::topo
