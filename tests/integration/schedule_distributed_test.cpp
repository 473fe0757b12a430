// `acco schedule --distributed` end to end: one process without a launcher (one rank does it
// all), MPI jobs of 2 and 3 ranks started by mpirun on this machine, a rank that stops answering,
// and the flags' errors. The JSON conforms to docs/schemas/schedule-distributed.schema.json.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_acco.hpp"

namespace acco::testing {
namespace {

using ::testing::HasSubstr;

// 5 x 5 tiles unless the caller says otherwise.
std::string small(const std::string& tiles = "5") {
  return "schedule --distributed --devices host:2 --tiles " + tiles +
         " --tile-bytes 64KiB --time-scale 0.2 --calibrate 0";
}

std::size_t tasks_done(const nlohmann::json& run) {
  std::size_t n = 0;
  for (const auto& w : run["workers"]) {
    n += w["tasks"].get<std::size_t>();
  }
  return n;
}

TEST(ScheduleDistributed, OneProcessIsOneRankThatRunsEverything) {
  const auto r = acco(small() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "schedule-distributed.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ranks"], 1);
  ASSERT_EQ(j["runs"].size(), 1U);
  EXPECT_EQ(j["runs"][0]["dispatch"], "locality");
  EXPECT_EQ(tasks_done(j["runs"][0]), 35U);  // 5 x 6 x 7 / 6
  EXPECT_EQ(j["runs"][0]["bytes_between_ranks"], 0);
}

TEST(ScheduleDistributed, TwoRanksUnderMpirunReportOnRankZero) {
  if (std::string(kMpiexec).empty()) {
    GTEST_SKIP() << "built without MPI";
  }
  const auto r = mpirun(2, "", small() + " --dispatch locality,round-robin --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "schedule-distributed.schema.json");  // one document: rank 0's
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ranks"], 2);
  ASSERT_EQ(j["runs"].size(), 2U);
  for (const auto& run : j["runs"]) {
    EXPECT_EQ(tasks_done(run), 35U) << run["dispatch"];
    EXPECT_GT(run["efficiency"].get<double>(), 0) << run["dispatch"];
    EXPECT_GT(run["bytes_between_ranks"].get<std::uint64_t>(), 0U) << run["dispatch"];
    EXPECT_EQ(run["reruns"], 0);
  }
  // Round-robin deals ready tasks to the ranks in turn: both get about half.
  const auto& rr = j["runs"][1]["workers"];
  EXPECT_GE(rr[0]["tasks"].get<int>(), 15);
  EXPECT_GE(rr[1]["tasks"].get<int>(), 15);
}

TEST(ScheduleDistributed, TextNamesTheRunsAndEveryRank) {
  if (std::string(kMpiexec).empty()) {
    GTEST_SKIP() << "built without MPI";
  }
  const auto r = mpirun(2, "", small() + " --slow-rank 1:3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("distributed schedule: cholesky (35 tasks) over 2 rank(s) x 2 "
                               "device(s) (pcie3x16), local policy dmda"));
  EXPECT_THAT(r.out, HasSubstr("dispatch  makespan"));
  EXPECT_THAT(r.out, HasSubstr("locality: per rank"));
  EXPECT_THAT(r.out, HasSubstr("rank  tasks  slowdown  inputs in  state"));
}

TEST(ScheduleDistributed, ARankThatStopsAnsweringIsLostAndTheRunCompletes) {
  if (std::string(kMpiexec).empty()) {
    GTEST_SKIP() << "built without MPI";
  }
  const auto r = mpirun(3, "",
                        small("6") +
                            " --hang-rank 2 --hang-after 0 "
                            "--lost-after 500ms --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "schedule-distributed.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  const auto& run = j["runs"][0];
  EXPECT_EQ(run["workers"][2]["lost"], true);
  EXPECT_EQ(run["workers"][2]["tasks"], 0);
  EXPECT_EQ(tasks_done(run), 56U + run["reruns"].get<std::size_t>());
}

TEST(ScheduleDistributed, BadFlagsAreUsageErrors) {
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"--dispatch eager --distributed", "--dispatch: 'eager'"},
           {"--dispatch locality,locality --distributed", "named twice"},
           {"--hang-rank 1", "--hang-rank requires --distributed"},
           {"--distributed --hang-after 2", "--hang-after requires --hang-rank"},
           {"--distributed --hang-rank 0", "--hang-rank: '0'"},
           {"--distributed --slow-rank 1", "--slow-rank: '1'"},
           {"--distributed --lost-after 0s", "--lost-after: '0s'"},
           {"--distributed --between-ranks fast", "--between-ranks: 'fast'"},
           {"--distributed --trace t.json", "--distributed: --trace is for one-node runs"},
           {"--distributed --policy dmda,ws", "several --policy"},
           {"--distributed --hang-rank 3", "the job has 1 rank(s)"},
       }) {
    const auto r = acco("schedule --tiles 2 " + args);
    EXPECT_EQ(r.exit_code, 64) << args << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(message)) << args;
    EXPECT_TRUE(r.out.empty()) << args;
  }
}

}  // namespace
}  // namespace acco::testing
