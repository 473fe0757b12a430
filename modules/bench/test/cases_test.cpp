// Every case runs on the host backend and delivers verified data; results carry the fields the
// report and the history need. Sizes are small: these tests check correctness, not speed.
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/bench/case.hpp"
#include "acco/bench/runner.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::bench {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;

RunOptions small_run(int devices, std::vector<std::string> patterns = {}) {
  RunOptions o;
  o.backend = BackendChoice::kHost;
  o.host.devices = devices;
  o.host.link = dev::parse_link("pcie4x16").value();
  o.patterns = std::move(patterns);
  o.defaults.bytes = 1 << 20;
  o.defaults.reps = 2;
  o.defaults.warmup = 1;
  o.defaults.copies_per_sample = 1;
  o.defaults.sweep_max_bytes = 256 << 10;
  o.defaults.small_copies = 64;
  o.defaults.profile.chunk_bytes = 256 << 10;
  return o;
}

TEST(CasesTest, KeysAreUniqueAndStable) {
  std::set<std::string> keys;
  for (const auto& c : cases()) {
    EXPECT_TRUE(keys.insert(c->key()).second) << c->key();
    EXPECT_FALSE(c->description().empty()) << c->key();
  }
  EXPECT_TRUE(keys.count("h2d_pageable_engine"));
  EXPECT_TRUE(keys.count("d2h_pinned_plain"));
  EXPECT_TRUE(keys.count("sweep_h2d_pinned"));
  EXPECT_TRUE(keys.count("small_copies_batched"));
}

TEST(CasesTest, PatternsSelectCases) {
  EXPECT_TRUE(matches("h2d_pinned_plain", {"h2d_*"}));
  EXPECT_FALSE(matches("d2h_pinned_plain", {"h2d_*"}));
  EXPECT_TRUE(matches("anything", {}));
}

TEST(CasesTest, EveryCaseRunsOnTheHostBackendWithVerifiedData) {
  auto run = run_benchmarks(small_run(2), nullptr, {});
  ASSERT_THAT(run, IsOk());
  ASSERT_FALSE(run->results.empty());
  for (const auto& r : run->results) {
    EXPECT_EQ(r.status, kStatusOk) << r.case_key << " " << r.device << ": " << r.reason;
    if (!r.latency_seconds) {
      EXPECT_GT(r.median_bytes_per_second, 0) << r.case_key;
    }
    EXPECT_FALSE(r.timer.empty()) << r.case_key;
  }
  EXPECT_EQ(run->machine["backend"], "host");
}

TEST(CasesTest, LinkCasesCarryTheEmulatedPeakAndAVerdict) {
  auto run = run_benchmarks(small_run(1, {"h2d_pinned_plain"}), nullptr, {});
  ASSERT_THAT(run, IsOk());
  ASSERT_EQ(run->results.size(), 1U);
  const auto& r = run->results.front();
  // The lower of the 31.5 GB/s link and this host's memcpy, whichever that is here.
  EXPECT_GT(r.peak_bytes_per_second, 0);
  EXPECT_LE(r.peak_bytes_per_second, 31.6e9);
  EXPECT_GT(r.efficiency, 0);
  EXPECT_EQ(r.verdict, "emulated");
  EXPECT_THAT(r.peak_source, ::testing::HasSubstr("emulated link (31.5 GB/s)"));
  EXPECT_THAT(r.peak_source, ::testing::HasSubstr("this host's memcpy"));
}

TEST(CasesTest, ALinkSlowerThanMemcpyIsThePeakOfAnEmulatedDevice) {
  RunOptions o = small_run(1, {"h2d_pinned_plain"});
  o.host.link = dev::parse_link("200MB/s").value();
  o.defaults.bytes = 256 << 10;
  auto run = run_benchmarks(o, nullptr, {});
  ASSERT_THAT(run, IsOk());
  ASSERT_EQ(run->results.size(), 1U);
  EXPECT_DOUBLE_EQ(run->results.front().peak_bytes_per_second, 200e6);
  EXPECT_EQ(run->results.front().verdict, "emulated");
}

TEST(CasesTest, PeerCaseIsWaivedWithOneDevice) {
  auto run = run_benchmarks(small_run(1, {"p2p"}), nullptr, {});
  ASSERT_THAT(run, IsOk());
  ASSERT_EQ(run->results.size(), 1U);
  EXPECT_EQ(run->results.front().status, kStatusWaived);
  EXPECT_FALSE(run->results.front().reason.empty());
}

TEST(CasesTest, SweepRecordsEverySizeAndEngineCasesTheirStrategy) {
  auto run = run_benchmarks(small_run(1, {"sweep_*", "h2d_pageable_engine"}), nullptr, {});
  ASSERT_THAT(run, IsOk());
  for (const auto& r : run->results) {
    if (r.case_key == "sweep_h2d_pinned") {
      EXPECT_EQ(r.sweep.size(), 4U);  // 4, 16, 64 and 256 KiB
    } else {
      EXPECT_NE(r.strategy.find("pipelined"), std::string::npos) << r.strategy;
    }
  }
}

TEST(CasesTest, EmptySelectionIsAnError) {
  EXPECT_THAT(run_benchmarks(small_run(1, {"nothing*"}), nullptr, {}),
              StatusIs(Errc::kInvalidArgument));
}

TEST(CasesTest, CudaBackendRequestedWithoutGpuIsUnavailable) {
  auto o = small_run(1);
  o.backend = BackendChoice::kCuda;
  auto run = run_benchmarks(o, nullptr, {});
  if (run.has_value()) {
    GTEST_SKIP() << "a GPU is present";
  }
  EXPECT_THAT(run, StatusIs(Errc::kUnavailable));
}

}  // namespace
}  // namespace acco::bench
