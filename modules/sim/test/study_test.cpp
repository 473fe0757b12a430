// run_study: what `acco sim` runs, called as a library: the workload's line, one run per policy,
// the other seeds' makespans beside the first's, a training step, a bad file named.
#include "acco/sim/study.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"
#include "acco/topo/generated.hpp"

namespace acco::sim {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
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

namespace acco::sim {
namespace {

using ::acco::testing::StatusIs;

TEST(StudyOptionsTest, TheFlagsUnitsBecomeTheStudysAndTheNodeChecksTheFailedFans) {
  StudyOptions o;
  o.workload = "taskbench:stencil_1d";
  o.width = 4;
  o.steps = 3;
  o.task_us = 250;
  o.output_bytes = "64KiB";
  o.fabric_gbps = 200;
  o.task_overhead_us = 5;
  o.policy = "dmda,heft";
  o.failed_fans = {"GPU9"};
  auto checked = make_study(o);  // no node yet: the fans wait for it
  ASSERT_THAT(checked, IsOk());
  ASSERT_TRUE(checked->taskbench.has_value());
  EXPECT_EQ(checked->taskbench->width, 4);
  EXPECT_DOUBLE_EQ(checked->taskbench->seconds, 250e-6);
  EXPECT_EQ(checked->taskbench->output_bytes, 64U * 1024);
  EXPECT_DOUBLE_EQ(checked->platform.fabric.bytes_per_second, 25e9);
  EXPECT_DOUBLE_EQ(checked->options.task_overhead_seconds, 5e-6);
  EXPECT_EQ(checked->policies.size(), 2U);
  EXPECT_TRUE(checked->options.cooling.empty());

  const auto node = pcie4().node;
  EXPECT_THAT(make_study(o, &node), StatusIs(Errc::kInvalidArgument, HasSubstr("--failed-fan: ")));
  o.failed_fans = {"GPU1"};
  auto placed = make_study(o, &node);
  ASSERT_THAT(placed, IsOk());
  ASSERT_EQ(placed->options.cooling.size(), 4U);
  EXPECT_DOUBLE_EQ(placed->options.cooling[1], 4);
  EXPECT_DOUBLE_EQ(placed->options.cooling[0], 1);
}

TEST(StudyOptionsTest, AValueOutOfRangeIsNamedAsTheFlag) {
  StudyOptions o;
  o.workload = "train";
  o.policy = "dmda";
  EXPECT_THAT(make_study(o), StatusIs(Errc::kInvalidArgument, HasSubstr("--policy: a training")));
  o.policy = "all";
  o.params = 0;
  EXPECT_THAT(make_study(o), StatusIs(Errc::kInvalidArgument,
                                      "--params: '0' is not a number above 0, at most 1e+15"));
  o = {};
  o.seeds = 3;  // cholesky draws nothing at random
  EXPECT_THAT(make_study(o), StatusIs(Errc::kInvalidArgument, HasSubstr("--seeds: this workload")));
  o = {};
  o.kernels = "fastest";  // kernel_table's kNotFound is a bad value here
  EXPECT_THAT(make_study(o), StatusIs(Errc::kInvalidArgument, HasSubstr("--kernels: ")));
  o = {};
  o.power_limit = 100;
  EXPECT_THAT(make_study(o),
              StatusIs(Errc::kInvalidArgument,
                       "--power-limit: '100' is not watts from 200 to 700 (the simulated "
                       "device's range)"));
}

// --trace and --html: their directories checked before the study, the files written after it,
// each line naming what was written.
TEST(StudyTest, ItsFilesAreCheckedBeforeAndWrittenAfter) {
  const acco::testing::TempDir dir;
  const StudyFiles missing{.trace = (dir.path() / "no" / "t.json").string(), .html = ""};
  EXPECT_THAT(check_study_files(missing), StatusIs(Errc::kCannotWrite, HasSubstr("--trace: ")));
  const StudyFiles files{.trace = (dir.path() / "t.json").string(),
                         .html = (dir.path() / "r.html").string()};
  ASSERT_THAT(check_study_files(files), IsOk());
  Study study;
  study.platform = pcie4();
  study.workload.kind = sched::WorkloadKind::kChain;
  study.workload.tasks = 8;
  study.policies = {sched::PolicyKind::kEager};
  study.record_first = true;
  auto report = run_study(study);
  ASSERT_THAT(report, IsOk());
  auto notes = write_study_files(*report, files);
  ASSERT_THAT(notes, IsOk());
  EXPECT_EQ(*notes, "acco: trace of eager written to " + files.trace +
                        "\nacco: HTML report written to " + files.html + "\n");
  EXPECT_THAT(acco::testing::slurp(files.trace), HasSubstr("traceEvents"));
  EXPECT_THAT(acco::testing::slurp(files.html), HasSubstr("<svg"));
  EXPECT_EQ(write_study_files(*report, {}).value(), "");
}

}  // namespace
}  // namespace acco::sim
