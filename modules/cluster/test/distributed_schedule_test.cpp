// The distributed scheduling experiment on one rank (self_communicator, rank 0 both coordinating
// and working). Several ranks under mpirun: tests/integration/schedule_distributed_test.cpp.
#include "acco/cluster/distributed_schedule.hpp"

#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "acco/device/host_backend.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::cluster {
namespace {

using ::acco::testing::HasValue;
using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

sched::ExperimentDevices two_emulated_gpus() {
  sched::ExperimentDevices d;
  device::HostBackendOptions host;
  host.devices = 2;
  auto backend = device::make_host_backend(host);
  EXPECT_THAT(backend, IsOk());
  d.backend = std::move(*backend);
  d.devices = d.backend->devices();
  d.models.assign(2, sched::DeviceModel{"gpu", 1});
  d.link = "unlimited";
  return d;
}

DistributedScheduleOptions both_dispatch_policies() {
  DistributedScheduleOptions o;
  o.spec.tiles = 3;
  o.spec.tile_bytes = 64 << 10;
  o.spec.time_scale = 0.05;
  o.calibration_runs = 0;
  o.dispatch = {DispatchPolicy::kLocality, DispatchPolicy::kRoundRobin};
  return o;
}

sched::Workload job_workload(const DistributedScheduleOptions& o, const sched::ExperimentDevices& d,
                             int ranks) {
  auto w = sched::make_workload(o.spec, job_device_models(d.models, ranks));
  EXPECT_THAT(w, IsOk());
  return w.value_or(sched::Workload{});
}

TEST(JobDeviceModels, AreThisRanksDevicesOncePerRank) {
  const std::vector<sched::DeviceModel> local = {{"cpu", 1}, {"gpu", 2}};
  EXPECT_THAT(job_device_models(local, 2), ElementsAre(local[0], local[1], local[0], local[1]));
  EXPECT_TRUE(job_device_models(local, 0).empty());
}

TEST(RunDistributedSchedule, OneRankRunsEveryDispatchPolicyInTurn) {
  const auto devices = two_emulated_gpus();
  const auto o = both_dispatch_policies();
  auto comm = self_communicator();
  std::vector<std::string> lines;
  auto s = run_distributed_schedule(*comm, job_workload(o, devices, 1), devices, o,
                                    [&](std::string_view line) { lines.emplace_back(line); });
  ASSERT_THAT(s, IsOk());
  ASSERT_EQ(s->runs.size(), 2U);
  EXPECT_EQ(s->runs[0].policy, "locality");
  EXPECT_EQ(s->runs[1].policy, "round-robin");
  EXPECT_EQ(s->ranks, 1);
  EXPECT_EQ(s->devices_per_rank, 2U);
  EXPECT_EQ(s->tasks, 10U);
  EXPECT_THAT(lines, ElementsAre("[1/2] locality: 10 task(s) over 1 rank(s), 0 calibration run(s)",
                                 "[2/2] round-robin: 10 task(s) over 1 rank(s), 0 calibration "
                                 "run(s)"));
}

TEST(RunDistributedSchedule, AWorkloadForOtherDevicesIsAnErrorNamingTheDispatchPolicy) {
  const auto devices = two_emulated_gpus();
  const auto o = both_dispatch_policies();
  auto comm = self_communicator();
  auto s = run_distributed_schedule(*comm, job_workload(o, devices, 2), devices, o);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, Errc::kInvalidArgument);
  EXPECT_THAT(s.error().message, StartsWith("locality: "));
}

TEST(DistributedScheduleJson, CarriesTheJobAndEveryRunWithItsWorkers) {
  const auto devices = two_emulated_gpus();
  auto o = both_dispatch_policies();
  o.between_ranks_bytes_per_second = 25e9;
  auto comm = self_communicator();
  auto s = run_distributed_schedule(*comm, job_workload(o, devices, 1), devices, o);
  ASSERT_THAT(s, IsOk());
  const nlohmann::json j = to_json(*s);
  EXPECT_EQ(j["schema"], kDistributedScheduleSchema);
  EXPECT_EQ(j["workload"]["name"], "cholesky");
  EXPECT_EQ(j["workload"]["tiles"], 3);
  EXPECT_EQ(j["ranks"], 1);
  EXPECT_EQ(j["devices_per_rank"], 2);
  EXPECT_EQ(j["link"], "unlimited");
  EXPECT_EQ(j["local_policy"], "dmda");
  EXPECT_EQ(j["between_ranks_bytes_per_second"], 25e9);
  ASSERT_EQ(j["runs"].size(), 2U);
  EXPECT_EQ(j["runs"][1]["dispatch"], "round-robin");
  ASSERT_EQ(j["runs"][0]["workers"].size(), 1U);
  EXPECT_EQ(j["runs"][0]["workers"][0]["tasks"], 10);
}

TEST(DistributedScheduleText, DispatchPoliciesEachOnceInOrder) {
  EXPECT_THAT(parse_dispatch_policies("round-robin,locality"),
              HasValue(ElementsAre(DispatchPolicy::kRoundRobin, DispatchPolicy::kLocality)));
  EXPECT_THAT(parse_dispatch_policies("locality,nearest"),
              StatusIs(Errc::kInvalidArgument,
                       "'nearest' is not locality or round-robin, comma-separated"));
  EXPECT_THAT(parse_dispatch_policies("locality,"),
              StatusIs(Errc::kInvalidArgument, HasSubstr("'' is not locality")));
  EXPECT_THAT(parse_dispatch_policies("locality,locality"),
              StatusIs(Errc::kInvalidArgument, "'locality' named twice"));
}

