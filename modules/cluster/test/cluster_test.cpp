#include "acco/cluster/cluster.hpp"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace acco::cluster {
namespace {

using ::testing::HasSubstr;

topo::Machine node_with_gpu_width(int width) {
  topo::Machine m;
  m.kernel = "6.1.0-28-amd64";
  topo::PciDevice gpu;
  gpu.address = "0000:18:00.0";
  gpu.kind = topo::DeviceKind::kGpu;
  gpu.current = {32, width};
  m.pci_devices.push_back(gpu);
  topo::IbPort port;
  port.device = "mlx5_0";
  port.rate_gbps = 400;
  port.state_text = "4: ACTIVE";
  m.ib_ports.push_back(port);
  return m;
}

NodeSummary summary(int node, const topo::Machine& m) {
  return {node, node, "vm", node_traits(m), {}, ""};
}

TEST(NodeTraits, NameTheLinksAndCounts) {
  const auto t = node_traits(node_with_gpu_width(16));
  const auto has = [&](const std::string& k, const std::string& v) {
    return std::find(t.begin(), t.end(), Trait{k, v}) != t.end();
  };
  EXPECT_TRUE(has("kernel", "6.1.0-28-amd64"));
  EXPECT_TRUE(has("gpu 0 pcie", "32 GT/s x16"));
  EXPECT_TRUE(has("gpus", "1"));
  EXPECT_TRUE(has("gpu driver", "none"));
  EXPECT_TRUE(has("ib mlx5_0/1 rate", "400 Gb/s"));
}

TEST(Outliers, TheNodeWhoseGpuSitsAtX8IsNamedAgainstTheMajority) {
  auto slow = node_with_gpu_width(8);
  slow.ib_ports[0].rate_gbps = 200;  // its NIC trained slower too
  const std::vector<NodeSummary> nodes = {summary(0, node_with_gpu_width(16)), summary(1, slow),
                                          summary(2, node_with_gpu_width(16))};
  const auto o = find_outliers(nodes);
  ASSERT_EQ(o.size(), 2U);
  EXPECT_EQ(o[0], (Outlier{"gpu 0 pcie", 1, "32 GT/s x8", "32 GT/s x16"}));
  EXPECT_EQ(o[1], (Outlier{"ib mlx5_0/1 rate", 1, "200 Gb/s", "400 Gb/s"}));
}

TEST(Outliers, TwoNodesThatDifferHaveNoMajorityAndBothAreListed) {
  const auto o =
      find_outliers({summary(0, node_with_gpu_width(16)), summary(1, node_with_gpu_width(8))});
  ASSERT_EQ(o.size(), 2U);
  EXPECT_EQ(o[0].others, "(no majority)");
  EXPECT_EQ(o[1].node, 1);
  EXPECT_TRUE(find_outliers({summary(0, node_with_gpu_width(8))}).empty());  // one node
}

TEST(Outliers, AMissingTraitIsAbsent) {
  auto bare = node_with_gpu_width(16);
  bare.ib_ports.clear();
  const auto o = find_outliers(
      {summary(0, node_with_gpu_width(16)), summary(1, bare), summary(2, node_with_gpu_width(16))});
  ASSERT_FALSE(o.empty());
  EXPECT_EQ(o[0].value, "(absent)");
  EXPECT_EQ(o[0].node, 1);
}

TEST(NodeSummary, RoundTripsThroughItsText) {
  NodeSummary n = summary(3, node_with_gpu_width(16));
  topo::Finding f;
  f.rule = "memlock-limited";
  f.severity = topo::Severity::kWarning;
  f.message = "RLIMIT_MEMLOCK is 8 MiB";
  n.findings.push_back(f);
  auto back = decode_node_summary(encode(n));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, n);
  EXPECT_FALSE(decode_node_summary("{\"node\": 1}"));
  EXPECT_FALSE(decode_node_summary("not json"));
}

PairResult pair(int a, int b, int na, int nb, double gbps) {
  PairResult p;
  p.a = a;
  p.b = b;
  p.node_a = na;
  p.node_b = nb;
  p.reached = true;
  p.bytes_per_second = gbps * 1e9;
  return p;
}

