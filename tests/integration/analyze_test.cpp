// `acco record` and `acco analyze` run as a user would: recordings of the simulated device's
// scripted loads get their verdicts, JSON conforms to docs/schemas/analyze.schema.json, and bad
// input is one line with its exit code.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "json_schema.hpp"
#include "run_acco.hpp"
#include "sysroot_builder.hpp"

namespace acco::testing {
namespace {

namespace stdfs = std::filesystem;
using ::testing::HasSubstr;

std::string recorded(const std::string& name) {
  return (stdfs::path(ACCO_SOURCE_DIR) / "tests/data/recorded" / name).string();
}

TEST(AnalyzeCliTest, EachScriptedScenarioGetsItsVerdict) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"idle.jsonl", "mostly idle"},
      {"transfer-bound.jsonl", "mostly pcie"},
      {"power-capped.jsonl", "mostly power_cap"},
      {"thermal-throttle.jsonl", "mostly thermal"},
      {"compute.jsonl", "mostly compute"},
  };
  for (const auto& [file, verdict] : cases) {
    const auto r = acco("analyze " + recorded(file));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr(verdict)) << file;
  }
}

TEST(AnalyzeCliTest, JsonConformsToTheSchema) {
  const auto r = acco("analyze --json " + recorded("thermal-throttle.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto schema = nlohmann::json::parse(
      slurp(stdfs::path(ACCO_SOURCE_DIR) / "docs/schemas/analyze.schema.json"));
  const auto j = nlohmann::json::parse(r.out);
  const auto errors = validate(schema, j);
  EXPECT_TRUE(errors.empty()) << ::testing::PrintToString(errors);
  EXPECT_EQ(j["devices"][0]["dominant"], "thermal");
}

TEST(AnalyzeCliTest, RecordFastThenAnalyzeRoundTrips) {
  TempDir dir;
  const auto file = (dir.path() / "run.jsonl").string();
  const auto rec =
      acco("record --simulate 2 --scenario transfer-bound --fast --duration 45s --out " + file);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  EXPECT_THAT(rec.out, HasSubstr("45 round(s) written to " + file));
  EXPECT_FALSE(stdfs::exists(file + ".partial"));
  const auto r = acco("analyze " + file + " --device 1 --window 15s");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("1 device(s), windows of 15.00 s"));
  EXPECT_THAT(r.out, HasSubstr("Device 1: "));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("Device 0: ")));
}

TEST(AnalyzeCliTest, ScheduleTraceIdleGapsAreAttributed) {
  TempDir dir;
  const auto trace = (dir.path() / "trace.json").string();
  const auto sched = acco("schedule --workload cholesky --tiles 4 --policy dmda --trace " + trace);
  ASSERT_EQ(sched.exit_code, 0) << sched.err;
  const auto r = acco("analyze " + trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("acco trace of policy dmda"));
  EXPECT_THAT(r.out, HasSubstr("IDLE WITH TRANSFER IN"));
  const auto j = acco("analyze --json " + trace);
  ASSERT_EQ(j.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(j.out)["schema"], "acco.analyze-trace/1");
  // A trace has no device indices and no wall clock: the recording's filters are refused, not
  // ignored.
  const auto filtered = acco("analyze " + trace + " --device 5 --window 10s");
  EXPECT_EQ(filtered.exit_code, 64);
  EXPECT_THAT(filtered.err, HasSubstr(": --device, --window apply to recordings; this file is a "
                                      "Chrome trace"));
  EXPECT_EQ(filtered.out, "");
}

TEST(AnalyzeCliTest, LiveRecordingHasHostReadings) {
  TempDir dir;
  const auto file = (dir.path() / "live.jsonl").string();
  const auto rec = acco("record --simulate 1 --interval 200ms --duration 1s --out " + file);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const auto first = slurp(file).substr(0, slurp(file).find('\n'));
  EXPECT_THAT(first, HasSubstr("\"host\":{"));
  EXPECT_THAT(acco("analyze " + file).out, ::testing::Not(HasSubstr("no host readings")));
}

TEST(AnalyzeCliTest, BadInputIsOneLineWithItsExitCode) {
  TempDir dir;
  const auto broken = dir.path() / "broken.jsonl";
  std::ofstream(broken) << "{\"time_unix_nanos\": 1, \"devices\": []}\nnope\n{}\n";
  const std::vector<std::tuple<std::string, int, std::string>> cases = {
      {"analyze /no/such.jsonl", 66, "/no/such.jsonl: no such file"},
      {"analyze " + broken.string(), 65, broken.string() + ":2: not a JSON object"},
      {"analyze " + recorded("idle.jsonl") + " --since yesterday", 64,
       "--since: 'yesterday' is not a time"},
      {"analyze " + recorded("idle.jsonl") + " --window 0s", 64,
       "--window: '0s' is not a duration"},
      {"analyze", 64, "input is required"},
      {"record --duration 1s --simulate 1", 64, "--out: the file to record into is required"},
      {"record --out x.jsonl --simulate 1", 64, "--duration: '' is not a positive duration"},
      {"record --out x.jsonl --duration 1s --fast", 64, "--fast runs simulated devices"},
      {"record --out x.jsonl --duration 300d --interval 100ms --simulate 1 --fast", 64,
       "--fast: --duration / --interval is more than a million rounds"},
      {"record --out /proc/no/x.jsonl --duration 1s --simulate 1", 73,
       "cannot write the recording /proc/no/x.jsonl"},
  };
  for (const auto& [args, code, message] : cases) {
    const auto r = acco(args);
    EXPECT_EQ(r.exit_code, code) << args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(message)) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
  }
}

}  // namespace
}  // namespace acco::testing
