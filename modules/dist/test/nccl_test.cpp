// The NCCL probe over one rank against the fake libnccl.so.2 (tests/fake_nccl) in each of its
// modes, and against libraries that are absent or lack an entry point. Two ranks under mpirun
// are in tests/integration/collective_test.cpp.
#include "acco/dist/nccl.hpp"

#include <cstdlib>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace acco::dist {
namespace {

using ::testing::HasSubstr;

const std::string kFake = ACCO_FAKE_NCCL_PATH;
const std::string kFakeNoInit = ACCO_FAKE_NCCL_NO_INIT_PATH;

class NcclProbeTest : public ::testing::Test {
 protected:
  void TearDown() override {
    ::unsetenv("ACCO_FAKE_NCCL_MODE");
    ::unsetenv("ACCO_FAKE_NCCL_VERSION");
  }
  NcclReport probe(const std::string& library, const char* mode) {
    if (mode != nullptr) {
      ::setenv("ACCO_FAKE_NCCL_MODE", mode, 1);
    }
    auto report = probe_nccl(*comm_, library);
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
  EXPECT_THAT(r.error, HasSubstr("rank 0: ncclCommInitRank: unhandled cuda error"));
  EXPECT_THAT(r.error, HasSubstr("(NCCL error 1): Cuda failure 100 'no CUDA-capable device"));
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
}

TEST_F(NcclProbeTest, AnInitFailureOnTheRankNamesIt) {
  const auto r = probe(kFake, "fail-on-rank-0");
  EXPECT_EQ(r.stage, NcclStage::kInit);
  EXPECT_THAT(r.error, HasSubstr("rank 0: ncclCommInitRank: unhandled system error"));
  EXPECT_THAT(r.error, HasSubstr("socket connect to the root failed"));
}

}  // namespace
}  // namespace acco::dist
