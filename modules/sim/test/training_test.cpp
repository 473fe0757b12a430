// The data-parallel training step: DDP's buckets, NCCL's rings across nodes, and what a step
// costs on the generated DGX H100 when the fabric is fast and when it is slow.
#include "acco/sim/training.hpp"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/sim/taskbench.hpp"
#include "acco/testing/matchers.hpp"
#include "acco/topo/generated.hpp"

namespace acco::sim {
namespace {

using ::acco::testing::IsOk;
using ::testing::HasSubstr;

Platform dgx(int nodes) {
  Platform p;
  auto machine = topo::generated_machine("dgx-h100");
  EXPECT_THAT(machine, IsOk());
  auto node = node_from_machine(*machine);
  EXPECT_THAT(node, IsOk());
  p.node = *node;
  p.nodes = nodes;
  return p;
}

// 24 layers of 10 MiB of gradients in 25 MiB buckets: two layers a bucket, filled from the last
// layer backwards; each bucket's ring shares are 2(D-1)/D of it over 8 rings.
TEST(TrainingTest, BucketsFillInBackwardOrderAndRingsShareThem) {
  TrainingSpec spec;
  spec.layers = 24;
  spec.parameters = 24 * 5.0 * 1024 * 1024;  // 10 MiB of bf16 gradients a layer
  auto step = training_step(dgx(2), spec);
  ASSERT_THAT(step, IsOk());
  ASSERT_EQ(step->bucket_bytes.size(), 12U);
  EXPECT_DOUBLE_EQ(step->bucket_bytes[0], 20.0 * 1024 * 1024);
  // 16 devices: 2 x 24 layer tasks each, and one all-reduce task a bucket each.
  EXPECT_EQ(step->workload.tasks.size(), 16U * 48 + 12U * 16);
  EXPECT_EQ(step->pinned.size(), step->workload.tasks.size());
  EXPECT_EQ(step->home.size(), step->workload.data_bytes.size());
  // Device 0's batch, activations and first bucket's eight ring shares: 2 x 15/16 x 20 MiB / 8.
  EXPECT_EQ(step->workload.data_bytes[0], 64U * 1024 * 1024);
  EXPECT_EQ(step->workload.data_bytes[1], 0U);
  EXPECT_EQ(step->workload.data_bytes[2],
            static_cast<std::size_t>(2.0 * 15 / 16 * 20 * 1024 * 1024 / 8));
  EXPECT_THAT(step->text, HasSubstr("12 buckets (cap 25 MiB), 8 rings over 16 devices"));
  // The first layer backward (layer 24) writes its bucket's shares; layer 23 adds to them.
  const auto& first = step->workload.tasks[24];
  EXPECT_EQ(first.name, "backward(24,0)");
  EXPECT_EQ(first.accesses.back().second, sched::Access::kWrite);
  EXPECT_EQ(step->workload.tasks[25].accesses.back().second, sched::Access::kReadWrite);
}

// Ring r enters each node at its device r: device 8 (node 1's GPU0) hears ring 0 from node 0's
// GPU7 and ring 1 from its own GPU7, which that ring visits just before it.
TEST(TrainingTest, RingREntersEachNodeAtItsDeviceR) {
  TrainingSpec spec;
  spec.layers = 2;
  spec.parameters = 1e6;
  auto step = training_step(dgx(2), spec);
  ASSERT_THAT(step, IsOk());
  const auto& w = step->workload;
  // The data of device d: batch, state, then 8 shares of its one bucket.
  const auto owner = [](std::size_t datum) { return datum / 10; };
  const auto* reduce = &w.tasks.back();  // allreduce(0,15)
  for (const auto& t : w.tasks) {
    if (t.name == "allreduce(0,8)") {
      reduce = &t;
    }
  }
  ASSERT_EQ(reduce->name, "allreduce(0,8)");
  ASSERT_EQ(reduce->accesses.size(), 16U);
  EXPECT_EQ(owner(reduce->accesses[0].first), 7U);   // ring 0: from node 0's GPU7
  EXPECT_EQ(owner(reduce->accesses[2].first), 15U);  // ring 1: from its node's GPU7
  EXPECT_EQ(owner(reduce->accesses[4].first), 15U);
  EXPECT_EQ(owner(reduce->accesses[1].first), 8U);
}

// One node: the step is its compute (3 x layers x the layer time) and the NVLink all-reduces
// hidden behind it. Two nodes over slow ports: the fabric is the bottleneck and the step is
// longer; over fast ones it is hidden again.
TEST(TrainingTest, ASlowFabricShowsInTheStepAndAFastOneDoesNot) {
  TrainingSpec spec;
  spec.layers = 8;
  spec.layer_seconds = 2e-3;
  spec.parameters = 2e9;
  auto one = simulate_training(dgx(1), *training_step(dgx(1), spec));
  ASSERT_THAT(one, IsOk());
  EXPECT_EQ(one->policy, "data-parallel");
  EXPECT_NEAR(one->critical_path, 8 * 3 * 2e-3, 1e-9);
  EXPECT_EQ(one->fabric, 0);
  EXPECT_LT(one->makespan, 1.1 * one->critical_path);
  auto slow = dgx(2);
  slow.fabric.bytes_per_second = 1e9;
  auto slow_run = simulate_training(slow, *training_step(slow, spec));
  ASSERT_THAT(slow_run, IsOk());
  EXPECT_GT(slow_run->makespan, 2 * one->makespan);
  EXPECT_THAT(slow_run->bottleneck, HasSubstr("fabric"));
  // The fabric's bound: each node sends and receives 2(D-1)/D of the gradients (bf16) over
  // its eight 1 GB/s ports; the step takes at least that, and the bound is that.
  const double ring_bytes = 2.0 * 15 / 16 * 2 * spec.parameters;
  EXPECT_NEAR(slow_run->fabric, ring_bytes / 8e9, 1e-3 * ring_bytes / 8e9);
  EXPECT_GE(slow_run->makespan, slow_run->fabric);
  EXPECT_DOUBLE_EQ(slow_run->bound(), slow_run->fabric);
  // Each direction of a link is busy on its own: no share above the whole run.
  for (const auto& l : slow_run->links) {
    EXPECT_LE(l.busiest_share, 1.0 + 1e-9) << l.busiest;
  }
  auto fast = dgx(2);
  auto fast_run = simulate_training(fast, *training_step(fast, spec));
  ASSERT_THAT(fast_run, IsOk());
  EXPECT_LT(fast_run->makespan, 1.2 * one->makespan);
}

TEST(TrainingTest, BadSpecsAreNamed) {
  TrainingSpec spec;
  spec.layers = 0;
  auto bad = training_step(dgx(1), spec);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "layers: 0 is not from 1 to 10000");
  spec = {};
  spec.bucket_bytes = 0;
  bad = training_step(dgx(1), spec);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "bucket size: 0 is not above 0");
  spec = {};
  spec.reduce_bytes_per_second = -1;
  bad = training_step(dgx(1), spec);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "reduction rate: -1 is not 0 or more");
}

