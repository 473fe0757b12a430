#include "acco/core/stats.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"

namespace acco::core::stats {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;

TEST(StatsTest, OneSampleIsItsOwnMedianMinMaxAndMeanWithZeroCov) {
  const std::vector<double> one = {25e9};
  const auto s = summarize(one);
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->count, 1U);
  EXPECT_EQ(s->median, 25e9);
  EXPECT_EQ(s->min, 25e9);
  EXPECT_EQ(s->max, 25e9);
  EXPECT_EQ(s->mean, 25e9);
  EXPECT_EQ(s->stddev, 0);
  EXPECT_EQ(s->cov, 0);
  EXPECT_FALSE(s->p99.has_value());
}

TEST(StatsTest, OddCountMedianIsTheMiddleSampleInAnyOrder) {
  const std::vector<double> samples = {30, 10, 20};
  EXPECT_EQ(summarize(samples)->median, 20);
  EXPECT_EQ(summarize(samples)->min, 10);
  EXPECT_EQ(summarize(samples)->max, 30);
}

TEST(StatsTest, EvenCountMedianAveragesTheMiddleTwo) {
  const std::vector<double> samples = {4, 1, 3, 2};
  EXPECT_EQ(summarize(samples)->median, 2.5);
}

TEST(StatsTest, CovIsSampleStandardDeviationOverMean) {
  const std::vector<double> samples = {9, 10, 11};
  const auto s = summarize(samples);
  EXPECT_DOUBLE_EQ(s->mean, 10);
  EXPECT_DOUBLE_EQ(s->stddev, 1);  // n - 1 denominator: sqrt(2 / 2)
  EXPECT_DOUBLE_EQ(s->cov, 0.1);
}

TEST(StatsTest, CovStaysExactForRatesNearFiftyGigabytesPerSecond) {
  const std::vector<double> samples = {50e9 - 1e6, 50e9, 50e9 + 1e6};
  EXPECT_NEAR(summarize(samples)->cov, 1e6 / 50e9, 1e-12);
}

TEST(StatsTest, ZeroMeanGivesZeroCovNotNaN) {
  const std::vector<double> samples = {0, 0};
  EXPECT_EQ(summarize(samples)->cov, 0);
}

TEST(StatsTest, P99NeedsAHundredSamples) {
  std::vector<double> samples;
  for (int i = 1; i <= 99; ++i) {
    samples.push_back(i);
  }
  EXPECT_FALSE(summarize(samples)->p99.has_value());
  samples.push_back(100);
  const auto s = summarize(samples);
  ASSERT_TRUE(s->p99.has_value());
  EXPECT_NEAR(*s->p99, 99.01, 1e-9);  // rank 0.99 * 99 = 98.01 between 99 and 100
}

TEST(StatsTest, PercentileInterpolatesBetweenRanks) {
  const std::vector<double> samples = {10, 20, 30, 40, 50};
  EXPECT_EQ(*percentile(samples, 0), 10);
  EXPECT_EQ(*percentile(samples, 50), 30);
  EXPECT_EQ(*percentile(samples, 100), 50);
  EXPECT_DOUBLE_EQ(*percentile(samples, 90), 46);
}

TEST(StatsTest, RejectsEmptyNegativeInfiniteAndNaNSamples) {
  EXPECT_THAT(summarize({}), StatusIs(Errc::kInvalidArgument));
  const std::vector<double> negative = {1, -1};
  EXPECT_THAT(summarize(negative),
              StatusIs(Errc::kInvalidArgument,
                       "summarize: sample 1: -1 is not a finite, non-negative value"));
  const std::vector<double> inf = {std::numeric_limits<double>::infinity()};
  EXPECT_THAT(summarize(inf), StatusIs(Errc::kInvalidArgument));
  const std::vector<double> nan = {std::nan("")};
  EXPECT_THAT(summarize(nan), StatusIs(Errc::kInvalidArgument));
}

TEST(StatsTest, PercentileRejectsAPercentOutsideZeroToHundred) {
  const std::vector<double> samples = {1};
  EXPECT_THAT(percentile(samples, 101), StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(percentile(samples, -1), StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(percentile(samples, std::nan("")), StatusIs(Errc::kInvalidArgument));
}

TEST(StatsTest, MedianInPlaceTakesTheMiddleOrTheMeanOfTheMiddleTwo) {
  std::vector<double> odd = {5, 1, 3};
  EXPECT_EQ(median_in_place(odd), 3);
  std::vector<double> even = {4, 1, 3, 2};
  EXPECT_EQ(median_in_place(even), 2.5);
  std::vector<double> one = {7};
  EXPECT_EQ(median_in_place(one), 7);
}

TEST(StatsTest, MedianLeavesItsInputAndFollowsTheSameEvenRuleAsPercentile) {
  const std::vector<double> even = {4, -1, 3, 2};
  EXPECT_EQ(median(even), 2.5);
  EXPECT_EQ(even, (std::vector<double>{4, -1, 3, 2}));
  const std::vector<double> rates = {40, 10, 30, 20};
  EXPECT_EQ(median(rates), *percentile(rates, 50));
  EXPECT_EQ(median(rates), summarize(rates)->median);
  EXPECT_EQ(median(std::vector<double>{9, 1, 5}), 5);
}

}  // namespace
}  // namespace acco::core::stats
