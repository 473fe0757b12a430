#include "acco/sched/experiment.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "acco/core/units.hpp"
#include "acco/device/host_backend.hpp"
#include "acco/sched/experiment_report.hpp"
#include "acco/sched/experiment_setup.hpp"
#include "acco/sched/perf_model.hpp"
#include "acco/testing/json_schema.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::sched {
namespace {

namespace stdfs = std::filesystem;
using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::testing::StrEq;

// `count` emulated devices behind one emulated link, as `acco schedule --devices host:N`.
ExperimentDevices host_devices(int count, const std::string& link = "pcie3x16") {
  ExperimentDevices d;
  device::HostBackendOptions host;
  host.devices = count;
  auto parsed = device::parse_link(link);
  EXPECT_THAT(parsed, IsOk());
  host.link = parsed.value_or(device::EmulatedLink{});
  auto backend = device::make_host_backend(host);
  EXPECT_THAT(backend, IsOk());
  d.backend = std::move(*backend);
  d.devices = d.backend->devices();
  d.models.assign(d.devices.size(), DeviceModel{});
  d.link = host.link.name;
  return d;
}

// A 3x3 tiled Cholesky (10 tasks) with kernels a thousand times shorter than StarPU's.
WorkloadSpec small_cholesky() {
  WorkloadSpec spec;
  spec.tiles = 3;
  spec.time_scale = 0.001;
  spec.tile_bytes = 64 << 10;
  return spec;
}

Workload workload_for(const WorkloadSpec& spec, const std::vector<DeviceModel>& models) {
  auto w = make_workload(spec, models);
  EXPECT_THAT(w, IsOk());
  return w.value_or(Workload{});
}

ExperimentOptions experiment_options(std::vector<PolicyKind> policies) {
  ExperimentOptions o;
  o.spec = small_cholesky();
  o.policies = std::move(policies);
  o.calibration_runs = 0;
  return o;
}

class ExperimentFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = stdfs::temp_directory_path() /
           ("acco-experiment-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    stdfs::remove_all(dir_);
    stdfs::create_directories(dir_);
  }
  void TearDown() override { stdfs::remove_all(dir_); }
  stdfs::path dir_;
};

TEST(RunExperiment, EveryPolicyRunsInTurnAfterAProgressLine) {
  const auto devices = host_devices(2);
  const auto o = experiment_options({PolicyKind::kEager, PolicyKind::kDmda});
  const Workload w = workload_for(o.spec, devices.models);
  std::vector<std::string> lines;
  auto e = run_experiment(w, devices, o, [&](std::string_view line) { lines.emplace_back(line); });
  ASSERT_THAT(e, IsOk());
  ASSERT_EQ(e->runs.size(), 2U);
  EXPECT_EQ(e->runs[0].policy, "eager");
  EXPECT_EQ(e->runs[1].policy, "dmda");
  for (const auto& r : e->runs) {
    EXPECT_EQ(r.tasks, w.tasks.size());
    EXPECT_EQ(r.failed, 0U);
    EXPECT_GT(r.makespan_seconds, 0);
  }
  EXPECT_THAT(lines, ElementsAre("[1/2] eager: 10 task(s), 0 calibration run(s)",
                                 "[2/2] dmda: 10 task(s), 0 calibration run(s)"));
  EXPECT_EQ(e->workload, "cholesky");
  EXPECT_EQ(e->tasks, 10U);
  EXPECT_EQ(e->link, "pcie3x16");
}

TEST(RunExperiment, EveryRunIsObservedFromCreationToTheEnd) {
  const auto devices = host_devices(2);
  auto o = experiment_options({PolicyKind::kEager, PolicyKind::kHeft});
  int created = 0;
  int ended = 0;
  o.observe = [&](Runtime* runtime) { (runtime != nullptr ? created : ended) += 1; };
  ASSERT_THAT(run_experiment(workload_for(o.spec, devices.models), devices, o), IsOk());
  EXPECT_EQ(created, 2);
  EXPECT_EQ(ended, 2);
}

