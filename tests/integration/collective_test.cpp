// `acco bench --collective` end to end: one process without a launcher, and MPI jobs of 2 and 4
// ranks started by Open MPI's mpirun over shared memory and over TCP on this machine. The JSON
// conforms to docs/schemas/collective.schema.json and every result is checked element by element.
#include <algorithm>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_acco.hpp"
#include "sqlite_scalar.hpp"

namespace acco::testing {
namespace {

using ::testing::HasSubstr;

constexpr const char* kSmall = " --max-bytes 256KiB --iters 3 --warmup 1";
constexpr const char* kFakeNccl = ACCO_FAKE_NCCL_PATH;

void expect_every_op_checked(const nlohmann::json& j, int ranks) {
  EXPECT_EQ(j["ranks"], ranks);
  EXPECT_EQ(j["wrong"], 0);
  ASSERT_EQ(j["ops"].size(), 6U);
  for (const auto& op : j["ops"]) {
    ASSERT_FALSE(op["points"].empty()) << op["op"];
    for (const auto& p : op["points"]) {
      EXPECT_EQ(p["wrong"], 0) << op["op"] << " " << p["bytes"];
      EXPECT_GT(p["seconds"].get<double>(), 0) << op["op"];
      if (ranks > 1) {
        EXPECT_GT(p["busbw_bytes_per_second"].get<double>(), 0) << op["op"];
      }
    }
  }
}

TEST(Collective, OneProcessWithoutALauncherIsOneRank) {
  const auto r = acco(std::string("bench --collective all --json") + kSmall);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "collective.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  expect_every_op_checked(j, 1);
  EXPECT_EQ(j["backend"], "self");
  EXPECT_EQ(j["ops"][0]["summary"]["verdict"], "single rank");
}

// nccl-tests' short flags mean what they mean there; --quick is a short sweep (to 1 MiB).
TEST(Collective, NcclTestsShortFlagsAndQuickSetTheSweep) {
  const auto sizes = [](const std::string& args) {
    const auto r = acco("bench --collective allreduce --json --no-history " + args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::uint64_t> out;
    if (r.exit_code == 0) {
      const auto j = nlohmann::json::parse(r.out);
      for (const auto& point : j["ops"][0]["points"]) {
        out.push_back(point["bytes"].get<std::uint64_t>());
      }
    }
    return out;
  };
  EXPECT_EQ(sizes("-b 8 -e 512 -f 4 -n 2 -w 0"), (std::vector<std::uint64_t>{8, 32, 128, 512}));
  const auto quick = sizes("--quick");
  ASSERT_FALSE(quick.empty());
  EXPECT_EQ(quick.front(), 8U);
  EXPECT_EQ(quick.back(), std::uint64_t{1} << 20);
  EXPECT_EQ(sizes("--quick -e 64").back(), 64U);  // what is given explicitly stays
}

TEST(Collective, TextHasTheNcclTestsTableAndTheSummary) {
  const auto r = acco(std::string("bench --collective allreduce,sendrecv") + kSmall);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("#       size        count   type  redop  root       time"));
  EXPECT_THAT(r.out, HasSubstr("# allreduce: plateau algbw"));
  EXPECT_THAT(r.out, HasSubstr("# sendrecv: plateau algbw"));
  EXPECT_THAT(r.out, HasSubstr("# Out of bounds values : 0 OK"));
}

TEST(Collective, WithoutNcclTheReportSaysSoAndMpiCarriesTheData) {
  const auto r = acco(std::string("bench --collective allreduce --json --nccl-library "
                                  "libnccl-absent.so.2") +
                      kSmall);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "collective.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["nccl"]["stage"], "load");
  EXPECT_EQ(j["nccl"]["loaded"], false);
  EXPECT_THAT(j["nccl"]["error"].get<std::string>(),
              HasSubstr("rank 0: libnccl-absent.so.2: cannot open shared object file"));
  EXPECT_EQ(j["wrong"], 0);
}

TEST(Collective, TheFakeNcclWithoutAGpuStopsAtInitInTheTable) {
  const auto r =
      acco(std::string("bench --collective allreduce --nccl-library ") + kFakeNccl + kSmall);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("# NCCL 2.21.5 (" + std::string(kFakeNccl) +
                               ") not used: stopped at init: rank 0: ncclCommInitRankConfig: "
                               "unhandled cuda error"));
  EXPECT_THAT(r.out, HasSubstr("the collectives below ran on host buffers, one rank (copy)"));
}

TEST(Collective, DeviceBuffersOfOneRankAreStagedThroughPinnedHostBuffers) {
  const auto r = acco(std::string("bench --collective all --json --buffers device --backend host "
                                  "--nccl-library libnccl-absent.so.2") +
                      kSmall);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "collective.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  expect_every_op_checked(j, 1);
  EXPECT_EQ(j["path"], "staged-mpi");
  EXPECT_EQ(j["data_path"], "device buffers staged through pinned host buffers, one rank (copy)");
  EXPECT_THAT(j["device"].get<std::string>(), HasSubstr("host 0"));
}

TEST(Collective, AskingForNcclThatIsAbsentIsUnavailableAndSaysWhy) {
  const auto r = acco(std::string("bench --collective allreduce --buffers device --backend host "
                                  "--via nccl --nccl-library libnccl-absent.so.2") +
                      kSmall);
  EXPECT_EQ(r.exit_code, 69);
  EXPECT_THAT(r.err, HasSubstr("--via nccl: NCCL (libnccl-absent.so.2) not used: stopped at "
                               "load: rank 0: libnccl-absent.so.2: cannot open"));
  EXPECT_EQ(r.out, "");
}

TEST(Collective, BadFlagsAreUsageErrors) {
  auto r = acco("bench --collective allreduce,gather");
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_THAT(r.err, HasSubstr("--collective: collective 'gather': expected allreduce"));
  r = acco("bench --collective allreduce --min-bytes 1MiB --max-bytes 1KiB");
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_THAT(r.err, HasSubstr("--min-bytes 1MiB is larger than --max-bytes 1KiB"));
  r = acco("bench --collective allreduce --factor 1");
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_THAT(r.err, HasSubstr("--factor"));
  r = acco("bench --collective allreduce --suite storage");
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_THAT(r.err, HasSubstr("--suite excludes --collective"));
  r = acco("bench --collective allreduce --buffers gpu");
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_THAT(r.err, HasSubstr("--buffers: 'gpu' is not one of host, device"));
  r = acco("bench --collective allreduce --via nccl");
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_THAT(r.err, HasSubstr("--via nccl: needs --buffers device"));
  r = acco("bench --collective allreduce --buffers device --via ucx");
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_THAT(r.err, HasSubstr("--via: 'ucx' is not one of auto, nccl, mpi"));
  r = acco("bench --collective allreduce --nccl-timeout 0s");
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_THAT(r.err, HasSubstr("--nccl-timeout '0s': expected a duration above 0"));
}

TEST(Collective, TwoRanksOverSharedMemory) {
  if (std::string(kMpiexec).empty()) {
    GTEST_SKIP() << "acco was built without MPI (libopenmpi-dev not found)";
  }
  const auto r =
      mpirun(2, "--mca btl self,vader", std::string("bench --collective all --json") + kSmall);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  expect_conforms(r.out, "collective.schema.json");
  const auto j = nlohmann::json::parse(r.out);  // rank 0 alone prints
  expect_every_op_checked(j, 2);
  EXPECT_EQ(j["backend"], "mpi");
  EXPECT_EQ(j["nodes"], 1);
  EXPECT_THAT(j["library"].get<std::string>(), HasSubstr("Open MPI"));
  EXPECT_EQ(j["ops"][0]["summary"]["verdict"], "no peak");  // one node: no network link
  EXPECT_THAT(j["ops"][0]["summary"]["expected_source"].get<std::string>(), HasSubstr("one node"));
}

TEST(Collective, FourRanksOverTcp) {
  if (std::string(kMpiexec).empty()) {
    GTEST_SKIP() << "acco was built without MPI (libopenmpi-dev not found)";
  }
  const auto r = mpirun(4, "--mca btl self,tcp --mca btl_tcp_if_include lo",
                        std::string("bench --collective all --json") + kSmall);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  expect_conforms(r.out, "collective.schema.json");
  expect_every_op_checked(nlohmann::json::parse(r.out), 4);
}

// Rank 0's unique id reaches rank 1 over MPI (the fake's init refuses an id that
// ncclGetUniqueId did not make), and a failure on rank 1 alone is named on rank 0.
TEST(Collective, NcclBootstrapsOverTwoRanksWithTheIdBroadcastOverMpi) {
  if (std::string(kMpiexec).empty()) {
    GTEST_SKIP() << "acco was built without MPI (libopenmpi-dev not found)";
  }
  const std::string args =
      std::string(
          "bench --collective allreduce --json --max-bytes 4KiB --iters 2 --warmup 0 "
          "--nccl-library ") +
      kFakeNccl;
  auto r = mpirun(2, "-x ACCO_FAKE_NCCL_MODE=ok --mca btl self,vader", args);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["nccl"]["stage"], "bootstrapped") << j["nccl"]["error"];
  EXPECT_EQ(j["nccl"]["ranks"], 2);
  r = mpirun(2, "-x ACCO_FAKE_NCCL_MODE=fail-on-rank-1 --mca btl self,vader", args);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["nccl"]["stage"], "init");
  EXPECT_THAT(j["nccl"]["error"].get<std::string>(),
              HasSubstr("rank 1: ncclCommInitRankConfig: unhandled system error"));
}