TEST(RankPairs, TheShapedLinkIsSlowAgainstItsClassNotAgainstSharedMemory) {
  std::vector<PairResult> pairs = {pair(0, 1, 0, 1, 10), pair(0, 2, 0, 2, 10), pair(1, 2, 1, 2, 2),
                                   pair(0, 3, 0, 0, 40), pair(1, 3, 1, 0, 9.5)};
  rank_pairs(pairs);
  EXPECT_FALSE(pairs[0].slow);
  EXPECT_TRUE(pairs[2].slow);
  EXPECT_NEAR(pairs[2].ratio, 2 / 9.75, 1e-9);  // median of 2, 9.5, 10, 10 across nodes
  EXPECT_FALSE(pairs[3].slow);                  // within a node: a class of one
  EXPECT_DOUBLE_EQ(pairs[3].ratio, 1.0);
}

TEST(RankPairs, TwoPairsAreTooFewToCallOneSlow) {
  std::vector<PairResult> pairs = {pair(0, 1, 0, 1, 10), pair(0, 2, 0, 2, 1)};
  rank_pairs(pairs);
  EXPECT_FALSE(pairs[1].slow);
}

TEST(SlowNode, TheNodeInEveryShapedPairIsNamed) {
  // Four nodes, node 3's link shaped: its three pairs are slow, the others not.
  std::vector<PairResult> pairs = {pair(0, 1, 0, 1, 10), pair(0, 2, 0, 2, 9), pair(1, 2, 1, 2, 11),
                                   pair(0, 3, 0, 3, 1),  pair(1, 3, 1, 3, 1), pair(2, 3, 2, 3, 1)};
  rank_pairs(pairs);
  EXPECT_TRUE(pairs[3].slow && pairs[4].slow && pairs[5].slow);
  EXPECT_FALSE(pairs[0].slow || pairs[1].slow || pairs[2].slow);
  EXPECT_EQ(slow_node(pairs), 3);
  pairs[4].slow = false;  // 0-3 and 2-3: node 3 is still in both
  EXPECT_EQ(slow_node(pairs), 3);
  pairs[5].slow = false;  // one slow pair: either end could be at fault
  EXPECT_EQ(slow_node(pairs), std::nullopt);
}

TEST(MeasurePairs, OneRankHasNoPairsAndBadOptionsAreRefused) {
  auto comm = self_communicator();
  auto pairs = measure_pairs(*comm, {});
  ASSERT_TRUE(pairs);
  EXPECT_TRUE(pairs->empty());
  EXPECT_FALSE(measure_pairs(*comm, {.bytes = 4, .iters = 1}));
  EXPECT_FALSE(measure_pairs(*comm, {.bytes = 64, .iters = 0}));
}

TEST(ClusterReport, TextAndJsonNameTheSlowPairAndTheOutlier) {
  ClusterReport r;
  r.ranks = 3;
  r.library = "Open MPI v4.1.4";
  r.nodes = {summary(0, node_with_gpu_width(16)), summary(1, node_with_gpu_width(8)),
             summary(2, node_with_gpu_width(16))};
  r.outliers = find_outliers(r.nodes);
  r.pairs = {pair(0, 1, 0, 1, 10), pair(0, 2, 0, 2, 10), pair(1, 2, 1, 2, 2)};
  r.pairs.push_back({});
  r.pairs.back().a = 0;
  r.pairs.back().b = 3;
  r.pairs.back().error = "MPI_Sendrecv (exchange): connection refused";
  rank_pairs(r.pairs);
  EXPECT_EQ(problem_count(r), 3);  // one outlier, one slow pair, one unreached
  const std::string text = to_text(r);
  EXPECT_THAT(text, HasSubstr("node 1: gpu 0 pcie is 32 GT/s x8, the others 32 GT/s x16"));
  EXPECT_THAT(text, HasSubstr("SLOW: below 70 % of the median across nodes"));
  EXPECT_THAT(text, HasSubstr("UNREACHED: MPI_Sendrecv (exchange): connection refused"));
  EXPECT_THAT(text, HasSubstr("# 3 problems"));
  const auto j = to_json(r);
  EXPECT_EQ(j["schema"], "acco.cluster/1");
  EXPECT_EQ(j["nodes"].size(), 3U);
  EXPECT_EQ(j["nodes"][1]["traits"]["gpu 0 pcie"], "32 GT/s x8");
  EXPECT_EQ(j["pairs"][2]["slow"], true);
  EXPECT_EQ(j["problems"], 3);
}

}  // namespace
}  // namespace acco::cluster