TEST_F(ExperimentFiles, TheModelsAreSavedAfterEachPolicyForTheNext) {
  const auto devices = host_devices(2);
  auto o = experiment_options({PolicyKind::kDmda});
  o.models = (dir_ / "models.json").string();
  ASSERT_THAT(run_experiment(workload_for(o.spec, devices.models), devices, o), IsOk());
  ASSERT_TRUE(stdfs::exists(o.models));
  auto saved = PerfModels::load(o.models);
  ASSERT_THAT(saved, IsOk());
  EXPECT_FALSE(saved->to_json()["entries"].empty());
}

TEST_F(ExperimentFiles, AModelsFileThatCannotBeWrittenIsCannotWriteWithTheWritesMessage) {
  const auto devices = host_devices(1);
  auto o = experiment_options({PolicyKind::kDmda});
  const std::string path = (dir_ / "missing" / "models.json").string();
  o.models = path;
  auto e = run_experiment(workload_for(o.spec, devices.models), devices, o);
  ASSERT_FALSE(e.has_value());
  EXPECT_EQ(e.error().code, Errc::kCannotWrite);
  EXPECT_THAT(e.error().message, HasSubstr(path));
}

TEST(RunExperiment, ARunThatFailsIsAnErrorNamingThePolicy) {
  const auto devices = host_devices(2);
  const auto o = experiment_options({PolicyKind::kHeft});
  // Made for three devices, run on two.
  const Workload w = workload_for(o.spec, std::vector<DeviceModel>(3));
  auto e = run_experiment(w, devices, o);
  ASSERT_FALSE(e.has_value());
  EXPECT_EQ(e.error().code, Errc::kInvalidArgument);
  EXPECT_THAT(e.error().message, StartsWith("heft: "));
}

// A device lost after a few copies, as `acco schedule --inject-fault 0:lost-after:N`: every run
// ends (unregister waited for ever on the pin of a prefetch whose task had failed, and a failed
// fetch released pins that prefetches held), and says which device failed.
TEST(RunExperiment, ADeviceLostAfterAFewCopiesEndsEveryRun) {
  for (const auto& [policy, copies] :
       std::vector<std::pair<PolicyKind, int>>{{PolicyKind::kDmda, 1},
                                               {PolicyKind::kDmda, 2},
                                               {PolicyKind::kWorkStealing, 1},
                                               {PolicyKind::kEager, 1}}) {
    // Each run on fresh devices: a lost device stays lost, the next policy's runtime could not
    // even make its queue.
    DeviceSetup setup;
    setup.host_devices = 2;
    setup.link = device::parse_link("pcie3x16").value();
    setup.faults = {{0, device::parse_fault_plan(fmt::format("lost-after:{}", copies)).value()}};
    auto backend = open_experiment_backend(setup);
    ASSERT_THAT(backend, IsOk());
    auto devices = experiment_devices(std::move(*backend), setup, {"gpu", "gpu"}, {1, 1});
    ASSERT_THAT(devices, IsOk());
    ExperimentOptions o;
    o.spec.tiles = 4;
    o.spec.time_scale = 0.01;
    o.policies = {policy};
    o.calibration_runs = 1;
    const Workload w = workload_for(o.spec, devices->models);
    auto e = run_experiment(w, *devices, o, [](std::string_view) {});
    ASSERT_THAT(e, IsOk()) << copies << " copies";
    ASSERT_EQ(e->runs.size(), 1U);
    EXPECT_THAT(fault_lines(e->runs.front()), ::testing::Contains(HasSubstr("dev0 failed")))
        << "lost after " << copies << " copies";
  }
}

TEST(FaultLines, NameTheFailedDeviceWhenWhyAndHowManyTasksMovedAndTheFailedCopies) {
  WorkloadOutcome run;
  run.policy = "dmda";
  EXPECT_TRUE(fault_lines(run).empty());
  DeviceRecord lost;
  lost.device = 1;
  lost.failed = true;
  lost.failure = "injected fault: host 1 lost";
  lost.failed_at = std::chrono::milliseconds(12);
  lost.moved_away = 3;
  run.record.devices = {DeviceRecord{}, lost};
  TransferRecord copy;
  copy.error = "injected fault: copy 2 failed";
  run.record.transfers = {copy, TransferRecord{}};
  EXPECT_THAT(fault_lines(run),
              ElementsAre("dmda: dev1 failed at +12.00 ms: injected fault: host 1 lost; 3 tasks "
                          "moved to other devices",
                          "dmda: 1 copy failed (a prefetch is fetched again, a demand copy retires "
                          "its device); the trace marks them"));
  run.record.devices[1].moved_away = 1;
  run.record.devices[1].failed_at = std::chrono::nanoseconds(-1);
  EXPECT_THAT(fault_lines(run).front(),
              StrEq("dmda: dev1 failed: injected fault: host 1 lost; 1 task moved to other "
                    "devices"));
}

