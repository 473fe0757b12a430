#include "acco/core/fit.hpp"

#include <cmath>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"

namespace acco {
namespace {

using ::acco::testing::StatusIs;
using ::testing::HasSubstr;

TEST(FitTest, RecoversAlphaAndBetaOfExactPoints) {
  // 10 us + bytes / 25 GB/s.
  std::vector<TimedSize> points;
  for (const std::uint64_t b : {1ULL << 20, 4ULL << 20, 16ULL << 20, 64ULL << 20}) {
    points.push_back({b, 10e-6 + static_cast<double>(b) / 25e9});
  }
  auto fit = fit_latency_bandwidth(points);
  ASSERT_TRUE(fit.has_value());
  EXPECT_NEAR(fit->alpha_seconds, 10e-6, 1e-9);
  EXPECT_NEAR(fit->beta_bytes_per_second, 25e9, 25e9 * 1e-6);
}

TEST(FitTest, NegativeInterceptIsClampedToZero) {
  const std::vector<TimedSize> points = {{1000, 0.5e-6}, {2000, 2e-6}};
  auto fit = fit_latency_bandwidth(points);
  ASSERT_TRUE(fit.has_value());
  EXPECT_EQ(fit->alpha_seconds, 0);
}

TEST(FitTest, OneSizeIsNotEnough) {
  const std::vector<TimedSize> points = {{1000, 1e-6}, {1000, 2e-6}};
  EXPECT_THAT(fit_latency_bandwidth(points),
              StatusIs(Errc::kInvalidArgument, HasSubstr("two distinct sizes")));
}

TEST(FitTest, TimeFallingWithSizeHasNoBandwidth) {
  const std::vector<TimedSize> points = {{1000, 2e-6}, {2000, 1e-6}};
  EXPECT_THAT(fit_latency_bandwidth(points),
              StatusIs(Errc::kInvalidArgument, HasSubstr("does not grow")));
}

TEST(FitTest, NegativeTimeIsNamed) {
  const std::vector<TimedSize> points = {{1000, -1}, {2000, 1e-6}};
  EXPECT_THAT(fit_latency_bandwidth(points),
              StatusIs(Errc::kInvalidArgument, HasSubstr("at 1000 bytes")));
}

// A sweep from 8 B to 2 MiB with 5 % noise on the two largest times: the relative fit keeps the
// 20 us latency and the 10 GB/s rate.
TEST(FitTest, RelativeWeightsFitAWideSweepWithNoiseAtTheTop) {
  std::vector<TimedSize> points;
  for (std::uint64_t b = 8; b <= (std::uint64_t{2} << 20); b *= 4) {
    points.push_back({b, 20e-6 + static_cast<double>(b) / 10e9});
  }
  points[points.size() - 1].seconds *= 1.05;
  points[points.size() - 2].seconds *= 0.95;
  auto relative = fit_latency_bandwidth(points, FitWeight::kRelative);
  ASSERT_TRUE(relative.has_value());
  EXPECT_NEAR(relative->alpha_seconds, 20e-6, 1e-6);
  EXPECT_NEAR(relative->beta_bytes_per_second, 10e9, 1e9);
  EXPECT_THAT(
      fit_latency_bandwidth(std::vector<TimedSize>{{8, 0}, {16, 1e-6}}, FitWeight::kRelative),
      StatusIs(Errc::kInvalidArgument, HasSubstr("finite positive")));
}

}  // namespace
}  // namespace acco
