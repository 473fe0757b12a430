#include "acco/cluster/collective.hpp"

#include <gtest/gtest.h>

namespace acco::cluster {
namespace {

TEST(BusFactor, FollowsNcclTestsFormulas) {
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllReduce, 4), 1.5);  // 2(n-1)/n
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllReduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllGather, 4), 0.75);  // (n-1)/n
  EXPECT_DOUBLE_EQ(bus_factor(Op::kReduceScatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllToAll, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kBroadcast, 4), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kSendRecv, 4), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllReduce, 1), 0.0);  // nothing crosses a link
}

TEST(AlgorithmBytes, SplitOperationsCountTheWholeArray) {
  EXPECT_EQ(algorithm_bytes(Op::kAllReduce, 1024, 4), 1024U);
  EXPECT_EQ(algorithm_bytes(Op::kAllGather, 1024, 4), 4096U);
  EXPECT_EQ(algorithm_bytes(Op::kReduceScatter, 1024, 4), 4096U);
  EXPECT_EQ(algorithm_bytes(Op::kAllToAll, 1024, 4), 4096U);
  EXPECT_EQ(algorithm_bytes(Op::kBroadcast, 1024, 4), 1024U);
  EXPECT_EQ(algorithm_bytes(Op::kSendRecv, 1024, 4), 1024U);
}

TEST(ParseOps, ReadsAListAllAndRejectsUnknownWords) {
  auto ops = parse_ops("sendrecv,allreduce,sendrecv");
  ASSERT_TRUE(ops);
  EXPECT_EQ(*ops, (std::vector<Op>{Op::kSendRecv, Op::kAllReduce}));
  auto all = parse_ops("all");
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), kOps.size());
  auto bad = parse_ops("allreduce,gather");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "collective 'gather': expected allreduce, allgather, reducescatter, alltoall, "
            "broadcast or sendrecv, or all");
  EXPECT_FALSE(parse_ops(""));
}

TEST(SizeSweep, DoublesFromMinToMaxOnTheGranule) {
  auto sizes = size_sweep(8, 128, 2, 4);
  ASSERT_TRUE(sizes);
  EXPECT_EQ(*sizes, (std::vector<std::uint64_t>{8, 16, 32, 64, 128}));
  auto split = size_sweep(8, 100, 4, 12);  // 12 = 4 bytes x 3 ranks; 32 rounds down to 24
  ASSERT_TRUE(split);
  EXPECT_EQ(*split, (std::vector<std::uint64_t>{12, 24}));  // 128 is past 100
  EXPECT_FALSE(size_sweep(16, 8, 2, 4));
  EXPECT_FALSE(size_sweep(8, 16, 1, 4));
  EXPECT_FALSE(size_sweep(8, 16, 2, 0));
  EXPECT_FALSE(size_sweep(4, 8, 2, 16));  // no multiple of 16 up to 8
}

TEST(MakePoint, AveragesRanksAndAppliesTheBusFactor) {
  const SizePoint p = make_point(Op::kAllReduce, 4, 4'000'000, 1'000'000, {0.001, 0.003}, 0);
  EXPECT_DOUBLE_EQ(p.seconds, 0.002);
  EXPECT_DOUBLE_EQ(p.min_seconds, 0.001);
  EXPECT_DOUBLE_EQ(p.max_seconds, 0.003);
  EXPECT_DOUBLE_EQ(p.algbw, 2e9);
  EXPECT_DOUBLE_EQ(p.busbw, 3e9);  // x 2(4-1)/4
}

std::vector<SizePoint> ramp(int ranks) {
  // Bandwidth doubles with size up to 1 GB/s busbw at 1 MiB, then stays.
  std::vector<SizePoint> points;
  for (std::uint64_t b = 1024, i = 0; b <= (std::uint64_t{16} << 20); b *= 2, ++i) {
    const double busbw = std::min(1e9, 1e9 * static_cast<double>(b) / (1 << 20));
    const double seconds = static_cast<double>(b) / (busbw / bus_factor(Op::kAllReduce, ranks));
    points.push_back(make_point(Op::kAllReduce, ranks, b, b / 4, {seconds}, 0));
  }
  return points;
}

TEST(Summarize, PlateauIsTheMedianOfTheLargestSizesNotTheAverage) {
  const auto points = ramp(2);  // 15 sizes: the 3 largest make the plateau
  const OpSummary s = summarize(points, 2, 1.25e9, "eth0 at 10 Gb/s");
  EXPECT_EQ(s.plateau_sizes, 3);
  EXPECT_NEAR(s.plateau_busbw, 1e9, 1e3);
  ASSERT_TRUE(s.n_half.has_value());
  EXPECT_EQ(*s.n_half, std::uint64_t{512} << 10);  // half of 1 GB/s first at 512 KiB
  EXPECT_DOUBLE_EQ(s.small_latency_seconds, points.front().seconds);
  EXPECT_NEAR(s.efficiency, 0.8, 1e-6);
  EXPECT_EQ(s.verdict, Verdict::kOk);
  EXPECT_EQ(summarize(points, 2, 2e9, "x").verdict, Verdict::kLow);      // 50 %
  EXPECT_EQ(summarize(points, 2, 4e9, "x").verdict, Verdict::kVeryLow);  // 25 %
  EXPECT_EQ(summarize(points, 2, 0, "").verdict, Verdict::kNoPeak);
}

TEST(Summarize, OneRankReportsAlgorithmBandwidthOnly) {
  std::vector<SizePoint> points = {make_point(Op::kAllReduce, 1, 4096, 1024, {1e-6}, 0)};
  const OpSummary s = summarize(points, 1, 1e9, "x");
  EXPECT_EQ(s.verdict, Verdict::kSingleRank);
  EXPECT_EQ(s.plateau_sizes, 1);
  EXPECT_NEAR(s.plateau_busbw, 4.096e9, 1);  // algbw
  EXPECT_DOUBLE_EQ(s.efficiency, 0);
}

TEST(Summarize, NoPointsIsAnEmptySummary) {
  const OpSummary s = summarize({}, 2, 1e9, "x");
  EXPECT_EQ(s.plateau_sizes, 0);
  EXPECT_FALSE(s.n_half.has_value());
}

}  // namespace
}  // namespace acco::cluster
