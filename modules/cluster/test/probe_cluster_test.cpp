// The cluster probe's protocol on one rank (self_communicator), on the canned workstation sysroot
// (tests/support). Jobs of several ranks and nodes under mpirun are in
// tests/integration/collective_test.cpp.
#include <cstdlib>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "acco/cluster/cluster.hpp"
#include "acco/testing/matchers.hpp"

#include "machines.hpp"
#include "sysroot_builder.hpp"

namespace acco::cluster {
namespace {

using ::acco::testing::IsOk;
using ::testing::HasSubstr;

ClusterProbeOptions probe_of(const std::string& sysroot, int* requests = nullptr) {
  ClusterProbeOptions o;
  o.node_request = [sysroot, requests] {
    if (requests != nullptr) {
      ++*requests;
    }
    topo::ProbeRequest r;
    r.sysroot = sysroot;
    r.nvml = topo::NvmlMode::kOff;
    return r;
  };
  o.pairs.bytes = 4096;
  return o;
}

TEST(ProbeCluster, OneRankIsOneNodeProbedOnceWithoutPairs) {
  const acco::testing::TempDir dir;
  acco::testing::write_workstation(dir.path());
  auto comm = self_communicator();
  int requests = 0;
  auto report = probe_cluster(*comm, probe_of(dir.path().string(), &requests));
  ASSERT_THAT(report, IsOk());
  ASSERT_TRUE(report->has_value());
  const ClusterReport& r = **report;
  EXPECT_EQ(requests, 1);
  EXPECT_EQ(r.ranks, 1);
  ASSERT_EQ(r.nodes.size(), 1U);
  EXPECT_EQ(r.nodes[0].node, 0);
  EXPECT_EQ(r.nodes[0].error, "");
  EXPECT_FALSE(r.nodes[0].traits.empty());
  EXPECT_FALSE(r.nodes[0].findings.empty());  // the workstation's GPU at x8, among others
  EXPECT_TRUE(r.outliers.empty());
  EXPECT_TRUE(r.pairs.empty());
  EXPECT_EQ(r.pair_options.bytes, 4096U);
  EXPECT_EQ(to_json(r)["schema"], kClusterSchema);
}

TEST(ProbeCluster, ANodeThatCannotBeProbedIsReportedWithWhyNotAnError) {
  auto comm = self_communicator();
  auto report = probe_cluster(*comm, probe_of("/does/not/exist"));
  ASSERT_THAT(report, IsOk());
  ASSERT_TRUE(report->has_value());
  ASSERT_EQ((*report)->nodes.size(), 1U);
  EXPECT_THAT((*report)->nodes[0].error, HasSubstr("/does/not/exist"));
  EXPECT_TRUE((*report)->nodes[0].traits.empty());
}

TEST(ProbeCluster, WithoutALauncherTheJobIsThisProcessAlone) {
  const acco::testing::TempDir dir;
  acco::testing::write_workstation(dir.path());
  for (const char* launcher_variable :
       {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID", "SLURM_STEP_ID"}) {
    if (std::getenv(launcher_variable) != nullptr) {
      GTEST_SKIP() << "started by a launcher (" << launcher_variable << ")";
    }
  }
  auto report = probe_cluster(probe_of(dir.path().string()));
  ASSERT_THAT(report, IsOk());
  ASSERT_TRUE(report->has_value());
  EXPECT_EQ((*report)->ranks, 1);
  ASSERT_EQ((*report)->nodes.size(), 1U);
  EXPECT_EQ((*report)->nodes[0].error, "");
}

TEST(ClusterProblems, AFindingAtTheSeverityOrAProblemOfTheClusterCounts) {
  ClusterReport report;
  NodeSummary node;
  topo::Finding note;
  note.severity = topo::Severity::kInfo;
  node.findings.push_back(note);
  report.nodes.push_back(node);
  EXPECT_TRUE(has_problems_at(report, topo::Severity::kInfo));
  EXPECT_FALSE(has_problems_at(report, topo::Severity::kWarning));
  report.outliers.push_back({"kernel", 1, "6.1", "6.8"});
  EXPECT_TRUE(has_problems_at(report, topo::Severity::kCritical));
}

}  // namespace
}  // namespace acco::cluster
