// A collective run as bench history results, and where its fusion threshold cannot be saved.
#include "acco/cluster/collective_history.hpp"

#include <gtest/gtest.h>

namespace acco::cluster {
namespace {

CollectiveRun two_rank_allreduce(DataPath path) {
  CollectiveRun run;
  run.ranks = 2;
  run.nodes = 1;
  run.backend = "mpi";
  run.path = path;
  run.data_path = "host buffers over MPI";
  OpResult op;
  op.op = Op::kAllReduce;
  op.points = {{.bytes = 1024, .algbw = 1e9, .busbw = 1e9},
               {.bytes = 1 << 20, .algbw = 10e9, .busbw = 10e9}};
  op.summary.plateau_busbw = 10e9;
  op.summary.expected_busbw = 20e9;
  op.summary.efficiency = 0.5;
  op.summary.verdict = Verdict::kLow;
  run.ops.push_back(op);
  return run;
}

TEST(CollectiveHistoryTest, EachOpIsACaseNamedByOpRanksNodesAndDevicePath) {
  topo::Machine machine;
  machine.hostname = "node1";
  const bench::BenchRun host = history_run(two_rank_allreduce(DataPath::kHost), machine);
  ASSERT_EQ(host.results.size(), 1U);
  const bench::BenchResult& r = host.results[0];
  EXPECT_EQ(r.case_key, "collective_allreduce_2r1n");
  EXPECT_EQ(host.host, "node1");
  EXPECT_EQ(r.bytes, 1U << 20);
  EXPECT_DOUBLE_EQ(r.median_bytes_per_second, 10e9);
  EXPECT_DOUBLE_EQ(r.peak_bytes_per_second, 20e9);
  EXPECT_EQ(r.verdict, "low");
  ASSERT_EQ(r.sweep.size(), 2U);
  EXPECT_EQ(history_run(two_rank_allreduce(DataPath::kNccl), machine).results[0].case_key,
            "collective_allreduce_2r1n_nccl");
}

TEST(CollectiveHistoryTest, NoFitOrNoMachineSavesNothing) {
  const CollectiveRun run = two_rank_allreduce(DataPath::kHost);
  topo::Machine machine;
  const auto no_fit = save_fusion_threshold(run, &machine);
  ASSERT_FALSE(no_fit);
  EXPECT_EQ(no_fit.error().code, Errc::kUnavailable);
  EXPECT_EQ(no_fit.error().message,
            "the allreduce times did not fit alpha + S / beta; nothing saved");
  CollectiveRun fitted = run;
  fitted.ops[0].fit = LatencyBandwidth{};
  fitted.ops[0].fusion_threshold = 1 << 20;
  const auto no_machine = save_fusion_threshold(fitted, nullptr);
  ASSERT_FALSE(no_machine);
  EXPECT_EQ(no_machine.error().code, Errc::kUnavailable);
}

}  // namespace
}  // namespace acco::cluster