// Ranks that load different NCCL versions (NCCL refuses a mix, and its bootstrap may not get
// that far): every rank stops at load naming both versions, and MPI carries the data.
TEST(Collective, RanksWithDifferentNcclVersionsDoNotBootstrapAndMpiCarriesTheData) {
  if (std::string(kMpiexec).empty()) {
    GTEST_SKIP() << "acco was built without MPI (libopenmpi-dev not found)";
  }
  const std::string rank_1_older = std::string(
                                       "sh -c '[ \"$OMPI_COMM_WORLD_RANK\" = 1 ] && export "
                                       "ACCO_FAKE_NCCL_VERSION=21805; exec ") +
                                   ACCO_BINARY + " \"$@\"' acco";
  const auto r = mpirun(
      2, "-x ACCO_FAKE_NCCL_MODE=ok --mca btl self,vader",
      std::string("bench --collective allreduce --json --nccl-library ") + kFakeNccl + kSmall,
      rank_1_older);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  expect_conforms(r.out, "collective.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["nccl"]["stage"], "load");
  EXPECT_EQ(j["nccl"]["version"], "2.21.5");
  EXPECT_THAT(j["nccl"]["error"].get<std::string>(),
              HasSubstr("rank 1: NCCL 2.18.5 here, 2.21.5 on rank 0 (every rank must load the "
                        "same NCCL version"));
  EXPECT_EQ(j["ranks"], 2);
  EXPECT_EQ(j["wrong"], 0);
}

// NCCL's bootstrap waits for a rank that never joins for ever (the fake's nonblocking init
// never completes, on either rank): each rank aborts its init after 2 s, the report says so,
// and the collectives run over MPI. Without the watchdog the job would never end.
TEST(Collective, AnNcclInitThatNeverCompletesIsAbortedAndMpiCarriesTheData) {
  if (std::string(kMpiexec).empty()) {
    GTEST_SKIP() << "acco was built without MPI (libopenmpi-dev not found)";
  }
  const auto r = mpirun(2, "-x ACCO_FAKE_NCCL_MODE=init-stalls --mca btl self,vader",
                        std::string("bench --collective allreduce --json --nccl-timeout 2s "
                                    "--nccl-library ") +
                            kFakeNccl + kSmall);
  EXPECT_NE(r.exit_code, 124) << "the init was not aborted before mpirun's timeout";
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  expect_conforms(r.out, "collective.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["nccl"]["stage"], "init");
  EXPECT_EQ(j["nccl"]["nonblocking"], true);
  EXPECT_THAT(j["nccl"]["error"].get<std::string>(),
              HasSubstr("rank 0: ncclCommInitRankConfig not complete after 2 s (a rank did not "
                        "join"));
  EXPECT_EQ(j["ranks"], 2);
  EXPECT_EQ(j["wrong"], 0);
}

// Device buffers of the host backend over two ranks: NCCL's collectives (the fake's data plane
// is Open MPI, so every result crosses processes), and staged through pinned host buffers.
TEST(Collective, TwoRanksMoveDeviceBuffersThroughNcclOrStagedMpi) {
  if (std::string(kMpiexec).empty()) {
    GTEST_SKIP() << "acco was built without MPI (libopenmpi-dev not found)";
  }
  const std::string device = std::string(
                                 "bench --collective all --json --buffers device "
                                 "--backend host --nccl-library ") +
                             kFakeNccl + kSmall;
  auto r = mpirun(2, "-x ACCO_FAKE_NCCL_MODE=ok --mca btl self,vader", device + " --via nccl");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  expect_conforms(r.out, "collective.schema.json");
  auto j = nlohmann::json::parse(r.out);
  expect_every_op_checked(j, 2);
  EXPECT_EQ(j["path"], "nccl");
  EXPECT_EQ(j["data_path"], "device buffers over NCCL");
  EXPECT_EQ(j["nccl"]["stage"], "bootstrapped");

  // The fake without a GPU: NCCL stops at init and MPI carries staged copies.
  r = mpirun(2, "--mca btl self,vader", device);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  expect_conforms(r.out, "collective.schema.json");
  j = nlohmann::json::parse(r.out);
  expect_every_op_checked(j, 2);
  EXPECT_EQ(j["path"], "staged-mpi");
  EXPECT_EQ(j["data_path"], "device buffers staged through pinned host buffers over MPI");
  EXPECT_EQ(j["nccl"]["stage"], "init");
  // Staged copies cross the emulated device's link: it bounds the expected bus bandwidth.
  EXPECT_THAT(j["ops"][0]["summary"]["expected_source"].get<std::string>(),
              HasSubstr("crossed down and back up one after the other (half)"));
}

// Device buffers in GPU memory of the fake CUDA driver (one GPU per rank), moved by the fake
// NCCL across two ranks: the whole device-buffer path of the CUDA backend, checked element by
// element.
TEST(Collective, TwoRanksMoveGpuBuffersOfTheFakeDriverThroughNccl) {
  if (std::string(kMpiexec).empty()) {
    GTEST_SKIP() << "acco was built without MPI (libopenmpi-dev not found)";
  }
  const auto r = mpirun(2, "-x ACCO_FAKE_NCCL_MODE=wrong-sum --mca btl self,vader",
                        std::string("bench --collective allreduce --buffers device --backend "
                                    "host --via nccl --max-bytes 64 --iters 2 --warmup 0 "
                                    "--nccl-library ") +
                            kFakeNccl);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("# Out of bounds values : 8 FAILED"));  // 4 sizes x 2 ranks
  EXPECT_THAT(r.err, HasSubstr("8 element(s) held a wrong value"));
}

// Rank 1 cannot queue its fourth collective (the first timed one; its peer has queued all of
// them): both ranks stop with rank 1's reason instead of rank 0 waiting for it forever.
TEST(Collective, ARankThatCannotQueueALaterNcclCollectiveStopsItsPeers) {
  if (std::string(kMpiexec).empty()) {
    GTEST_SKIP() << "acco was built without MPI (libopenmpi-dev not found)";
  }
  const auto r =
      mpirun(2, "-x ACCO_FAKE_NCCL_MODE=collective-fails-on-rank-1-after-3 --mca btl self,vader",
             std::string("bench --collective allreduce --buffers device --backend host --via "
                         "nccl --max-bytes 64 --iters 4 --warmup 2 --nccl-library ") +
                 kFakeNccl);
  EXPECT_NE(r.exit_code, 124) << "rank 0 waited for rank 1 until mpirun's timeout";
  EXPECT_NE(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("failed to post a send"));
  EXPECT_THAT(r.err, HasSubstr("rank 1"));
}

// Rank 1's NIC fails under its queued collectives: it sees the asynchronous error, says so at
// once and stops (its MPI_Finalize waits for rank 0); rank 0's kernels wait for rank 1 with no
// error of NCCL's, until the watchdog aborts them after 2 s. Without the watchdog the job never
// ends (checked: with --nccl-timeout 1h the same command is still running after 60 s).
TEST(Collective, ARankWhoseQueuedNcclWorkFailsIsWaitedForOnlyUntilTheWatchdog) {
  if (std::string(kMpiexec).empty()) {
    GTEST_SKIP() << "acco was built without MPI (libopenmpi-dev not found)";
  }
  const auto r =
      mpirun(2, "-x ACCO_FAKE_NCCL_MODE=async-error-on-rank-1-after-3 --mca btl self,vader",
             std::string("bench --collective allreduce --buffers device --backend host --via "
                         "nccl --max-bytes 64 --iters 4 --warmup 2 --nccl-timeout 2s "
                         "--nccl-library ") +
                 kFakeNccl);
  EXPECT_NE(r.exit_code, 124) << "rank 0 waited for rank 1 until mpirun's timeout";
  EXPECT_NE(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("Got completion from peer with status=12"));
  EXPECT_THAT(r.err, HasSubstr("NCCL collectives not complete after 2 s (a peer failed or "
                               "stopped while they wait for it): aborted by the watchdog"));
}

// The communicator's messages with payloads (the distributed runtime's task inputs) between
// real MPI ranks, over shared memory and TCP: tests/integration/mpi_messages_check.cpp.
TEST(Collective, PayloadsMeetTheirHeadersBetweenMpiRanks) {
  if (std::string(kMpiexec).empty()) {
    GTEST_SKIP() << "acco was built without MPI (libopenmpi-dev not found)";
  }
  for (const auto& [ranks, mca] :
       {std::pair{2, "--mca btl self,vader"},
        std::pair{3, "--mca btl self,tcp --mca btl_tcp_if_include lo"}}) {
    const auto r = mpirun(ranks, mca, "", ACCO_MPI_MESSAGES_CHECK);
    ASSERT_EQ(r.exit_code, 0) << mca << "\n" << r.err;
    for (int rank = 0; rank < ranks; ++rank) {
      EXPECT_THAT(r.out, HasSubstr("rank " + std::to_string(rank) + ": ok")) << mca;
    }
  }
}

TEST(Cluster, OneProcessIsOneNodeWithoutPairs) {
  const auto r = acco("probe --cluster --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "cluster.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ranks"], 1);
  ASSERT_EQ(j["nodes"].size(), 1U);
  EXPECT_EQ(j["nodes"][0]["error"], "");
  EXPECT_FALSE(j["nodes"][0]["traits"]["kernel"].get<std::string>().empty());
  EXPECT_TRUE(j["pairs"].empty());
}

TEST(Cluster, BadFlagsAreUsageErrors) {
  auto r = acco("probe --cluster --pair-bytes 2B");
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_THAT(r.err, HasSubstr("--pair-bytes"));
  r = acco("probe --cluster --nccl-env");
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_THAT(r.err, HasSubstr("--cluster reports on the job's nodes"));
}

TEST(Cluster, ThreeRanksMeasureEveryPairAndRankZeroReports) {
  if (std::string(kMpiexec).empty()) {
    GTEST_SKIP() << "acco was built without MPI (libopenmpi-dev not found)";
  }
  const auto r = mpirun(3, "--mca btl self,vader", "probe --cluster --json --pair-bytes 256KiB");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  expect_conforms(r.out, "cluster.schema.json");
  const auto j = nlohmann::json::parse(r.out);  // rank 0 alone prints
  EXPECT_EQ(j["ranks"], 3);
  EXPECT_EQ(j["nodes"].size(), 1U);  // one machine: one node, probed once
  ASSERT_EQ(j["pairs"].size(), 3U);
  const std::vector<std::pair<int, int>> want = {{0, 1}, {0, 2}, {1, 2}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    const auto& p = j["pairs"][i];
    EXPECT_EQ(p["a"], want[i].first);
    EXPECT_EQ(p["b"], want[i].second);
    EXPECT_EQ(p["node_a"], 0);
    EXPECT_EQ(p["node_b"], 0);
    EXPECT_EQ(p["reached"], true) << p["error"];
    EXPECT_GT(p["bytes_per_second"].get<double>(), 0);
    EXPECT_GT(p["latency_seconds"].get<double>(), 0);
  }
  const auto text = mpirun(2, "--mca btl self,vader", "probe --cluster --pair-bytes 64KiB");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("# acco cluster: 2 ranks on 1 node"));
  EXPECT_THAT(text.out, HasSubstr("one node: nothing to compare"));
  EXPECT_THAT(text.out, HasSubstr("     0    1       0-0      yes"));
}

// Four "nodes" in network namespaces on one machine, node 3's link shaped slower with tbf: every
// pair with node 3 ranks below every pair without it, and the report names node 3.
TEST(Cluster, FourNetworkNamespacesFindTheShapedLink) {
  if (std::string(kMpiexec).empty()) {
    GTEST_SKIP() << "acco was built without MPI (libopenmpi-dev not found)";
  }
  TempDir io;
  const std::string cmd = sanitizer_env() + ACCO_SOURCE_DIR +
                          "/tests/integration/netns_cluster.sh " + ACCO_BINARY + " " + kMpiexec +
                          " " + (io.path() / "out").string() + " " +
                          (io.path() / "bench").string() + " 2>" + (io.path() / "err").string();
  const int status = std::system(cmd.c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 77) {
    GTEST_SKIP() << slurp(io.path() / "err");
  }
  ASSERT_EQ(code, 0) << slurp(io.path() / "err");
  const std::string out = slurp(io.path() / "out");
  expect_conforms(out, "cluster.schema.json");
  const auto j = nlohmann::json::parse(out);
  ASSERT_EQ(j["nodes"].size(), 4U);
  EXPECT_EQ(j["nodes"][3]["host"], "node4");
  ASSERT_EQ(j["pairs"].size(), 6U);
  double slowest_plain = 1e30;
  double fastest_shaped = 0;
  for (const auto& p : j["pairs"]) {
    ASSERT_EQ(p["reached"], true) << p["error"];
    const double rate = p["bytes_per_second"].get<double>();
    if (p["node_b"] == 3) {
      fastest_shaped = std::max(fastest_shaped, rate);
      EXPECT_EQ(p["slow"], true) << p;
    } else {
      slowest_plain = std::min(slowest_plain, rate);
    }
  }
  EXPECT_LT(fastest_shaped, slowest_plain);
  EXPECT_EQ(j["slow_node"], 3);

  // The collective bench over the same nodes: the expected peak is node 4's shaped port, read
  // from its root qdisc (100 Mbit/s = 12.5 MB/s), not the 10 Gb/s its veth reports in sysfs.
  const std::string bench = slurp(io.path() / "bench");
  expect_conforms(bench, "collective.schema.json");
  const auto b = nlohmann::json::parse(bench);
  ASSERT_FALSE(b["ops"].empty()) << bench;
  const auto& summary = b["ops"][0]["summary"];
  EXPECT_DOUBLE_EQ(summary["expected_busbw_bytes_per_second"].get<double>(), 12.5e6) << summary;
  EXPECT_THAT(summary["expected_source"].get<std::string>(), HasSubstr("eth0 (tbf)"));
  EXPECT_THAT(summary["expected_source"].get<std::string>(), HasSubstr("node4"));
}

TEST(Collective, SaveFusionStoresTheThresholdPerLinkClassInTheTuneProfile) {
  if (std::string(kMpiexec).empty()) {
    GTEST_SKIP() << "acco was built without MPI (libopenmpi-dev not found)";
  }
  TempDir state;
  const std::string export_state = "-x XDG_STATE_HOME=" + state.path().string();
  // Ten timed iterations per size: with three, a loaded machine (an ASan build beside other
  // jobs) left times that did not fit alpha + S / beta and nothing was saved.
  for (int round = 0; round < 2; ++round) {  // the second replaces the first's entry
    const auto r = mpirun(2, export_state,
                          "bench --collective allreduce --max-bytes 1MiB --iters 10 --warmup 2 "
                          "--save-fusion");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.err, HasSubstr("for intra-node links saved to"));
  }
  const auto dir = state.path() / "acco" / "tune";
  ASSERT_TRUE(std::filesystem::exists(dir));
  const auto file = std::filesystem::directory_iterator(dir)->path();
  const std::string text = slurp(file);
  expect_conforms(text, "tune-profile.schema.json");
  const auto j = nlohmann::json::parse(text);
  ASSERT_EQ(j["fusion"].size(), 1U);
  EXPECT_EQ(j["fusion"][0]["link_class"], "intra-node");
  EXPECT_EQ(j["fusion"][0]["ranks"], 2);
  EXPECT_GE(j["fusion"][0]["threshold_bytes"].get<std::uint64_t>(), 64U << 10);
  const auto shown = acco("tune --show", "XDG_STATE_HOME=" + state.path().string());
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_THAT(shown.out, HasSubstr("fusion of small allreduces, intra-node links: threshold"));
  const auto refused = acco("bench --collective sendrecv --save-fusion");
  EXPECT_EQ(refused.exit_code, 64);
  EXPECT_THAT(refused.err, HasSubstr("--save-fusion: needs allreduce"));
}

