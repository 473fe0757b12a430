#include "acco/core/option_check.hpp"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace acco::core {
namespace {

TEST(OptionCheckTest, AValueInsideItsRangePassesAndTheEndsAreIncluded) {
  EXPECT_TRUE(check_range("--width", 1, 1, 10, "a whole number from 1 to 10"));
  EXPECT_TRUE(check_range("--width", 10, 1, 10, "a whole number from 1 to 10"));
  EXPECT_TRUE(check_range("--fraction", 0.0, 0.0, 1.0, "a share from 0 to 1"));
}

TEST(OptionCheckTest, AValueOutsideNamesTheOptionTheValueAndWhatWasExpected) {
  const auto low = check_range("--width", 0, 1, 10, "a whole number from 1 to 10");
  ASSERT_FALSE(low);
  EXPECT_EQ(low.error().code, Errc::kInvalidArgument);
  EXPECT_EQ(low.error().message, "--width: '0' is not a whole number from 1 to 10");
  const auto high = check_range("--fraction", 1.5, 0.0, 1.0, "a share from 0 to 1");
  ASSERT_FALSE(high);
  EXPECT_EQ(high.error().message, "--fraction: '1.5' is not a share from 0 to 1");
}

TEST(OptionCheckTest, NotANumberIsOutsideEveryRange) {
  const auto nan = check_range("--task-us", std::numeric_limits<double>::quiet_NaN(), 0.0, 1e9,
                               "microseconds from 0 to 1e9");
  ASSERT_FALSE(nan);
  EXPECT_EQ(nan.error().message, "--task-us: 'nan' is not microseconds from 0 to 1e9");
}

TEST(OptionCheckTest, ValuesAreWrittenAsTheyReadBack) {
  EXPECT_EQ(option_text(12.0), "12");
  EXPECT_EQ(option_text(0.25), "0.25");
  EXPECT_EQ(option_text(1.3e9), "1300000000");
  EXPECT_EQ(option_text(1e20), "1e+20");
  EXPECT_EQ(option_text(-3LL), "-3");
}

}  // namespace
}  // namespace acco::core
