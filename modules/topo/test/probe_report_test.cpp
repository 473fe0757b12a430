// The doctor's closing summary: one entry per rule, its devices grouped, ranked by impact.
#include "acco/topo/probe_report.hpp"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace acco::topo {
namespace {

std::string summary_text(const std::vector<Finding>& findings) {
  report::Document doc;
  add_doctor_summary(doc, findings);
  return report::render_text(doc);
}

Finding finding(const std::string& rule, Severity severity, std::vector<std::string> devices,
                const std::string& what) {
  Finding f;
  f.rule = rule;
  f.severity = severity;
  f.devices = std::move(devices);
  f.message = what + " message";
  f.recommendation = what + " fix";
  return f;
}

TEST(DoctorSummaryTest, ARuleOnSeveralDevicesTakesOneSlotWithItsDevicesAndFirstFinding) {
  const std::vector<Finding> findings = {
      finding("pcie-link-downtrained", Severity::kCritical, {"0000:41:00.0"}, "x8"),
      finding("gpu-nic-remote", Severity::kWarning, {"0000:01:00.0", "0000:a1:00.0"}, "gpu0"),
      finding("gpu-nic-remote", Severity::kWarning, {"0000:21:00.0", "0000:a1:00.0"}, "gpu1"),
      finding("nvme-gpu-remote", Severity::kWarning,
              {"0000:01:00.0", "0000:c1:00.0", "0000:21:00.0", "0000:22:00.0", "0000:23:00.0"},
              "nvme"),
      finding("roce-mtu-low", Severity::kWarning, {"mlx5_0", "0000:a1:00.0"}, "mtu"),
      finding("nvml-unavailable", Severity::kInfo, {"0000:01:00.0"}, "nvml"),
  };
  EXPECT_EQ(summary_text(findings),
            "Doctor's summary\n"
            "  5 problem(s) to fix, from 4 rule(s); start with:\n"
            "  1. [critical] pcie-link-downtrained: x8 message\n"
            "     fix: x8 fix\n"
            "  2. [warning] nvme-gpu-remote: nvme message\n"
            "     fix: nvme fix\n"
            "  3. [warning] gpu-nic-remote: a GPU's nearest NIC is across sockets (2 findings on "
            "0000:01:00.0 0000:a1:00.0 0000:21:00.0)\n"
            "     first: gpu0 message\n"
            "     fix: gpu0 fix\n");
}

TEST(DoctorSummaryTest, ManyDevicesAreCutAfterThree) {
  std::vector<Finding> findings;
  for (const char* gpu : {"a", "b", "c", "d", "e"}) {
    findings.push_back(finding("numa-unknown", Severity::kWarning, {gpu}, gpu));
  }
  EXPECT_THAT(summary_text(findings),
              ::testing::HasSubstr("(5 findings on a b c and 2 more)\n     first: a message\n"));
}

TEST(DoctorSummaryTest, OnlyInfoIsNothingToFix) {
  EXPECT_EQ(summary_text({finding("nvml-unavailable", Severity::kInfo, {}, "n")}),
            "Doctor's summary\n  Nothing to fix: no warning or critical finding.\n");
}

}  // namespace
}  // namespace acco::topo
