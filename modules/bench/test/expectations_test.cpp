#include "acco/bench/expectations.hpp"

#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include "runs.hpp"

namespace acco::bench {
namespace {

TEST(ExpectationsTest, WorkedExampleA100Gen4Is82PercentAndOk) {
  // nvbandwidth README: 26.0 GB/s host-to-device over Gen4 x16 (31.5 GB/s).
  EXPECT_EQ(verdict(PathKind::kPcieCopyEngine, 26.0 / 31.5), Verdict::kOk);
}

TEST(ExpectationsTest, PinnedCopyEngineBands) {
  EXPECT_EQ(verdict(PathKind::kPcieCopyEngine, 0.75), Verdict::kOk);  // boundary is inclusive
  EXPECT_EQ(verdict(PathKind::kPcieCopyEngine, 0.7499), Verdict::kLow);
  EXPECT_EQ(verdict(PathKind::kPcieCopyEngine, 0.50), Verdict::kLow);
  EXPECT_EQ(verdict(PathKind::kPcieCopyEngine, 0.4999), Verdict::kVeryLow);
}

TEST(ExpectationsTest, GpuReadsOfHostMemoryAreJudgedLessStrictly) {
  // nvbandwidth #24: SM H2D at 35.2 of 63 GB/s is normal for a GPU reading host memory...
  EXPECT_EQ(verdict(PathKind::kPcieMappedRead, 35.2 / 63.0), Verdict::kOk);
  // ...but the same figure from a copy engine is low.
  EXPECT_EQ(verdict(PathKind::kPcieCopyEngine, 35.2 / 63.0), Verdict::kLow);
}

TEST(ExpectationsTest, IommuTranslatedPeerCopiesAreVeryLow) {
  EXPECT_EQ(verdict(PathKind::kPciePeer, 11.3 / 31.5), Verdict::kVeryLow);
}

TEST(ExpectationsTest, NvlinkH100At84PercentIsOk) {
  EXPECT_EQ(verdict(PathKind::kNvlinkCopyEngine, 380.0 / 450.0), Verdict::kOk);
}

TEST(ExpectationsTest, PathsWithoutALinkPeakAreUnknown) {
  EXPECT_EQ(verdict(PathKind::kHostMemory, 0.9), Verdict::kUnknown);
  EXPECT_EQ(verdict(PathKind::kStorageRead, 6.5 / 7.88), Verdict::kOk);  // PM9A3 on Gen4 x4
  EXPECT_EQ(verdict(PathKind::kStorageRead, 0.5), Verdict::kLow);
  EXPECT_EQ(verdict(PathKind::kDeviceLocal, 0.9), Verdict::kUnknown);
}

TEST(ExpectationsTest, EmulatedLinksHaveNoBandButAVerdictOfTheirOwn) {
  EXPECT_FALSE(expectation(PathKind::kEmulatedLink).has_band());
  EXPECT_EQ(verdict(PathKind::kEmulatedLink, 0.2), Verdict::kEmulated);
  EXPECT_EQ(verdict(PathKind::kEmulatedLink, 0.95), Verdict::kEmulated);
  EXPECT_EQ(verdict(PathKind::kEmulatedLink, 1.3), Verdict::kEmulated);  // memcpy measured low
  EXPECT_EQ(verdict(PathKind::kEmulatedLink, 0), Verdict::kUnknown);
  EXPECT_EQ(verdict(PathKind::kEmulatedLink, std::nan("")), Verdict::kUnknown);
}

TEST(ExpectationsTest, MissingOrImplausibleEfficiencyIsUnknown) {
  EXPECT_EQ(verdict(PathKind::kPcieCopyEngine, 0), Verdict::kUnknown);
  EXPECT_EQ(verdict(PathKind::kPcieCopyEngine, -0.5), Verdict::kUnknown);
  EXPECT_EQ(verdict(PathKind::kPcieCopyEngine, std::nan("")), Verdict::kUnknown);
  EXPECT_EQ(verdict(PathKind::kPcieCopyEngine, 1.10), Verdict::kOk);
  EXPECT_EQ(verdict(PathKind::kPcieCopyEngine, 1.2), Verdict::kUnknown);  // peak must be wrong
}

TEST(ExpectationsTest, ARateAboveThePeakIsNoEfficiencyButAWrongPeak) {
  auto r = testing::measured("h2d_pinned_ce", 33e9, 31.5e9);
  assess(r, PathKind::kPcieCopyEngine);
  EXPECT_EQ(r.efficiency, 0);
  EXPECT_EQ(r.verdict, "unknown");
  EXPECT_EQ(r.peak_source,
            "the link's peak 31.5 GB/s is below the rate measured (33.0 GB/s), so it is wrong: a "
            "link the VM or the firmware misreports, or another path than the one assumed");
  auto fine = testing::measured("h2d_pinned_ce", 26e9, 31.5e9);
  assess(fine, PathKind::kPcieCopyEngine);
  EXPECT_DOUBLE_EQ(fine.efficiency, 26.0 / 31.5);
  EXPECT_EQ(fine.verdict, "ok");
  EXPECT_EQ(fine.peak_source, "");
}

TEST(ExpectationsTest, TableIsCompleteOrderedAndSourced) {
  const auto table = expectations();
  std::set<std::string_view> keys;
  for (std::size_t i = 0; i < table.size(); ++i) {
    const auto& e = table[i];
    EXPECT_EQ(static_cast<std::size_t>(e.kind), i);
    EXPECT_EQ(&expectation(e.kind), &e);
    EXPECT_FALSE(e.source.empty()) << e.key;
    EXPECT_FALSE(e.description.empty()) << e.key;
    EXPECT_TRUE(keys.insert(e.key).second) << "duplicate key " << e.key;
    if (e.has_band()) {
      EXPECT_GT(e.ok_at_least, e.low_at_least) << e.key;
      EXPECT_GT(e.low_at_least, 0) << e.key;
      EXPECT_LE(e.ok_at_least, 1) << e.key;
    }
  }
  EXPECT_EQ(table.back().kind, PathKind::kStorageRead);
  EXPECT_STREQ(to_string(PathKind::kPcieCopyEngine), "pcie-copy-engine");
}

TEST(ExpectationsTest, VerdictNames) {
  EXPECT_STREQ(to_string(Verdict::kOk), "ok");
  EXPECT_STREQ(to_string(Verdict::kLow), "low");
  EXPECT_STREQ(to_string(Verdict::kVeryLow), "very low");
  EXPECT_STREQ(to_string(Verdict::kUnknown), "unknown");
  EXPECT_STREQ(to_string(Verdict::kEmulated), "emulated");
}

TEST(AssessTest, SetsEfficiencyAndVerdictFromThePeak) {
  auto r = testing::measured("h2d_pinned_ce", 26e9, 31.5e9);
  r.efficiency = 0;
  r.verdict = "unknown";
  assess(r, PathKind::kPcieCopyEngine);
  EXPECT_NEAR(r.efficiency, 0.825, 0.001);
  EXPECT_EQ(r.verdict, "ok");
}

TEST(AssessTest, UnknownPeakOrSkippedCaseHasNoVerdict) {
  auto no_peak = testing::measured("h2d_pinned_ce", 26e9, 0);
  assess(no_peak, PathKind::kPcieCopyEngine);
  EXPECT_EQ(no_peak.efficiency, 0);
  EXPECT_EQ(no_peak.verdict, "unknown");

  auto skipped = waived("h2d_pinned_ce", "0000:18:00.0", "no device");
  skipped.peak_bytes_per_second = 31.5e9;
  assess(skipped, PathKind::kPcieCopyEngine);
  EXPECT_EQ(skipped.efficiency, 0);
  EXPECT_EQ(skipped.verdict, "unknown");
}

}  // namespace
}  // namespace acco::bench