TEST(Collective, EveryOpGoesIntoTheBenchHistoryUnlessToldNot) {
  TempDir dir;
  const auto file = dir.path() / "history.sqlite";
  const std::string history = " --history " + file.string();
  auto r = acco(std::string("bench --collective allreduce,sendrecv") + kSmall + history);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("history not saved")));
  EXPECT_EQ(sqlite_scalar(file, "SELECT COUNT(*) FROM runs"), 1);
  EXPECT_EQ(sqlite_scalar(file,
                          "SELECT COUNT(*) FROM results WHERE case_key IN "
                          "('collective_allreduce_1r1n', 'collective_sendrecv_1r1n')"),
            2);
  r = acco(std::string("bench --collective allreduce --no-history") + kSmall + history);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(sqlite_scalar(file, "SELECT COUNT(*) FROM runs"), 1);
}

// --compare sets each op against the last run of the same collectives on this machine; device
// buffers are cases of their own.
TEST(Collective, CompareSetsTheRunAgainstTheLastOneOfTheSameCollectives) {
  TempDir dir;
  const std::string history = " --history " + (dir.path() / "history.sqlite").string();
  auto r = acco(std::string("bench --collective sendrecv --compare") + kSmall + history);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("No previous run of these collectives on this machine"));
  r = acco(std::string("bench --collective allreduce,sendrecv --compare --json") + kSmall +
           history);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "collective.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["comparisons"].size(), 2U) << j["comparisons"];
  EXPECT_EQ(j["comparisons"][0]["case"], "collective_allreduce_1r1n");
  EXPECT_EQ(j["comparisons"][0]["change"], "new");
  EXPECT_EQ(j["comparisons"][1]["case"], "collective_sendrecv_1r1n");
  EXPECT_NE(j["comparisons"][1]["change"], "new");
  EXPECT_GT(j["comparisons"][1]["previous"].get<double>(), 0);
  r = acco(std::string("bench --collective sendrecv --compare --buffers device --backend host") +
           kSmall + history);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("No previous run of these collectives on this machine"));
  r = acco(std::string("bench --collective sendrecv --compare --no-history") + kSmall);
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_THAT(r.err, HasSubstr("--compare needs the history"));
}

}  // namespace
}  // namespace acco::testing