TEST(DeviceSpecs, CarryTheKindTheBudgetAndTheTunedProfile) {
  auto devices = host_devices(2);
  devices.models = {{"cpu", 1}, {"gpu", 2}};
  devices.memory_budget_bytes = 64 << 20;
  transfer::Profile tuned;
  tuned.chunk_bytes = 1 << 20;
  devices.transfer_profiles = {std::nullopt, tuned};
  const auto specs = device_specs(devices);
  ASSERT_EQ(specs.size(), 2U);
  EXPECT_EQ(specs[0].device, devices.devices[0]);
  EXPECT_EQ(specs[0].kind, "cpu");
  EXPECT_EQ(specs[1].kind, "gpu");
  EXPECT_EQ(specs[1].memory_budget_bytes, 64U << 20);
  EXPECT_FALSE(specs[0].transfer_profile.has_value());
  ASSERT_TRUE(specs[1].transfer_profile.has_value());
  EXPECT_EQ(specs[1].transfer_profile->chunk_bytes, 1U << 20);
}

TEST(LargestTask, ACholeskyGemmTouchesThreeTiles) {
  auto spec = small_cholesky();
  const auto w = workload_for(spec, std::vector<DeviceModel>(1));
  const LargestTask largest = largest_task(w);
  EXPECT_EQ(largest.bytes, 3U * spec.tile_bytes);
  EXPECT_EQ(largest.type, "gemm");
  EXPECT_EQ(largest_task(Workload{}).bytes, 0U);
}

TEST(DescribeExperiment, DevicesWithoutAnEmulatedLinkShowTheirOwnRate) {
  auto devices = host_devices(1, "25GB/s");
  devices.link.clear();
  const auto o = experiment_options({PolicyKind::kDmda});
  const Experiment e = describe_experiment(workload_for(o.spec, devices.models), devices, o);
  ASSERT_EQ(e.devices.size(), 1U);
  EXPECT_EQ(e.devices[0].link, units::format_rate(25e9));
  EXPECT_DOUBLE_EQ(e.devices[0].link_bytes_per_second, 25e9);
  EXPECT_TRUE(e.runs.empty());
}

TEST(ExperimentJson, ConformsToTheScheduleSchemaWithTheFirstRunAtTheTop) {
  const auto devices = host_devices(2);
  auto o = experiment_options({PolicyKind::kEager, PolicyKind::kDmda});
  o.sorted_decision = true;
  auto e = run_experiment(workload_for(o.spec, devices.models), devices, o);
  ASSERT_THAT(e, IsOk());
  const nlohmann::json j = to_json(*e);
  EXPECT_EQ(acco::testing::validate(acco::testing::published_schema("schedule.schema.json"), j),
            std::vector<std::string>{});
  EXPECT_EQ(j["schema"], kScheduleSchema);
  EXPECT_EQ(j["workload"]["name"], "cholesky");
  EXPECT_EQ(j["workload"]["tiles"], 3);
  EXPECT_FALSE(j["workload"].contains("skew"));
  EXPECT_EQ(j["devices"][1]["link"], "pcie3x16");
  EXPECT_EQ(j["devices"][1]["kind"], "gpu");
  EXPECT_EQ(j["sorted_decision"], true);
  EXPECT_EQ(j["policy"], "eager");
  ASSERT_EQ(j["runs"].size(), 2U);
  EXPECT_EQ(j["runs"][1]["policy"], "dmda");
  EXPECT_EQ(j["runs"][0]["makespan_seconds"], j["makespan_seconds"]);
}

}  // namespace
}  // namespace acco::sched