TEST(DistributedScheduleText, ASlowRankIsARankAndAFactorFromOneToAHundred) {
  DistributedScheduleOptions o;
  ASSERT_THAT(parse_slow_rank("2:3.5", o), IsOk());
  EXPECT_EQ(o.slow_rank, 2);
  EXPECT_EQ(o.slow_factor, 3.5);
  for (const char* bad : {"2", "2:0.5", "2:101", "-1:2", "x:2", "2:x", "1048577:2"}) {
    DistributedScheduleOptions d;
    EXPECT_THAT(
        parse_slow_rank(bad, d),
        StatusIs(Errc::kInvalidArgument,
                 "'" + std::string(bad) + "' is not RANK:FACTOR, a factor from 1 to 100 (2:3)"))
        << bad;
    EXPECT_EQ(d.slow_rank, -1);
  }
}

TEST(DistributedScheduleText, FaultRanksMustBeRanksOfTheJob) {
  DistributedScheduleOptions o;
  EXPECT_THAT(check_fault_ranks(o, 1), IsOk());
  o.hang_rank = 1;
  EXPECT_THAT(check_fault_ranks(o, 2), IsOk());
  EXPECT_THAT(check_fault_ranks(o, 1), StatusIs(Errc::kInvalidArgument, "the job has 1 rank(s)"));
  o.hang_rank = -1;
  o.slow_rank = 3;
  EXPECT_THAT(check_fault_ranks(o, 3), StatusIs(Errc::kInvalidArgument, "the job has 3 rank(s)"));
}

TEST(RunDistributedJob, OneRankIsRankZeroAndReportsTheJob) {
  const auto devices = two_emulated_gpus();
  auto comm = self_communicator();
  const auto s = run_distributed_job(*comm, devices, both_dispatch_policies());
  ASSERT_THAT(s, IsOk());
  ASSERT_TRUE(s->has_value());
  EXPECT_EQ((*s)->runs.size(), 2U);
  EXPECT_EQ((*s)->tasks, 10U);
  EXPECT_EQ((*s)->ranks, 1);
}

TEST(RunDistributedJob, AFaultRankOutsideTheJobIsNamedBeforeAnyRun) {
  const auto devices = two_emulated_gpus();
  auto o = both_dispatch_policies();
  o.hang_rank = 3;
  auto comm = self_communicator();
  std::vector<std::string> lines;
  const auto s = run_distributed_job(*comm, devices, o,
                                     [&](std::string_view line) { lines.emplace_back(line); });
  EXPECT_THAT(s, StatusIs(Errc::kInvalidArgument, "hang_rank/slow_rank: the job has 1 rank(s)"));
  EXPECT_TRUE(lines.empty());
}

TEST(RunDistributedJob, AWorkloadThatCannotBeMadeIsAnErrorAboutTheSpec) {
  const auto devices = two_emulated_gpus();
  auto o = both_dispatch_policies();
  o.spec.time_scale = 0;  // make_workload refuses non-positive costs
  auto comm = self_communicator();
  const auto s = run_distributed_job(*comm, devices, o);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, Errc::kInvalidArgument);
  EXPECT_THAT(s.error().message, StartsWith("spec: "));
}

}  // namespace
}  // namespace acco::cluster

namespace acco::cluster {
namespace {

TEST(DistributedRequestTest, TheFlagsBecomeTheOptionsAndBadOnesAreNamed) {
  auto d = distributed_options({.dispatch = "locality,round-robin",
                                .lost_after = "250ms",
                                .hang_rank = 2,
                                .slow_rank = "1:3"});
  ASSERT_TRUE(d.has_value()) << d.error().message;
  EXPECT_EQ(d->dispatch.size(), 2U);
  EXPECT_DOUBLE_EQ(d->lost_after_seconds, 0.25);
  EXPECT_DOUBLE_EQ(d->between_ranks_bytes_per_second, 10e9);
  EXPECT_EQ(d->hang_rank, 2);
  EXPECT_EQ(d->slow_rank, 1);
  EXPECT_DOUBLE_EQ(d->slow_factor, 3);
  const auto message = [](const DistributedRequest& r) {
    auto o = distributed_options(r);
    EXPECT_FALSE(o.has_value());
    return o ? std::string() : o.error().message;
  };
  EXPECT_EQ(message({.hang_rank = 0}),
            "--hang-rank: '0' is not a worker's rank, 1 or more (rank 0 coordinates)");
  EXPECT_EQ(message({.lost_after = "1ms"}),
            "--lost-after: '1ms' is not a duration from 10ms to 1h");
  EXPECT_EQ(message({.hang_after = -1}), "--hang-after: '-1' is not between 0 and 1000000");
  EXPECT_EQ(message({.slow_rank = "x"}).rfind("--slow-rank: ", 0), 0U);
}

}  // namespace
}  // namespace acco::cluster
