// run_study: what `acco sim` runs, called as a library: the workload's line, one run per policy,
// the other seeds' makespans beside the first's, a training step, a bad file named.
#include "acco/sim/study.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"
#include "acco/topo/generated.hpp"

namespace acco::sim {
namespace {

using ::acco::testing::IsOk;
using ::testing::HasSubstr;

Platform pcie4() {
  auto machine = topo::generated_machine("pcie-4gpu");
  EXPECT_TRUE(machine.has_value());
  auto node = node_from_machine(*machine);
  EXPECT_TRUE(node.has_value());
  Platform p;
  p.node = *node;
  return p;
}

TEST(StudyTest, EachPolicyRunsOnEachSeedsDraw) {
  Study study;
  study.platform = pcie4();
  study.workload.kind = sched::WorkloadKind::kRandom;
  study.workload.tasks = 60;
  study.workload.seed = 5;
  study.policies = {sched::PolicyKind::kDmda, sched::PolicyKind::kEager};
  study.seeds = 3;
  auto report = run_study(study);
  ASSERT_THAT(report, IsOk());
  EXPECT_EQ(report->workload, "random (60 tasks, seeds 5-7)");
  ASSERT_EQ(report->runs.size(), 2U);
  EXPECT_EQ(report->runs[1].policy, "eager");
  EXPECT_EQ(report->seeds, (std::vector<std::uint64_t>{5, 6, 7}));
  ASSERT_EQ(report->seed_makespans.size(), 2U);
  EXPECT_EQ(report->seed_makespans[0].size(), 3U);
  EXPECT_EQ(report->seed_makespans[0][0], report->runs[0].makespan);
  // The third draw alone is the same as the study's third seed.
  auto third = study_workload(study, 2);
  ASSERT_THAT(third, IsOk());
  SimOptions dmda;
  auto alone = simulate(study.platform, *third, dmda);
  ASSERT_THAT(alone, IsOk());
  EXPECT_EQ(alone->makespan, report->seed_makespans[0][2]);
}

TEST(StudyTest, ATrainingStepIsOneRunAndABadFileIsNamed) {
  Study study;
  study.platform = pcie4();
  study.training = TrainingSpec{};
  study.training->layers = 4;
  auto report = run_study(study);
  ASSERT_THAT(report, IsOk());
  ASSERT_EQ(report->runs.size(), 1U);
  EXPECT_EQ(report->runs[0].policy, "data-parallel");
  EXPECT_THAT(report->workload, HasSubstr("training step (4 layers"));

  Study file;
  file.platform = pcie4();
  file.dag = "/nonexistent/graph.json";
  auto bad = run_study(file);
  ASSERT_FALSE(bad.has_value());
  EXPECT_THAT(bad.error().message, HasSubstr("--dag: "));
  EXPECT_THAT(bad.error().message, HasSubstr("/nonexistent/graph.json"));
}

}  // namespace
}  // namespace acco::sim
