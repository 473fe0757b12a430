#include "acco/bench/compare.hpp"

#include <gtest/gtest.h>

#include "runs.hpp"

namespace acco::bench {
namespace {

using testing::measured;

BenchRun run_of(std::vector<BenchResult> results) {
  BenchRun run;
  run.results = std::move(results);
  return run;
}

BenchResult with_cov(BenchResult r, double cov) {
  r.cov = cov;
  return r;
}

Comparison only(const BenchRun& before, const BenchRun& now) {
  const auto c = compare(before, now);
  EXPECT_EQ(c.size(), 1U);
  return c.empty() ? Comparison{} : c[0];
}

TEST(CompareTest, ThresholdIsThreeCovsOfTheNoisierRunOrFivePercent) {
  EXPECT_DOUBLE_EQ(change_threshold(0.005, 0.001), 0.05);
  EXPECT_DOUBLE_EQ(change_threshold(0.01, 0.03), 0.09);
}

TEST(CompareTest, FourPercentDropOnQuietRunsIsUnchanged) {
  const auto c = only(run_of({measured("h2d", 100e9)}), run_of({measured("h2d", 96e9)}));
  EXPECT_EQ(c.change, Change::kUnchanged);
  EXPECT_NEAR(c.relative_change, -0.04, 1e-12);
  EXPECT_DOUBLE_EQ(c.threshold, 0.05);
  EXPECT_EQ(c.metric, "median_bytes_per_second");
}

TEST(CompareTest, ADropOfExactlyTheThresholdIsNotFlagged) {
  EXPECT_EQ(only(run_of({measured("h2d", 100e9)}), run_of({measured("h2d", 95e9)})).change,
            Change::kUnchanged);
}

TEST(CompareTest, SixPercentDropOnQuietRunsIsARegression) {
  const auto c = only(run_of({measured("h2d", 100e9)}), run_of({measured("h2d", 94e9)}));
  EXPECT_EQ(c.change, Change::kRegressed);
  EXPECT_EQ(c.previous, 100e9);
  EXPECT_EQ(c.current, 94e9);
}

TEST(CompareTest, NoisyRunsNeedALargerDrop) {
  const auto before = run_of({with_cov(measured("h2d", 100e9), 0.01)});
  // The current run's CoV of 3% sets the threshold at 9%.
  EXPECT_EQ(only(before, run_of({with_cov(measured("h2d", 92e9), 0.03)})).change,
            Change::kUnchanged);
  EXPECT_EQ(only(before, run_of({with_cov(measured("h2d", 90e9), 0.03)})).change,
            Change::kRegressed);
}

TEST(CompareTest, ARiseBeyondTheThresholdIsAnImprovement) {
  EXPECT_EQ(only(run_of({measured("h2d", 50e9)}), run_of({measured("h2d", 55e9)})).change,
            Change::kImproved);
}

TEST(CompareTest, LatencyCasesRegressWhenLatencyRises) {
  auto before = measured("latency", 0);
  before.latency_seconds = 2.0e-6;
  auto now = before;
  now.latency_seconds = 2.5e-6;
  const auto c = only(run_of({before}), run_of({now}));
  EXPECT_EQ(c.metric, "latency_seconds");
  EXPECT_EQ(c.change, Change::kRegressed);
  EXPECT_NEAR(c.relative_change, 0.25, 1e-12);
  now.latency_seconds = 1.5e-6;
  EXPECT_EQ(only(run_of({before}), run_of({now})).change, Change::kImproved);
}

TEST(CompareTest, CasesAreMatchedByCaseAndDevice) {
  const auto before = run_of({measured("h2d", 50e9, 0, "0000:18:00.0")});
  const auto now = run_of({measured("h2d", 50e9, 0, "0000:2a:00.0")});
  const auto c = compare(before, now);
  ASSERT_EQ(c.size(), 2U);
  EXPECT_EQ(c[0].change, Change::kNew);
  EXPECT_EQ(c[0].device, "0000:2a:00.0");
  EXPECT_EQ(c[1].change, Change::kMissing);
  EXPECT_EQ(c[1].device, "0000:18:00.0");
}

TEST(CompareTest, NewAndMissingKeepTheirOneValue) {
  const auto c = compare(run_of({measured("old", 10e9)}), run_of({measured("new", 20e9)}));
  ASSERT_EQ(c.size(), 2U);
  EXPECT_EQ(c[0].case_key, "new");
  EXPECT_EQ(c[0].change, Change::kNew);
  EXPECT_EQ(c[0].previous, 0);
  EXPECT_EQ(c[0].current, 20e9);
  EXPECT_EQ(c[1].case_key, "old");
  EXPECT_EQ(c[1].change, Change::kMissing);
  EXPECT_EQ(c[1].previous, 10e9);
  EXPECT_EQ(c[1].current, 0);
}

TEST(CompareTest, ACaseWaivedNowIsMissingAndOneWaivedBeforeIsNew) {
  const auto ok = measured("h2d", 50e9);
  const auto skipped = waived("h2d", ok.device, "no device");
  EXPECT_EQ(only(run_of({ok}), run_of({skipped})).change, Change::kMissing);
  EXPECT_EQ(only(run_of({skipped}), run_of({ok})).change, Change::kNew);
}

TEST(CompareTest, ACaseMeasuredInNeitherRunIsLeftOut) {
  const auto skipped = waived("h2d", "0000:18:00.0", "no device");
  EXPECT_TRUE(compare(run_of({skipped}), run_of({skipped})).empty());
  EXPECT_TRUE(compare(run_of({}), run_of({})).empty());
}

TEST(CompareTest, JsonHasNullForTheAbsentSide) {
  const auto j = to_json(compare(run_of({measured("old", 10e9)}), run_of({measured("new", 2e9)})));
  ASSERT_EQ(j.size(), 2U);
  EXPECT_EQ(j[0]["change"], "new");
  EXPECT_TRUE(j[0]["previous"].is_null());
  EXPECT_EQ(j[0]["current"], 2e9);
  EXPECT_EQ(j[1]["change"], "missing");
  EXPECT_TRUE(j[1]["current"].is_null());
}

}  // namespace
// Issue 33: a ratio of 1.93x from runs too short to time was reported as a win.
TEST(PeerRatioTest, OverlappingSpreadsAreTheSameWithinNoise) {
  auto ours = testing::measured("storage_read_1MiB_qd8", 4.0e9);
  ours.min_bytes_per_second = 3.0e9;
  ours.max_bytes_per_second = 5.0e9;
  auto fio = testing::measured("fio_read_1MiB_qd8", 3.5e9);
  fio.min_bytes_per_second = 2.0e9;
  fio.max_bytes_per_second = 4.0e9;
  const PeerRatio p = peer_ratio(ours, fio);
  EXPECT_DOUBLE_EQ(p.ratio, 4.0 / 3.5);
  EXPECT_DOUBLE_EQ(p.low, 3.0 / 4.0);
  EXPECT_DOUBLE_EQ(p.high, 5.0 / 2.0);
  EXPECT_TRUE(p.within_noise);
}

using std::chrono::nanoseconds;

// The engine timed against the plain copy in alternating rounds: rounds that all say 10 % slower
// are slower; rounds that scatter around 1 are the same within noise, whatever their median.
TEST(PairedRatioTest, ConsistentRoundsAreAVerdictScatteredOnesAreNoise) {
  const std::vector<nanoseconds> plain(6, nanoseconds(1000));
  const std::vector<nanoseconds> slower(6, nanoseconds(1111));  // 0.90x in every round
  const PairedRatio s = paired_ratio(slower, plain);
  EXPECT_EQ(s.rounds, 6);
  EXPECT_NEAR(s.ratio, 0.9, 1e-3);
  EXPECT_EQ(s.verdict, "slower");
  EXPECT_EQ(paired_ratio(plain, slower).verdict, "faster");
  const std::vector<nanoseconds> scattered = {nanoseconds(800),  nanoseconds(1300),
                                              nanoseconds(900),  nanoseconds(1250),
                                              nanoseconds(1000), nanoseconds(1200)};
  const PairedRatio n = paired_ratio(scattered, plain);
  EXPECT_EQ(n.verdict, "same within noise");
  EXPECT_LT(n.low, 1);
  EXPECT_GT(n.high, 1);
  // A 3 % difference, however steady, is under the 5 % floor.
  EXPECT_EQ(paired_ratio(std::vector<nanoseconds>(6, nanoseconds(1031)), plain).verdict,
            "same within noise");
}

TEST(PairedRatioTest, UnevenOrEmptyInputsHaveNoRounds) {
  const std::vector<nanoseconds> two(2, nanoseconds(10));
  EXPECT_EQ(paired_ratio({}, {}).rounds, 0);
  EXPECT_EQ(paired_ratio(two, std::vector<nanoseconds>(3, nanoseconds(10))).rounds, 0);
  EXPECT_EQ(paired_ratio(two, std::vector<nanoseconds>{nanoseconds(10), nanoseconds(0)}).rounds, 0);
  // One round has no spread to judge by.
  EXPECT_EQ(paired_ratio(std::vector<nanoseconds>{nanoseconds(10)},
                         std::vector<nanoseconds>{nanoseconds(20)})
                .verdict,
            "same within noise");
}

TEST(PeerRatioTest, SeparateSpreadsAreAWinOrALoss) {
  const auto ours = testing::measured("storage_read_1MiB_qd8", 4.0e9);  // +-1 %
  const auto fio = testing::measured("fio_read_1MiB_qd8", 2.0e9);
  const PeerRatio p = peer_ratio(ours, fio);
  EXPECT_DOUBLE_EQ(p.ratio, 2.0);
  EXPECT_DOUBLE_EQ(p.low, 3.96 / 2.02);
  EXPECT_FALSE(p.within_noise);
  EXPECT_FALSE(peer_ratio(fio, ours).within_noise);
  EXPECT_EQ(peer_ratio(ours, testing::measured("fio_read_1MiB_qd8", 0)).ratio, 0);
}

}  // namespace acco::bench
