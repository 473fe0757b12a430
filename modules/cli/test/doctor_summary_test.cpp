// The doctor's closing summary: one entry per rule, its devices grouped, ranked by impact.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "text_report.hpp"

namespace acco::cli {
namespace {

topo::Finding finding(const std::string& rule, topo::Severity severity,
                      std::vector<std::string> devices, const std::string& what) {
  topo::Finding f;
  f.rule = rule;
  f.severity = severity;
  f.devices = std::move(devices);
  f.message = what + " message";
  f.recommendation = what + " fix";
  return f;
}

TEST(DoctorSummaryTest, ARuleOnSeveralDevicesTakesOneSlotWithItsDevicesAndFirstFinding) {
  const std::vector<topo::Finding> findings = {
      finding("pcie-link-downtrained", topo::Severity::kCritical, {"0000:41:00.0"}, "x8"),
      finding("gpu-nic-remote", topo::Severity::kWarning, {"0000:01:00.0", "0000:a1:00.0"}, "gpu0"),
      finding("gpu-nic-remote", topo::Severity::kWarning, {"0000:21:00.0", "0000:a1:00.0"}, "gpu1"),
      finding("nvme-gpu-remote", topo::Severity::kWarning,
              {"0000:01:00.0", "0000:c1:00.0", "0000:21:00.0", "0000:22:00.0", "0000:23:00.0"},
              "nvme"),
      finding("roce-mtu-low", topo::Severity::kWarning, {"mlx5_0", "0000:a1:00.0"}, "mtu"),
      finding("nvml-unavailable", topo::Severity::kInfo, {"0000:01:00.0"}, "nvml"),
  };
  EXPECT_EQ(doctor_summary_text(findings),
            "\nDoctor's summary\n"
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
  std::vector<topo::Finding> findings;
  for (const char* gpu : {"a", "b", "c", "d", "e"}) {
    findings.push_back(finding("numa-unknown", topo::Severity::kWarning, {gpu}, gpu));
  }
  EXPECT_THAT(doctor_summary_text(findings),
              ::testing::HasSubstr("(5 findings on a b c and 2 more)\n     first: a message\n"));
}

TEST(DoctorSummaryTest, OnlyInfoIsNothingToFix) {
  EXPECT_EQ(doctor_summary_text({finding("nvml-unavailable", topo::Severity::kInfo, {}, "n")}),
            "\nDoctor's summary\n  Nothing to fix: no warning or critical finding.\n");
}

}  // namespace
}  // namespace acco::cli
