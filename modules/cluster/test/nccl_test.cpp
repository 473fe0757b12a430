// The NCCL probe over one rank against the fake libnccl.so.2 (tests/fake_nccl) in each of its
// modes, and against libraries that are absent or lack an entry point. Two ranks under mpirun
// are in tests/integration/collective_test.cpp.
#include "acco/cluster/nccl.hpp"

#include <cstdlib>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace acco::cluster {
namespace {

using ::testing::HasSubstr;

const std::string kFake = ACCO_FAKE_NCCL_PATH;
const std::string kFakeNoInit = ACCO_FAKE_NCCL_NO_INIT_PATH;
const std::string kFakeNoConfig = ACCO_FAKE_NCCL_NO_CONFIG_PATH;  // NCCL before 2.14

class NcclProbeTest : public ::testing::Test {
 protected:
  void TearDown() override {
    ::unsetenv("ACCO_FAKE_NCCL_MODE");
    ::unsetenv("ACCO_FAKE_NCCL_VERSION");
  }
  NcclReport probe(const std::string& library, const char* mode,
                   double timeout_seconds = kNcclTimeoutSeconds) {
    if (mode != nullptr) {
      ::setenv("ACCO_FAKE_NCCL_MODE", mode, 1);
    }
    auto report = probe_nccl(*comm_, library, timeout_seconds);
    EXPECT_TRUE(report) << report.error().message;
    return report ? *report : NcclReport{};
  }
  std::unique_ptr<Communicator> comm_ = self_communicator();
};

TEST(NcclVersion, DecodesBothSchemes) {
  EXPECT_EQ(nccl_version_text(22105), "2.21.5");
  EXPECT_EQ(nccl_version_text(21903), "2.19.3");
  EXPECT_EQ(nccl_version_text(2804), "2.8.4");  // before 2.9: X*1000+Y*100+Z
  EXPECT_EQ(nccl_version_text(0), "unknown (0)");
}

TEST_F(NcclProbeTest, AnAbsentLibraryStopsAtLoadWithTheLoadersMessage) {
  const auto r = probe("libnccl-that-is-not-here.so.2", nullptr);
  EXPECT_FALSE(r.loaded);
  EXPECT_EQ(r.stage, NcclStage::kLoad);
  EXPECT_THAT(r.error, HasSubstr("rank 0: libnccl-that-is-not-here.so.2: cannot open"));
  EXPECT_EQ(r.version, "");
  EXPECT_THAT(to_text(r), HasSubstr("not used: stopped at load: rank 0:"));
}

TEST_F(NcclProbeTest, ALibraryWithoutInitRankIsNamed) {
  const auto r = probe(kFakeNoInit, "ok");
  EXPECT_FALSE(r.loaded);
  EXPECT_THAT(r.error, HasSubstr("missing symbol ncclCommInitRank"));
}

TEST_F(NcclProbeTest, WithoutAGpuInitFailsWithTheCudaError) {
  const auto r = probe(kFake, nullptr);
  EXPECT_TRUE(r.loaded);
  EXPECT_EQ(r.version, "2.21.5");
  EXPECT_EQ(r.stage, NcclStage::kInit);
  EXPECT_FALSE(r.bootstrapped());
  // The nonblocking init's error comes from ncclCommGetAsyncError, with the same detail.
  EXPECT_THAT(r.error, HasSubstr("rank 0: ncclCommInitRankConfig: unhandled cuda error"));
  EXPECT_THAT(r.error, HasSubstr("(NCCL error 1): Cuda failure 100 'no CUDA-capable device"));
  EXPECT_TRUE(r.nonblocking);
}

TEST_F(NcclProbeTest, AnNcclBefore214InitsBlockingAndSaysSo) {
  const auto failed = probe(kFakeNoConfig, nullptr);
  EXPECT_EQ(failed.stage, NcclStage::kInit);
  EXPECT_FALSE(failed.nonblocking);
  EXPECT_THAT(failed.error, HasSubstr("rank 0: ncclCommInitRank: unhandled cuda error"));
  const auto r = probe(kFakeNoConfig, "ok");
  EXPECT_TRUE(r.bootstrapped()) << r.error;
  EXPECT_FALSE(r.nonblocking);
  EXPECT_EQ(to_json(r)["nonblocking"], false);
}

// NCCL's bootstrap waits for every rank for ever (one that cannot reach rank 0's address leaves
// the others in it); the nonblocking init is aborted after the timeout.
TEST_F(NcclProbeTest, AnInitThatNeverCompletesIsAbortedByTheWatchdog) {
  const auto r = probe(kFake, "init-stalls", 0.2);  // without the watchdog: never returns
  EXPECT_EQ(r.stage, NcclStage::kInit);
  EXPECT_FALSE(r.bootstrapped());
  EXPECT_TRUE(r.nonblocking);
  EXPECT_THAT(r.error, HasSubstr("rank 0: ncclCommInitRankConfig not complete after 0.2 s (a rank "
                                 "did not join: every rank must reach rank 0's bootstrap address"));
  EXPECT_THAT(r.error, HasSubstr("aborted by the watchdog (--nccl-timeout)"));
}

TEST_F(NcclProbeTest, ATimeoutNotAboveZeroIsRefused) {
  for (const double t : {0.0, -1.0}) {
    auto r = probe_nccl(*comm_, kFake, t);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
    EXPECT_THAT(r.error().message, HasSubstr("expected more than 0"));
  }
}

TEST_F(NcclProbeTest, AFailingUniqueIdStopsBeforeInit) {
  const auto r = probe(kFake, "unique-id-fails");
  EXPECT_EQ(r.stage, NcclStage::kUniqueId);
  EXPECT_THAT(r.error, HasSubstr("rank 0: ncclGetUniqueId: unhandled system error"));
}

TEST_F(NcclProbeTest, BootstrapsOneRankAndSaysSo) {
  ::setenv("ACCO_FAKE_NCCL_VERSION", "2804", 1);
  const auto r = probe(kFake, "ok");
  EXPECT_TRUE(r.bootstrapped());
  EXPECT_EQ(r.ranks, 1);
  EXPECT_EQ(r.version, "2.8.4");
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(to_text(r), "NCCL 2.8.4 (" + kFake + "): bootstrapped over 1 rank");
  const auto j = to_json(r);
  EXPECT_EQ(j["stage"], "bootstrapped");
  EXPECT_EQ(j["bootstrapped"], true);
  EXPECT_EQ(j["ranks"], 1);
  EXPECT_EQ(j["nonblocking"], true);
  EXPECT_TRUE(r.nonblocking);
}

TEST_F(NcclProbeTest, AnInitFailureOnTheRankNamesIt) {
  const auto r = probe(kFake, "fail-on-rank-0");
  EXPECT_EQ(r.stage, NcclStage::kInit);
  EXPECT_THAT(r.error, HasSubstr("rank 0: ncclCommInitRankConfig: unhandled system error"));
  EXPECT_THAT(r.error, HasSubstr("socket connect to the root failed"));
}

}  // namespace
}  // namespace acco::cluster
