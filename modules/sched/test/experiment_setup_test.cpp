#include "acco/sched/experiment_setup.hpp"

#include <map>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/device/cuda_backend.hpp"
#include "acco/sched/experiment_request.hpp"
#include "acco/sched/policy.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::sched {
namespace {

using ::acco::testing::HasValue;
using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(DeviceSpecText, HostWithACountPlainHostAndCuda) {
  DeviceSetup setup;
  ASSERT_THAT(parse_device_spec("host:7", setup), IsOk());
  EXPECT_FALSE(setup.cuda);
  EXPECT_EQ(setup.host_devices, 7);
  DeviceSetup plain;
  ASSERT_THAT(parse_device_spec("host", plain), IsOk());
  EXPECT_EQ(plain.host_devices, 4);
  DeviceSetup cuda;
  ASSERT_THAT(parse_device_spec("cuda", cuda), IsOk());
  EXPECT_TRUE(cuda.cuda);
  for (const char* bad : {"host:0", "host:65", "host:", "host:x", "tpu", "cuda:0", ""}) {
    DeviceSetup s;
    EXPECT_THAT(parse_device_spec(bad, s),
                StatusIs(Errc::kInvalidArgument,
                         "'" + std::string(bad) + "' is not host:N (N from 1 to 64) or cuda"))
        << bad;
  }
}

TEST(DeviceListText, KindsAreCpuOrGpuAndSpeedsAreBoundedFactors) {
  EXPECT_THAT(parse_device_kinds("cpu, gpu ,gpu"), HasValue(ElementsAre("cpu", "gpu", "gpu")));
  EXPECT_THAT(parse_device_kinds("cpu,fpga"),
              StatusIs(Errc::kInvalidArgument, "'fpga' is not cpu or gpu"));
  EXPECT_THAT(parse_speed_factors("1,2.5,0.001,1000"), HasValue(ElementsAre(1, 2.5, 0.001, 1000)));
  for (const char* bad : {"0", "-2", "fast", "1e-308", "1e4"}) {
    EXPECT_THAT(parse_speed_factors(std::string("1,") + bad),
                StatusIs(Errc::kInvalidArgument,
                         "'" + std::string(bad) + "' is not a number from 0.001 to 1000"))
        << bad;
  }
}

TEST(DeviceListText, DataSizesAndBudgets) {
  EXPECT_THAT(parse_data_bytes("64KiB"), HasValue(64U << 10));
  EXPECT_THAT(parse_data_bytes("1TiB"), HasValue(std::uint64_t{1} << 40));
  for (const char* bad : {"0", "2TiB", "big"}) {
    EXPECT_THAT(parse_data_bytes(bad),
                StatusIs(Errc::kInvalidArgument, "'" + std::string(bad) +
                                                     "' is not a size from 1 B to 1 TiB, such as "
                                                     "64KiB or 4MiB"));
  }
  EXPECT_THAT(parse_memory_budget("512MiB"), HasValue(512U << 20));
  EXPECT_THAT(parse_memory_budget("0"),
              StatusIs(Errc::kInvalidArgument, "'0' is not a size such as 512MiB or 2GiB"));
}

TEST(ExperimentRequest, TheFlagsTextsBecomeTheSetupAndTheSpec) {
  DeviceRequest d;
  d.devices = "host:2";
  d.kinds = "cpu,gpu";
  d.speeds = "2";
  d.memory = "1GiB";
  d.faults = {"1:copy-fails:2"};
  auto setup = device_setup(d);
  ASSERT_THAT(setup, IsOk());
  EXPECT_EQ(setup->host_devices, 2);
  EXPECT_THAT(setup->kinds, ElementsAre("cpu", "gpu"));
  EXPECT_THAT(setup->speeds, ElementsAre(2.0));
  EXPECT_EQ(setup->memory_bytes, 1ULL << 30U);
  ASSERT_EQ(setup->faults.size(), 1U);
  EXPECT_EQ(setup->faults[0].first, 1);
  WorkloadRequest w;
  w.kind = "independent";
  w.spec.tasks = 50;
  w.task_bytes = "64KiB";
  auto spec = workload_spec(w);
  ASSERT_THAT(spec, IsOk());
  EXPECT_EQ(spec->kind, WorkloadKind::kIndependent);
  EXPECT_EQ(spec->tasks, 50);
  EXPECT_EQ(spec->task_bytes, 64U * 1024);
}

TEST(ExperimentRequest, EachBadValueIsNamedAsItsFlag) {
  DeviceRequest d;
  d.devices = "host:2";
  d.kinds = "cpu,gpu,gpu";
  EXPECT_THAT(device_setup(d), StatusIs(Errc::kInvalidArgument, HasSubstr("--kinds: ")));
  d = {};
  d.devices = "cuda";
  d.link = "pcie4x16";
  EXPECT_THAT(device_setup(d), StatusIs(Errc::kInvalidArgument,
                                        "--link: only for host devices (a GPU has its own link)"));
  WorkloadRequest w;
  w.spec.tiles = 101;
  EXPECT_THAT(workload_spec(w),
              StatusIs(Errc::kInvalidArgument, "--tiles: '101' is not between 1 and 100"));
  w = {};
  w.spec.beta = 2;
  EXPECT_THAT(workload_spec(w), StatusIs(Errc::kInvalidArgument, "--beta: '2' is not in [0, 2)"));
  w = {};
  w.kind = "fft";
  EXPECT_THAT(workload_spec(w),
              StatusIs(Errc::kInvalidArgument,
                       "--workload: 'fft' is not one of cholesky, lu, independent, chain, random"));
}

TEST(ExperimentRequest, OpenedDevicesTakeOneKindAndSpeedForAll) {
  DeviceRequest d;
  d.devices = "host:2";
  d.kinds = "cpu";
  d.speeds = "3";
  auto setup = device_setup(d);
  ASSERT_THAT(setup, IsOk());
  auto opened = open_devices(*setup);
  ASSERT_THAT(opened, IsOk());
  EXPECT_THAT(opened->models, ElementsAre(DeviceModel{"cpu", 3}, DeviceModel{"cpu", 3}));
  setup->faults.emplace_back(5, device::FaultPlan{});  // no device 5
  EXPECT_THAT(open_devices(*setup),
              StatusIs(Errc::kInvalidArgument, HasSubstr("--inject-fault: ")));
}

TEST(PerDevice, OneValueForAllOrOnePerDevice) {
  EXPECT_THAT(expand_per_device<double>({}, 1.0, 3), HasValue(ElementsAre(1, 1, 1)));
  EXPECT_THAT(expand_per_device<double>({2}, 1.0, 3), HasValue(ElementsAre(2, 2, 2)));
  EXPECT_THAT(expand_per_device<double>({1, 2, 3}, 1.0, 3), HasValue(ElementsAre(1, 2, 3)));
  EXPECT_THAT(expand_per_device<double>({1, 2}, 1.0, 3),
              StatusIs(Errc::kInvalidArgument,
                       "2 values for 3 devices (give one per device, or one for all)"));
  EXPECT_THAT(check_per_device(1, 5), IsOk());
  EXPECT_THAT(check_per_device(4, 5), StatusIs(Errc::kInvalidArgument, HasSubstr("4 values")));
}

TEST(PolicyList, NamesInOrderOrAll) {
  EXPECT_THAT(parse_policies("eager, heft"),
              HasValue(ElementsAre(PolicyKind::kEager, PolicyKind::kHeft)));
  EXPECT_THAT(parse_policies("all"), HasValue(all_policies()));
  EXPECT_THAT(parse_policies("fifo"),
              StatusIs(Errc::kInvalidArgument,
                       "'fifo' is not one of eager, round-robin, least-loaded, dmda, ws, heft, "
                       "or all"));
  EXPECT_THAT(parse_policies("all,dmda"), StatusIs(Errc::kInvalidArgument, HasSubstr("'all'")));
  EXPECT_THAT(parse_policies("dmda,dmda"), StatusIs(Errc::kInvalidArgument, "'dmda' named twice"));
}

DeviceSetup three_host_devices() {
  DeviceSetup setup;
  setup.host_devices = 3;
  setup.link = device::parse_link("pcie4x16").value();
  setup.speeds = {2};
  setup.memory_bytes = 256 << 20;
  return setup;
}

TEST(OpenExperimentDevices, HostDevicesGetTheLinkTheSpeedsAndTheBudget) {
  const DeviceSetup setup = three_host_devices();
  auto backend = open_experiment_backend(setup);
  ASSERT_THAT(backend, IsOk());
  ASSERT_EQ((*backend)->devices().size(), 3U);
  EXPECT_EQ((*backend)->devices()[2]->info().speed_factor, 2);
  EXPECT_EQ((*backend)->devices()[0]->info().memory_bytes, 256U << 20);
  const auto opened =
      experiment_devices(std::move(*backend), setup, {"cpu", "gpu", "gpu"}, {2, 2, 1});
  ASSERT_THAT(opened, IsOk());
  const auto& d = *opened;
  EXPECT_EQ(d.devices.size(), 3U);
  EXPECT_EQ(d.link, "pcie4x16");
  EXPECT_EQ(d.memory_budget_bytes, 256U << 20);
  EXPECT_THAT(d.models,
              ElementsAre(DeviceModel{"cpu", 2}, DeviceModel{"gpu", 2}, DeviceModel{"gpu", 1}));
}

TEST(OpenExperimentDevices, AFaultForADeviceThatIsNotThereIsRefused) {
  DeviceSetup setup = three_host_devices();
  setup.faults = {{3, device::FaultPlan{}}};
  EXPECT_THAT(experiment_devices(open_experiment_backend(setup).value(), setup,
                                 {"gpu", "gpu", "gpu"}, {1, 1, 1}),
              StatusIs(Errc::kInvalidArgument, HasSubstr("there is no device 3 (3 devices)")));
  setup.faults = {{2, device::FaultPlan{}}};
  const auto d = experiment_devices(open_experiment_backend(setup).value(), setup,
                                    {"gpu", "gpu", "gpu"}, {1, 1, 1});
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->faulty.size(), 1U);
}

