// gMock matchers for acco::Result and acco::Status, so a failed expectation prints the error the
// call returned ("kNotFound: probe: ...") instead of "Value of: x.has_value(), Actual: false".
//   EXPECT_THAT(parse(text), IsOk());
//   EXPECT_THAT(parse(text), StatusIs(Errc::kInvalidArgument));
//   EXPECT_THAT(parse(text), StatusIs(Errc::kInvalidArgument, HasSubstr("--tiles")));
//   ASSERT_THAT(parse(text), HasValue(Field(&Options::tiles, 8)));
#pragma once

#include <ostream>
#include <string>
#include <type_traits>

#include <gmock/gmock.h>

#include "acco/core/result.hpp"

namespace acco {

// Printed by gtest when an Error appears in a failure message.
inline void PrintTo(const Error& error, std::ostream* os) {
  *os << to_string(error.code) << ": " << error.message;
}

}  // namespace acco

namespace acco::testing {
namespace detail {

template <typename T>
void describe_result(const tl::expected<T, Error>& result, std::ostream* os) {
  if (result.has_value()) {
    *os << "a value";
  } else {
    *os << "error " << to_string(result.error().code) << ": " << result.error().message;
  }
}

}  // namespace detail

// Matches a Result or Status that holds a value.
MATCHER(IsOk, "holds a value") {
  if (arg.has_value()) {
    return true;
  }
  *result_listener << "holds error " << ::acco::to_string(arg.error().code) << ": "
                   << arg.error().message;
  return false;
}

// Matches a Result or Status that holds an error with this code (and, optionally, a message that
// matches `message_matcher`, e.g. HasSubstr("--tiles")).
MATCHER_P(StatusIs, code, "holds error " + std::string(::acco::to_string(code))) {
  if (arg.has_value()) {
    *result_listener << "holds a value";
    return false;
  }
  if (arg.error().code != code) {
    *result_listener << "holds error " << ::acco::to_string(arg.error().code) << ": "
                     << arg.error().message;
    return false;
  }
  return true;
}

MATCHER_P2(StatusIs, code, message_matcher,
           "holds error " + std::string(::acco::to_string(code)) + " whose message " +
               ::testing::DescribeMatcher<std::string>(message_matcher)) {
  if (arg.has_value()) {
    *result_listener << "holds a value";
    return false;
  }
  *result_listener << "holds error " << ::acco::to_string(arg.error().code) << ": "
                   << arg.error().message;
  return arg.error().code == code &&
         ::testing::Matches(::testing::SafeMatcherCast<const std::string&>(message_matcher))(
             arg.error().message);
}

// Matches a Result that holds a value matching `value_matcher`.
MATCHER_P(HasValue, value_matcher,
          "holds a value that " +
              ::testing::DescribeMatcher<typename std::remove_cvref_t<arg_type>::value_type>(
                  value_matcher)) {
  if (!arg.has_value()) {
    *result_listener << "holds error " << ::acco::to_string(arg.error().code) << ": "
                     << arg.error().message;
    return false;
  }
  return ::testing::ExplainMatchResult(value_matcher, *arg, result_listener);
}

}  // namespace acco::testing
