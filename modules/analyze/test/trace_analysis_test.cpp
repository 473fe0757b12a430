#include "acco/analyze/trace_analysis.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"

namespace acco::analyze {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::HasSubstr;

nlohmann::json meta(int pid, int tid, const std::string& name) {
  return {
      {"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}
nlohmann::json slice(int pid, int tid, double ts, double dur, double bytes = 0) {
  return {{"ph", "X"},
          {"name", "x"},
          {"pid", pid},
          {"tid", tid},
          {"ts", ts},
          {"dur", dur},
          {"args", {{"bytes", bytes}}}};
}

// dev0 waits for its data (transfer 0-400 us, task 400-500, transfer 500-900, task 900-1000);
// dev1 waits with nothing in flight (task 0-100, idle until 900, task 900-1000); dev2 computes.
nlohmann::json trace() {
  return {{"traceEvents",
           {meta(1, 0, "dev0 cuda:0 (gpu)"), meta(1, 1, "dev1 cuda:1 (gpu)"),
            meta(1, 2, "dev2 cuda:2 (gpu)"), meta(2, 1, "to dev0 cuda:0 (gpu)"),
            slice(2, 1, 1000, 400, 4096), slice(1, 0, 1400, 100), slice(2, 1, 1500, 400, 4096),
            slice(1, 0, 1900, 100), slice(1, 1, 1000, 100), slice(1, 1, 1900, 100),
            slice(1, 2, 1000, 950)}},
          {"otherData", {{"schema", "acco.trace/1"}, {"policy", "dmda"}, {"elapsed_us", 1000}}}};
}

TEST(TraceAnalysisTest, IdleGapsAreAttributedToTransfersOrNot) {
  const auto r = analyze_trace(trace(), "t.json");
  ASSERT_THAT(r, IsOk());
  ASSERT_EQ(r->devices.size(), 3U);
  const auto& d0 = r->devices[0];
  EXPECT_EQ(d0.tasks, 2);
  EXPECT_NEAR(d0.busy_seconds, 200e-6, 1e-9);
  EXPECT_NEAR(d0.idle_seconds, 800e-6, 1e-9);
  EXPECT_NEAR(d0.idle_with_transfer_seconds, 800e-6, 1e-9);
  EXPECT_EQ(d0.transfer_bytes, 8192);
  EXPECT_EQ(d0.verdict, "transfer-bound gaps");
  EXPECT_EQ(r->devices[1].verdict, "dependency gaps");
  EXPECT_EQ(r->devices[2].verdict, "busy");
  EXPECT_THAT(acco::report::render_text(trace_report(*r)), HasSubstr("acco trace of policy dmda"));
  EXPECT_EQ(to_json(*r)["devices"][0]["verdict"], "transfer-bound gaps");
}

TEST(TraceAnalysisTest, OtherDocumentsAreRefusedByName) {
  EXPECT_THAT(analyze_trace(nlohmann::json::array(), "a.json"), StatusIs(Errc::kInvalidArgument));
  const auto foreign = analyze_trace({{"traceEvents", nlohmann::json::array()}}, "b.json");
  ASSERT_FALSE(foreign.has_value());
  EXPECT_THAT(foreign.error().message, HasSubstr("b.json: not an acco trace"));
}

// Fields of another type made nlohmann throw (exit 70, found by a robustness sweep).
TEST(TraceAnalysisTest, FieldsOfTheWrongTypeOrTimesOutOfRangeAreMalformed) {
  const nlohmann::json good = {
      {"otherData", {{"schema", "acco.trace/1"}, {"policy", "dmda"}, {"elapsed_us", 10}}},
      {"traceEvents",
       {{{"ph", "M"}, {"name", "thread_name"}, {"pid", 1}, {"tid", 0}, {"args", {{"name", "d"}}}},
        {{"ph", "X"}, {"pid", 1}, {"tid", 0}, {"ts", 0}, {"dur", 5}}}}};
  ASSERT_THAT(analyze_trace(good, "t.json"), IsOk());
  auto other = good;
  other["otherData"] = "x";
  auto pid = good;
  pid["traceEvents"][1]["pid"] = "x";
  auto args = good;
  args["traceEvents"][0]["args"] = "x";
  auto policy = good;
  policy["otherData"]["policy"] = 5;
  for (const auto& bad : {other, pid, args, policy}) {
    const auto r = analyze_trace(bad, "t.json");
    ASSERT_THAT(r, StatusIs(Errc::kInvalidArgument)) << bad.dump();
    EXPECT_THAT(r.error().message, HasSubstr("t.json: a field of the trace has the wrong type"));
  }
  auto dur = good;
  dur["traceEvents"][1]["dur"] = -1;
  auto ts = good;
  ts["traceEvents"][1]["ts"] = 1e300;
  auto elapsed = good;
  elapsed["otherData"]["elapsed_us"] = -5;
  for (const auto& bad : {dur, ts, elapsed}) {
    EXPECT_THAT(analyze_trace(bad, "t.json"),
                StatusIs(Errc::kInvalidArgument, HasSubstr("t.json: ")))
        << bad.dump();
  }
}

}  // namespace
}  // namespace acco::analyze