TEST(OpenExperimentDevices, WhatTheHostBackendRefusesNamesTheHostDevices) {
  DeviceSetup setup = three_host_devices();
  setup.speeds = {1, 2};
  EXPECT_THAT(open_experiment_backend(setup),
              StatusIs(Errc::kInvalidArgument, HasSubstr("host devices: speeds: 2 values for 3")));
  setup.speeds = {};
  setup.link.bytes_per_second = -1;
  EXPECT_THAT(open_experiment_backend(setup),
              StatusIs(Errc::kInvalidArgument, HasSubstr("host devices: ")));
}

TEST(OpenExperimentDevices, CudaWithoutAGpuIsUnavailable) {
  if (auto cuda = device::make_cuda_backend(); cuda && !(*cuda)->devices().empty()) {
    GTEST_SKIP() << "a GPU is present";
  }
  DeviceSetup setup;
  setup.cuda = true;
  auto backend = open_experiment_backend(setup);
  ASSERT_FALSE(backend.has_value());
  EXPECT_THAT(backend.error().code, ::testing::AnyOf(Errc::kUnavailable, Errc::kUnsupported));
}

TEST(OpenExperimentDevices, EachDeviceGetsItsTunedPinnedUploadProfile) {
  DeviceSetup setup = three_host_devices();
  auto d = experiment_devices(open_experiment_backend(setup).value(), setup, {"gpu", "gpu", "gpu"},
                              {1, 1, 1})
               .value();
  transfer::Profile tuned;
  tuned.chunk_bytes = 1 << 20;
  transfer::Profile other;
  other.slots = 7;
  const std::string second = d.devices[1]->info().name;
  apply_transfer_profiles({{second + "/h2d_pinned", tuned}, {second + "/d2h_pinned", other}}, d);
  ASSERT_EQ(d.transfer_profiles.size(), 3U);
  EXPECT_FALSE(d.transfer_profiles[0].has_value());
  ASSERT_TRUE(d.transfer_profiles[1].has_value());
  EXPECT_EQ(d.transfer_profiles[1]->chunk_bytes, 1U << 20);
  EXPECT_FALSE(d.transfer_profiles[2].has_value());
}

TEST(MemoryBudget, MustHoldTheLargestTasksData) {
  WorkloadSpec spec;
  spec.tiles = 3;
  spec.tile_bytes = 1 << 20;
  const auto w = make_workload(spec, std::vector<DeviceModel>(1));
  ASSERT_THAT(w, IsOk());
  EXPECT_THAT(check_memory_budget(0, *w), IsOk());
  EXPECT_THAT(check_memory_budget(3 << 20, *w), IsOk());
  EXPECT_THAT(
      check_memory_budget(2 << 20, *w),
      StatusIs(Errc::kInvalidArgument, "2.00 MiB cannot hold the 3.00 MiB a gemm task touches"));
}

}  // namespace
}  // namespace acco::sched
