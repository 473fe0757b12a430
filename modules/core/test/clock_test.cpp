#include "acco/core/clock.hpp"

#include <gtest/gtest.h>

namespace acco::core {
namespace {

TEST(UtcTimestampTest, WholeSecondsInUtc) {
  EXPECT_EQ(utc_timestamp(std::chrono::system_clock::time_point{}), "1970-01-01T00:00:00Z");
  EXPECT_EQ(utc_timestamp(std::chrono::system_clock::time_point{std::chrono::seconds(1740830400)} +
                          std::chrono::milliseconds(999)),
            "2025-03-01T12:00:00Z");
}

TEST(NowUnixNanosTest, IsTheSystemClockInNanoseconds) {
  const auto before = std::chrono::system_clock::now();
  const std::int64_t now = now_unix_nanos();
  const auto after = std::chrono::system_clock::now();
  const auto nanos = [](std::chrono::system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  };
  EXPECT_LE(nanos(before), now);
  EXPECT_LE(now, nanos(after));
}

}  // namespace
}  // namespace acco::core
