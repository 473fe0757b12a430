// The collective benchmark end to end on one rank (self_communicator): NCCL absent or the fake
// libnccl.so.2 (tests/fake_nccl) without a GPU, host buffers and emulated device buffers. Jobs of
// several ranks under mpirun are in tests/integration/collective_test.cpp.
#include <filesystem>
#include <memory>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "acco/cluster/collective_bench.hpp"
#include "acco/cluster/collective_job.hpp"
#include "acco/device/host_backend.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::cluster {
namespace {

using ::acco::testing::IsOk;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Small and quick: sizes 8 B to 4 KiB, two timed iterations.
CollectiveBenchOptions quick_bench(Buffers buffers, const std::string& nccl_library) {
  CollectiveBenchOptions o;
  o.collectives.ops = {Op::kAllReduce, Op::kAllGather};
  o.collectives.max_bytes = 4096;
  o.collectives.iters = 2;
  o.collectives.warmup = 0;
  o.buffers = buffers;
  o.nccl_library = nccl_library;
  return o;
}

Result<std::shared_ptr<device::Backend>> emulated_device() {
  ACCO_ASSIGN_OR_RETURN(auto backend, device::make_host_backend({}));
  return std::shared_ptr<device::Backend>(std::move(backend));
}

TEST(RunCollectiveBench, HostBuffersOfOneRankWithoutNcclAreCopiedAndChecked) {
  auto comm = self_communicator();
  auto run = run_collective_bench(*comm, quick_bench(Buffers::kHost, "libnccl-absent.so.2"));
  ASSERT_THAT(run, IsOk());
  EXPECT_EQ(run->ranks, 1);
  EXPECT_EQ(run->path, DataPath::kHost);
  EXPECT_EQ(run->device, "");
  EXPECT_EQ(run->wrong, 0U);
  ASSERT_EQ(run->ops.size(), 2U);
  EXPECT_FALSE(run->ops[0].points.empty());
  EXPECT_EQ(run->ops[0].summary.verdict, Verdict::kSingleRank);
  EXPECT_EQ(run->nccl.library, "libnccl-absent.so.2");
  EXPECT_EQ(run->nccl.stage, NcclStage::kLoad);
  EXPECT_THAT(run->nccl.error, HasSubstr("rank 0: libnccl-absent.so.2: cannot open"));
}

TEST(RunCollectiveBench, TheFakeNcclWithoutAGpuStopsAtInitAndTheHostCarriesTheData) {
  auto comm = self_communicator();
  auto run = run_collective_bench(*comm, quick_bench(Buffers::kHost, ACCO_FAKE_NCCL_PATH));
  ASSERT_THAT(run, IsOk());
  EXPECT_TRUE(run->nccl.loaded);
  EXPECT_EQ(run->nccl.stage, NcclStage::kInit);
  EXPECT_EQ(run->path, DataPath::kHost);
  EXPECT_EQ(run->wrong, 0U);
}

TEST(RunCollectiveBench, EmulatedDeviceBuffersOfOneRankAreStagedThroughPinnedHostBuffers) {
  auto comm = self_communicator();
  auto o = quick_bench(Buffers::kDevice, "libnccl-absent.so.2");
  int opened = 0;
  o.open_backend = [&] {
    ++opened;
    return emulated_device();
  };
  auto run = run_collective_bench(*comm, o);
  ASSERT_THAT(run, IsOk());
  EXPECT_EQ(opened, 1);
  EXPECT_EQ(run->path, DataPath::kStagedMpi);
  EXPECT_EQ(run->data_path, "device buffers staged through pinned host buffers, one rank (copy)");
  EXPECT_THAT(run->device, HasSubstr("host 0"));
  EXPECT_EQ(run->wrong, 0U);
}

TEST(RunCollectiveBench, TheBenchsBackendChoiceOpensTheDeviceOfDeviceBuffers) {
  auto comm = self_communicator();
  auto o = quick_bench(Buffers::kDevice, "libnccl-absent.so.2");
  device::HostBackendOptions host;
  host.devices = 2;
  host.link = device::parse_link("25GB/s").value();
  o.open_backend = backend_opener(bench::BackendChoice::kHost, host);
  auto opened = o.open_backend();
  ASSERT_THAT(opened, IsOk());
  EXPECT_EQ((*opened)->devices().size(), 2U);
  EXPECT_EQ((*opened)->devices()[0]->info().backend, "host");
  auto run = run_collective_bench(*comm, o);
  ASSERT_THAT(run, IsOk());
  EXPECT_EQ(run->path, DataPath::kStagedMpi);
  EXPECT_THAT(run->device, HasSubstr("host 0 (25GB/s"));
  EXPECT_EQ(run->wrong, 0U);
  // What the choice refuses is the run's error: a bad emulated link here.
  host.link.bytes_per_second = -1;
  o.open_backend = backend_opener(bench::BackendChoice::kHost, host);
  EXPECT_THAT(run_collective_bench(*comm, o), ::acco::testing::StatusIs(Errc::kInvalidArgument));
}

TEST(RunCollectiveBench, DeviceBuffersWithoutABackendToOpenAreAnError) {
  auto comm = self_communicator();
  auto run = run_collective_bench(*comm, quick_bench(Buffers::kDevice, "libnccl-absent.so.2"));
  ASSERT_FALSE(run.has_value());
  EXPECT_EQ(run.error().code, Errc::kInvalidArgument);
  EXPECT_THAT(run.error().message, HasSubstr("no backend"));
}

TEST(RunCollectiveBench, ABackendThatCannotOpenStopsTheRunWithItsError) {
  auto comm = self_communicator();
  auto o = quick_bench(Buffers::kDevice, "libnccl-absent.so.2");
  o.open_backend = []() -> Result<std::shared_ptr<device::Backend>> {
    return fail(Errc::kUnavailable, "CUDA backend: no driver");
  };
  auto run = run_collective_bench(*comm, o);
  ASSERT_FALSE(run.has_value());
  EXPECT_EQ(run.error().code, Errc::kUnavailable);
  EXPECT_THAT(run.error().message, HasSubstr("CUDA backend: no driver"));
}

TEST(RunCollectiveBench, NcclAskedForAndAbsentIsUnavailableAndSaysWhy) {
  auto comm = self_communicator();
  auto o = quick_bench(Buffers::kDevice, "libnccl-absent.so.2");
  o.via = Via::kNccl;
  o.open_backend = emulated_device;
  auto run = run_collective_bench(*comm, o);
  ASSERT_FALSE(run.has_value());
  EXPECT_EQ(run.error().code, Errc::kUnavailable);
  EXPECT_THAT(run.error().message, StartsWith("--via nccl: NCCL (libnccl-absent.so.2) not used"));
}

TEST(RunCollectiveBench, BadOptionsAreInvalidArguments) {
  auto comm = self_communicator();
  auto o = quick_bench(Buffers::kHost, "libnccl-absent.so.2");
  o.collectives.factor = 1;
  auto run = run_collective_bench(*comm, o);
  ASSERT_FALSE(run.has_value());
  EXPECT_EQ(run.error().code, Errc::kInvalidArgument);
}

// The job as `acco bench --collective` runs it: rank 0 records the run in the history, compares
// it with the last one like it, and cannot save a fusion threshold without a machine.
TEST(RunCollectiveJob, RecordsComparesAndReportsWhyNoThresholdWasSaved) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "collective_job";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  topo::Machine machine;
  machine.hostname = "node1";
  CollectiveJobOptions options{.bench = quick_bench(Buffers::kHost, "libnccl-absent.so.2"),
                               .history = (dir / "history.sqlite").string(),
                               .compare = true};
  options.bench.machine = machine;
  auto comm = self_communicator();
  auto first = run_collective_job(*comm, options);
  ASSERT_THAT(first, IsOk());
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ((*first)->history.note,
            "No previous run of these collectives on this machine to compare with.\n");
  EXPECT_THAT(to_text(**first),
              HasSubstr("\nNo previous run of these collectives on this machine to compare with."));
  EXPECT_EQ((*first)->notes, "");

  options.save_fusion = true;
  options.bench.machine.reset();  // no fingerprint: nothing recorded, no profile to name
  auto second = run_collective_job(*comm, options);
  ASSERT_THAT(second, IsOk());
  ASSERT_TRUE(second->has_value());
  EXPECT_EQ((*second)->history.note,
            "No machine fingerprint (the probe failed): nothing to compare.\n");
  ASSERT_TRUE((*second)->fusion_failure.has_value());
  EXPECT_EQ((*second)->fusion_failure->code, Errc::kUnavailable);
  EXPECT_FALSE((*second)->fusion.has_value());
  const auto j = to_json(**second);
  EXPECT_EQ(j["schema"], "acco.collective/1");
  EXPECT_TRUE(j["comparisons"].is_array());

  options.compare = false;
  options.history.reset();
  options.save_fusion = false;
  auto plain = run_collective_job(*comm, options);
  ASSERT_THAT(plain, IsOk());
  EXPECT_EQ(to_text(**plain), to_text((*plain)->run));
  EXPECT_FALSE(to_json(**plain).contains("comparisons"));
}

}  // namespace
}  // namespace acco::cluster
