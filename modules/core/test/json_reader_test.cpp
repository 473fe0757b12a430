#include "acco/core/json_reader.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"

namespace acco::core {
namespace {

using ::acco::testing::HasValue;
using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using nlohmann::json;
using ::testing::Eq;
using ::testing::Optional;

constexpr std::array<std::string_view, 3> kColours = {"red", "green", "blue"};

// The message of the first problem, or "" when there is none.
std::string problem_of(const JsonReader& reader) {
  const Status status = reader.status();
  EXPECT_THAT(status, StatusIs(Errc::kInvalidArgument));
  return status.has_value() ? "" : status.error().message;
}

TEST(JsonReaderTest, ReadsEveryTypeOfField) {
  const json j = {{"name", "gemm"},    {"colour", "green"}, {"rate", 2.5}, {"count", 7},
                  {"big", 1ULL << 63}, {"size", -3},        {"on", true},  {"point", {{"x", 1}}},
                  {"list", {1, 2}},    {"nothing", nullptr}};
  JsonReader in(j, "doc");
  EXPECT_EQ(in.string("name"), "gemm");
  EXPECT_EQ(in.non_empty_string("name"), "gemm");
  EXPECT_EQ(in.one_of("colour", kColours), "green");
  EXPECT_EQ(in.non_negative("rate"), 2.5);
  EXPECT_EQ(in.number("size", {-5, 5}, "expected a number from -5 to 5"), -3);
  EXPECT_EQ(in.count("count"), 7U);
  EXPECT_EQ(in.count("big"), 1ULL << 63);
  EXPECT_EQ(in.integer("size", {-10, 10}), -3);
  EXPECT_TRUE(in.boolean("on"));
  ASSERT_NE(in.object("point"), nullptr);
  EXPECT_EQ(in.object("point")->at("x"), 1);
  ASSERT_NE(in.array("list"), nullptr);
  EXPECT_EQ(in.array("list")->size(), 2U);
  EXPECT_EQ(in.optional_non_negative("nothing"), std::nullopt);
  EXPECT_EQ(in.optional_string("nothing"), std::nullopt);
  EXPECT_THAT(in.optional_integer("count", {0, 10}), Optional(Eq(7)));
  EXPECT_THAT(in.status(), IsOk());
}

TEST(JsonReaderTest, NamesTheFieldByItsPathAndShowsTheValue) {
  const json j = {{"cov", -1}};
  JsonReader in(j, "results[2]");
  EXPECT_EQ(in.non_negative("cov"), 0);
  EXPECT_EQ(problem_of(in), "results[2].cov: expected a non-negative number, got -1");
}

TEST(JsonReaderTest, AnEmptyPathNamesTheKeyAlone) {
  const json j = {{"on", "yes"}};
  JsonReader in(j, "");
  EXPECT_FALSE(in.boolean("on"));
  EXPECT_EQ(problem_of(in), "on: expected true or false, got \"yes\"");
}

TEST(JsonReaderTest, KeepsTheFirstProblemAndSkipsLaterReads) {
  const json j = {{"a", "x"}, {"b", "y"}, {"c", 3}};
  JsonReader in(j, "");
  EXPECT_EQ(in.count("a"), 0U);
  EXPECT_EQ(in.count("b"), 0U);
  EXPECT_EQ(in.count("c"), 0U);  // valid, but skipped once there is a problem
  EXPECT_FALSE(in.ok());
  EXPECT_EQ(problem_of(in), "a: expected a non-negative integer, got \"x\"");
  in.problem("c", "a later problem");
  EXPECT_EQ(problem_of(in), "a: expected a non-negative integer, got \"x\"");
}

TEST(JsonReaderTest, AMissingFieldIsNamed) {
  const json j = json::object();
  JsonReader in(j, "nvml.gpus[0]");
  EXPECT_EQ(in.string("pci"), "");
  EXPECT_EQ(problem_of(in), "nvml.gpus[0].pci: missing");
}

TEST(JsonReaderTest, AValueThatIsNotAnObjectIsTheFirstProblem) {
  const json j = 7;
  JsonReader named(j, "gpus[2]");
  EXPECT_EQ(named.string("pci"), "");
  EXPECT_EQ(problem_of(named), "gpus[2]: expected an object");
  JsonReader top(j, "");
  EXPECT_EQ(problem_of(top), "expected an object");
}

TEST(JsonReaderTest, NullIsAWrongTypeForARequiredField) {
  const json j = {{"name", nullptr}};
  JsonReader in(j, "");
  EXPECT_EQ(in.string("name"), "");
  EXPECT_EQ(problem_of(in), "name: expected a string, got null");
}

TEST(JsonReaderTest, OptionalFieldsMustStillBePresentByDefault) {
  const json j = json::object();
  JsonReader in(j, "");
  EXPECT_EQ(in.optional_non_negative("latency_seconds"), std::nullopt);
  EXPECT_EQ(problem_of(in), "latency_seconds: missing");
}

TEST(JsonReaderTest, AbsentMeansNullWhenTheDocumentLeavesKeysOut) {
  const JsonReaderOptions options{.absent_means_null = true};
  const json j = {{"pstate", nullptr}, {"index", nullptr}};
  JsonReader optional(j, "gpu", options);
  EXPECT_EQ(optional.optional_integer("pstate", {0, 15}), std::nullopt);
  EXPECT_EQ(optional.optional_boolean("mig_enabled"), std::nullopt);
  EXPECT_TRUE(optional
                  .optional_list<int>(
                      "nvlinks", [](const json&, const std::string&) { return Result<int>(1); })
                  .empty());
  EXPECT_THAT(optional.status(), IsOk());

  JsonReader required(j, "gpu", options);
  EXPECT_EQ(required.integer("index", {0, 10}), 0);
  EXPECT_EQ(problem_of(required), "gpu.index: missing");
}

TEST(JsonReaderTest, ShowValueOffLeavesTheValueOut) {
  const JsonReaderOptions options{.show_value = false};
  const json j = {{"size_class", 64}};
  JsonReader in(j, "", options);
  EXPECT_EQ(in.integer("size_class", {0, 63}, "expected an integer from 0 to 63"), 0);
  EXPECT_EQ(problem_of(in), "size_class: expected an integer from 0 to 63");
}

TEST(JsonReaderTest, RangeWordings) {
  const json j = {{"pstate", 16}, {"slots", 0}, {"huge", 1ULL << 63}};
  JsonReader outside(j, "gpu", {.show_value = false, .range = RangeWording::kIsOutside});
  EXPECT_EQ(outside.integer("pstate", {0, 15}), 0);
  EXPECT_EQ(problem_of(outside), "gpu.pstate: 16 is outside 0..15");

  JsonReader between(j, "", {.range = RangeWording::kMustBeBetween});
  EXPECT_EQ(between.integer("slots", {1, 64}), 0);
  EXPECT_EQ(problem_of(between), "slots: must be between 1 and 64, got 0");

  JsonReader beyond(j, "", {.range = RangeWording::kIsOutside});
  EXPECT_EQ(beyond.integer("huge", {}), 0);
  EXPECT_EQ(problem_of(beyond),
            "huge: 9223372036854775808 is outside -9223372036854775808..9223372036854775807");
}

TEST(JsonReaderTest, AFractionIsNotAnInteger) {
  const json j = {{"slots", 1.5}};
  JsonReader in(j, "");
  EXPECT_EQ(in.integer("slots", {1, 64}), 0);
  EXPECT_EQ(problem_of(in), "slots: expected an integer, got 1.5");
}

TEST(JsonReaderTest, OneOfListsTheAllowedValues) {
  const json j = {{"colour", "pink"}};
  JsonReader expected(j, "");
  EXPECT_EQ(expected.one_of("colour", kColours), "");
  EXPECT_EQ(problem_of(expected),
            "colour: expected one of \"red\", \"green\", \"blue\", got \"pink\"");

  JsonReader outside(j, "", {.show_value = false, .range = RangeWording::kIsOutside});
  EXPECT_EQ(outside.optional_one_of("colour", kColours), std::nullopt);
  EXPECT_EQ(problem_of(outside), "colour: 'pink' is not one of red, green, blue");
}

TEST(JsonReaderTest, NonFiniteNumbersAreShownNotNull) {
  const json j = {{"cov", std::nan("")}, {"rate", std::numeric_limits<double>::infinity()}};
  JsonReader nan(j, "results[0]");
  EXPECT_EQ(nan.non_negative("cov"), 0);
  EXPECT_EQ(problem_of(nan), "results[0].cov: expected a non-negative number, got nan");
  JsonReader inf(j, "");
  EXPECT_EQ(inf.non_negative("rate"), 0);
  EXPECT_EQ(problem_of(inf), "rate: expected a non-negative number, got inf");
}

TEST(JsonReaderTest, LongValuesAreCutUnlessTheLimitIsOff) {
  const json j = {{"cov", std::string(60, 'x')}};
  JsonReader cut(j, "");
  EXPECT_EQ(cut.non_negative("cov"), 0);
  EXPECT_EQ(problem_of(cut),
            "cov: expected a non-negative number, got \"" + std::string(36, 'x') + "...");
  JsonReader whole(j, "", {.max_value_chars = 0});
  EXPECT_EQ(whole.non_negative("cov"), 0);
  EXPECT_EQ(problem_of(whole),
            "cov: expected a non-negative number, got \"" + std::string(60, 'x') + "\"");
}

TEST(JsonReaderTest, NonEmptyStringRejectsEmptyAndOtherTypes) {
  const json j = {{"type", ""}, {"device", 3}};
  JsonReader empty(j, "", {.show_value = false});
  EXPECT_EQ(empty.non_empty_string("type"), "");
  EXPECT_EQ(problem_of(empty), "type: expected a non-empty string");
  JsonReader number(j, "", {.show_value = false});
  EXPECT_EQ(number.non_empty_string("device"), "");
  EXPECT_EQ(problem_of(number), "device: expected a non-empty string");
}

TEST(JsonReaderTest, WrongNestedTypesAreNamed) {
  const json j = {{"machine", "h200"}, {"results", 3}};
  JsonReader object(j, "");
  EXPECT_EQ(object.object("machine"), nullptr);
  EXPECT_EQ(problem_of(object), "machine: expected an object, got \"h200\"");
  JsonReader array(j, "");
  EXPECT_EQ(array.array("results"), nullptr);
  EXPECT_EQ(problem_of(array), "results: expected an array, got 3");
}

Result<int> read_point(const json& item, const std::string& path) {
  JsonReader point(item, path);
  const auto x = point.integer("x", {0, 100});
  return point.finish(static_cast<int>(x));
}

TEST(JsonReaderTest, ListReadsEachElementWithItsPath) {
  const json good = {{"points", {{{"x", 1}}, {{"x", 2}}}}};
  JsonReader in(good, "doc");
  EXPECT_EQ(in.list<int>("points", read_point), (std::vector<int>{1, 2}));
  EXPECT_THAT(in.status(), IsOk());

  const json bad = {{"points", {{{"x", 1}}, 5, {{"x", "y"}}}}};
  JsonReader second(bad, "doc");
  EXPECT_TRUE(second.list<int>("points", read_point).empty());
  EXPECT_EQ(problem_of(second), "doc.points[1]: expected an object");
}

TEST(JsonReaderTest, ProblemAndAddKeepTheFirst) {
  const json j = json::object();
  JsonReader in(j, "run");
  in.add(Status{});
  EXPECT_TRUE(in.ok());
  in.problem("created", "expected a UTC time");
  in.add(Error{Errc::kNotFound, "later"});
  EXPECT_EQ(problem_of(in), "run.created: expected a UTC time");
}

TEST(JsonReaderTest, FinishGivesTheValueOrTheProblem) {
  const json j = {{"x", 4}};
  JsonReader in(j, "");
  const int x = static_cast<int>(in.integer("x", {0, 10}));
  EXPECT_THAT(in.finish(x), HasValue(4));
  EXPECT_EQ(in.integer("y", {0, 10}), 0);
  EXPECT_THAT(in.finish(x), StatusIs(Errc::kInvalidArgument));
}

TEST(JsonReaderTest, RawFieldsForTheCallersOwnRules) {
  const json j = {{"samples", {1, 2}}, {"unknown", nullptr}};
  JsonReader in(j, "");
  ASSERT_NE(in.field("samples"), nullptr);
  EXPECT_EQ(in.optional_field("unknown"), nullptr);
  EXPECT_THAT(in.status(), IsOk());
  EXPECT_EQ(in.field("absent"), nullptr);
  EXPECT_EQ(problem_of(in), "absent: missing");
}

TEST(JsonReaderTest, OptionalNestedValuesAndCounts) {
  const json j = {{"machine", nullptr}, {"bytes", nullptr}, {"sweep", nullptr}, {"n", 3U}};
  JsonReader in(j, "");
  EXPECT_EQ(in.optional_object("machine"), nullptr);
  EXPECT_EQ(in.optional_array("sweep"), nullptr);
  EXPECT_EQ(in.optional_count("bytes"), std::nullopt);
  EXPECT_THAT(in.optional_count("n"), Optional(Eq(3U)));
  EXPECT_THAT(in.status(), IsOk());
  EXPECT_EQ(in.optional_count("absent"), std::nullopt);
  EXPECT_EQ(problem_of(in), "absent: missing");
}

TEST(JsonReaderTest, ANumberOutsideItsRange) {
  const json j = {{"ratio", 1.5}};
  JsonReader expected(j, "");
  EXPECT_EQ(expected.number("ratio", {0, 1}, "expected a number from 0 to 1"), 0);
  EXPECT_EQ(problem_of(expected), "ratio: expected a number from 0 to 1, got 1.5");
  JsonReader outside(j, "", {.show_value = false, .range = RangeWording::kIsOutside});
  EXPECT_EQ(outside.optional_number("ratio", {0, 1}, "expected a number"), std::nullopt);
  EXPECT_EQ(problem_of(outside), "ratio: 1.5 is outside 0..1");
}

TEST(JsonReaderTest, AddKeepsTheCodeOfAnotherError) {
  const json j = json::object();
  JsonReader in(j, "");
  in.add(Status(fail(Errc::kNotFound, "elsewhere: no such file")));
  EXPECT_THAT(in.status(), StatusIs(Errc::kNotFound));
}

TEST(JsonReaderTest, Int64OfAcceptsOnlyIntegersThatFit) {
  EXPECT_EQ(JsonReader::int64_of(json(-5)), -5);
  EXPECT_EQ(JsonReader::int64_of(json(5U)), 5);
  EXPECT_EQ(JsonReader::int64_of(json(std::numeric_limits<std::uint64_t>::max())), std::nullopt);
  EXPECT_EQ(JsonReader::int64_of(json(2.0)), std::nullopt);
  EXPECT_EQ(JsonReader::int64_of(json("3")), std::nullopt);
}

TEST(JsonReaderTest, NotObjectWordingIsTheDocumentsOwn) {
  const json j = json::array();
  JsonReader named(j, "config", {.not_object = "expected a JSON object of setting: value"});
  EXPECT_EQ(problem_of(named), "config: expected a JSON object of setting: value");
  JsonReader top(j, "", {.not_object = "expected a JSON object of setting: value"});
  EXPECT_EQ(problem_of(top), "expected a JSON object of setting: value");
}

TEST(JsonReaderTest, QuotedKeysAreNamedInQuotes) {
  const json j = {{"sysroot", {1}}};
  JsonReader top(j, "", {.quote_keys = true});
  EXPECT_EQ(top.path("sysroot"), "'sysroot'");
  EXPECT_EQ(top.string("sysroot"), "");
  EXPECT_EQ(problem_of(top), "'sysroot': expected a string, got [1]");
  JsonReader named(j, "'files' /sys/x", {.quote_keys = true});
  EXPECT_EQ(named.path("ok"), "'files' /sys/x 'ok'");
}

TEST(JsonReaderTest, ScalarTextIsTheStringOrTheJsonText) {
  const json j = {{"s", "/srv"}, {"i", 8}, {"f", 1.5}, {"b", true}, {"a", {1}}, {"n", nullptr}};
  JsonReader in(j, "doc");
  EXPECT_EQ(in.scalar_text("s"), "/srv");
  EXPECT_EQ(in.scalar_text("i"), "8");
  EXPECT_EQ(in.scalar_text("f"), "1.5");
  EXPECT_EQ(in.scalar_text("b"), "true");
  EXPECT_THAT(in.status(), IsOk());
  EXPECT_EQ(in.scalar_text("a"), "");
  EXPECT_EQ(problem_of(in), "doc.a: expected a string, number or boolean, got [1]");
  JsonReader null(j, "doc", {.show_value = false});
  EXPECT_EQ(null.scalar_text("n"), "");
  EXPECT_EQ(problem_of(null), "doc.n: expected a string, number or boolean");
}

TEST(JsonReaderTest, KeysAreSortedAndEmptyAfterAProblem) {
  const json j = {{"b", 1}, {"a", 2}, {"c", 3}};
  JsonReader in(j, "");
  EXPECT_EQ(in.keys(), (std::vector<std::string>{"a", "b", "c"}));
  in.problem("a", "wrong");
  EXPECT_TRUE(in.keys().empty());
  const json three = 3;
  JsonReader not_object(three, "");
  EXPECT_TRUE(not_object.keys().empty());
}

}  // namespace
}  // namespace acco::core
