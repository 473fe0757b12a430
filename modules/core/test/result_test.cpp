#include "acco/core/result.hpp"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"

namespace acco {
namespace {

using ::acco::testing::HasValue;
using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

Result<int> parse_positive(int x) {
  if (x <= 0) {
    return fail(Errc::kInvalidArgument, "not positive");
  }
  return x;
}

Result<int> doubled(int x) {
  ACCO_ASSIGN_OR_RETURN(const int value, parse_positive(x));
  return 2 * value;
}

Result<int> doubled_with_context(int x) {
  ACCO_ASSIGN_OR_RETURN(const int value, parse_positive(x), "--count");
  return 2 * value;
}

Result<std::string> assign_existing(int x) {
  int value = 0;
  ACCO_ASSIGN_OR_RETURN(value, parse_positive(x));
  ACCO_ASSIGN_OR_RETURN(value, parse_positive(value + 1));
  return std::to_string(value);
}

Status check(int x) {
  ACCO_RETURN_IF_ERROR(parse_positive(x));
  return {};
}

Status check_with_context(int x) {
  ACCO_RETURN_IF_ERROR(parse_positive(x), "--count");
  return {};
}

TEST(ResultMacrosTest, AssignOrReturnMovesTheValueOrReturnsTheError) {
  EXPECT_THAT(doubled(4), HasValue(8));
  EXPECT_THAT(doubled(0), StatusIs(Errc::kInvalidArgument, "not positive"));
  EXPECT_THAT(doubled_with_context(-1), StatusIs(Errc::kInvalidArgument, "--count: not positive"));
  EXPECT_THAT(assign_existing(2), HasValue(std::string("3")));
}

TEST(ResultMacrosTest, ReturnIfErrorAddsContextOnlyWhenGiven) {
  EXPECT_THAT(check(1), IsOk());
  EXPECT_THAT(check(0), StatusIs(Errc::kInvalidArgument, "not positive"));
  EXPECT_THAT(check_with_context(0), StatusIs(Errc::kInvalidArgument, "--count: not positive"));
}

TEST(ResultMatchersTest, MatchersRejectTheWrongOutcome) {
  EXPECT_THAT(parse_positive(0), Not(IsOk()));
  EXPECT_THAT(parse_positive(3), Not(StatusIs(Errc::kInvalidArgument)));
  EXPECT_THAT(parse_positive(0), Not(StatusIs(Errc::kNotFound)));
  EXPECT_THAT(parse_positive(0), Not(StatusIs(Errc::kInvalidArgument, HasSubstr("zero"))));
  EXPECT_THAT(parse_positive(0), Not(HasValue(0)));
  EXPECT_THAT(parse_positive(3), Not(HasValue(4)));
}

TEST(ResultMatchersTest, AFailedExpectationPrintsTheError) {
  EXPECT_NONFATAL_FAILURE(EXPECT_THAT(parse_positive(0), IsOk()),
                          "holds error invalid argument: not positive");
  EXPECT_NONFATAL_FAILURE(EXPECT_THAT(parse_positive(-2), HasValue(1)),
                          "holds error invalid argument: not positive");
}

}  // namespace
}  // namespace acco
