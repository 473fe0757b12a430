#include "acco/core/json.hpp"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"

namespace acco::core {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(JsonTest, ParseErrorNamesTheInputAndPosition) {
  auto r = parse_json("{\"a\": }", "snap.json");
  EXPECT_THAT(r,
              StatusIs(Errc::kInvalidArgument, AllOf(HasSubstr("snap.json"), HasSubstr("line 1"))));
}

// nlohmann throws out_of_range, not parse_error, for a number past a double's range: an error
// value too (found by the task_graphs fuzz target; it used to abort).
TEST(JsonTest, ANumberPastADoublesRangeIsAnErrorNotAnAbort) {
  auto r = parse_json("{\"a\": 1e999}", "dag.json");
  EXPECT_THAT(r,
              StatusIs(Errc::kInvalidArgument, AllOf(HasSubstr("dag.json"), HasSubstr("1e999"))));
}

TEST(JsonTest, DumpReplacesBytesThatAreNotUtf8) {
  const nlohmann::json j = {{"path", std::string("/\xff\xfe")}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);
  EXPECT_EQ(dump_replacing_invalid_utf8(j), "{\"path\":\"/\xef\xbf\xbd\xef\xbf\xbd\"}");
  EXPECT_EQ(dump_replacing_invalid_utf8(nlohmann::json{{"a", 1}}, 2), "{\n  \"a\": 1\n}");
}

TEST(JsonTest, ErrcNamesRoundTrip) {
  EXPECT_EQ(errc_from_string(to_string(Errc::kUnavailable)).value(), Errc::kUnavailable);
  EXPECT_THAT(errc_from_string("bogus"), Not(IsOk()));
}

}  // namespace
}  // namespace acco::core
