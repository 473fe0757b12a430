#include "acco/bench/stats.hpp"

#include <vector>

#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"

namespace acco::bench {
namespace {

using ::acco::testing::HasValue;
using ::acco::testing::StatusIs;
using std::chrono::nanoseconds;

TEST(StatsTest, RatesAreBytesOverDurations) {
  const std::vector<nanoseconds> durations = {nanoseconds(1'000'000'000), nanoseconds(500'000'000)};
  EXPECT_THAT(bytes_per_second(1'000'000'000, durations), HasValue(std::vector<double>{1e9, 2e9}));
}

TEST(StatsTest, ZeroDurationIsAnErrorNotInfinity) {
  const std::vector<nanoseconds> durations = {nanoseconds(5), nanoseconds(0)};
  EXPECT_THAT(bytes_per_second(4096, durations),
              StatusIs(Errc::kInvalidArgument, "sample 1: duration 0 ns is not positive"));
}

TEST(StatsTest, DurationsConvertToSeconds) {
  const std::vector<nanoseconds> durations = {nanoseconds(2'500)};
  EXPECT_DOUBLE_EQ(to_seconds(durations).at(0), 2.5e-6);
}

}  // namespace
}  // namespace acco::bench