// With a reduction rate each device sums (D-1)/D of the bucket after its ring's copies: one
// bucket at the end of the step adds exactly that time.
TEST(TrainingTest, AReductionRateAddsTheSumsAfterTheCopies) {
  TrainingSpec spec;
  spec.layers = 1;
  spec.parameters = 1e8;
  spec.bucket_bytes = 1e9;  // one bucket: 2e8 bytes of bf16 gradients
  const auto p = dgx(2);
  auto free_sums = simulate_training(p, *training_step(p, spec));
  spec.reduce_bytes_per_second = 1e10;
  auto step = training_step(p, spec);
  ASSERT_THAT(step, IsOk());
  ASSERT_EQ(step->bucket_bytes.size(), 1U);
  auto summed = simulate_training(p, *step);
  ASSERT_THAT(free_sums, IsOk());
  ASSERT_THAT(summed, IsOk());
  EXPECT_NEAR(summed->makespan - free_sums->makespan, 15.0 / 16 * 2e8 / 1e10, 1e-9);
}

}  // namespace
}  // namespace acco::sim

namespace acco::sim {
namespace {

// Task Bench's stencil_1d: `width` points, `steps` steps.
Result<sched::Workload> stencil(int width, int steps) {
  TaskBenchSpec spec;
  spec.pattern = Pattern::kStencil1d;
  spec.width = width;
  spec.steps = steps;
  return task_bench(spec);
}

// dmda on a large platform looks at the data's nodes and the devices that free up first, not
// at every device (SimOptions::full_scan_devices): on Task Bench's stencil over 16 DGX nodes it
// makes the choices the full scan makes.
TEST(NarrowingTest, DmdaOnTheDatasNodesAndTheFirstFreeChoosesAsTheFullScan) {
  const auto p = dgx(16);
  auto w = stencil(128, 6);
  ASSERT_THAT(w, IsOk());
  SimOptions full;
  full.policy = sched::PolicyKind::kDmda;
  auto all = simulate(p, *w, full);
  ASSERT_THAT(all, IsOk());
  SimOptions narrow = full;
  narrow.full_scan_devices = 16;
  auto some = simulate(p, *w, narrow);
  ASSERT_THAT(some, IsOk());
  EXPECT_NEAR(some->makespan, all->makespan, 1e-12);
  EXPECT_EQ(some->copies, all->copies);
  EXPECT_EQ(some->bytes_moved, all->bytes_moved);
}

// Copies as puts between actors on mailboxes (large platforms, SimOptions::mailbox_copies_devices)
// and as SimGrid's host-to-host comms are the same flows: the same run, and with records each
// copy's times. A put starts when its sender runs, at the same virtual time but after actors the
// comm would have run before: dmda may break a tie otherwise and move a few more or fewer bytes
// (3 of 333 copies here).
TEST(CopiesTest, MailboxPutsMoveWhatHostToHostCommsMove) {
  const auto p = dgx(4);
  auto w = stencil(32, 6);
  ASSERT_THAT(w, IsOk());
  for (const auto policy : {sched::PolicyKind::kDmda, sched::PolicyKind::kHeft,
                            sched::PolicyKind::kWorkStealing, sched::PolicyKind::kEager}) {
    SimOptions comms;
    comms.policy = policy;
    comms.record = true;
    SimOptions boxes = comms;
    boxes.mailbox_copies_devices = 1;
    auto a = simulate(p, *w, comms);
    auto b = simulate(p, *w, boxes);
    ASSERT_THAT(a, IsOk());
    ASSERT_THAT(b, IsOk());
    SCOPED_TRACE(std::string(sched::to_string(policy)));
    EXPECT_NEAR(b->makespan, a->makespan, 0.01 * a->makespan);
    EXPECT_NEAR(static_cast<double>(b->copies), static_cast<double>(a->copies),
                0.02 * static_cast<double>(a->copies));
    EXPECT_NEAR(b->bytes_moved, a->bytes_moved, 0.02 * a->bytes_moved);
    ASSERT_EQ(b->transfer_records.size(), b->copies);
    ASSERT_GT(b->copies, 0U);
    for (const auto* r : {&*a, &*b}) {
      for (const auto& c : r->transfer_records) {
        EXPECT_GE(c.end, c.start);
        EXPECT_GE(c.start.count(), 0);
      }
    }
  }
}

}  // namespace
}  // namespace acco::sim
