// `acco bench --collective` end to end: one process without a launcher, and MPI jobs of 2 and 4
// ranks started by Open MPI's mpirun over shared memory and over TCP on this machine. The JSON
// conforms to docs/schemas/collective.schema.json and every result is checked element by element.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_acco.hpp"

namespace acco::testing {
namespace {

using ::testing::HasSubstr;

constexpr const char* kMpiexec = ACCO_MPIEXEC;  // empty when acco was built without MPI

constexpr const char* kSmall = " --max-bytes 256KiB --iters 3 --warmup 1";

// `mpirun -np N` of acco with `args`; the launcher's own flags for running as root in a 2-core
// container.
Run mpirun(int ranks, const std::string& mca, const std::string& args) {
  const std::string cmd = std::string(kMpiexec) +
                          " --allow-run-as-root --oversubscribe --bind-to none -np " +
                          std::to_string(ranks) + " " + mca + " " + ACCO_BINARY + " " + args;
  TempDir io;
  const int status = std::system(
      (cmd + " >" + (io.path() / "out").string() + " 2>" + (io.path() / "err").string()).c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(io.path() / "out"),
          slurp(io.path() / "err")};
}

void expect_every_op_checked(const nlohmann::json& j, int ranks) {
  EXPECT_EQ(j["ranks"], ranks);
  EXPECT_EQ(j["wrong"], 0);
  ASSERT_EQ(j["ops"].size(), 6U);
  for (const auto& op : j["ops"]) {
    ASSERT_FALSE(op["points"].empty()) << op["op"];
    for (const auto& p : op["points"]) {
      EXPECT_EQ(p["wrong"], 0) << op["op"] << " " << p["bytes"];
      EXPECT_GT(p["seconds"].get<double>(), 0) << op["op"];
      if (ranks > 1) {
        EXPECT_GT(p["busbw_bytes_per_second"].get<double>(), 0) << op["op"];
      }
    }
  }
}

TEST(Collective, OneProcessWithoutALauncherIsOneRank) {
  const auto r = acco(std::string("bench --collective all --json") + kSmall);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "collective.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  expect_every_op_checked(j, 1);
  EXPECT_EQ(j["backend"], "self");
  EXPECT_EQ(j["ops"][0]["summary"]["verdict"], "single rank");
}

TEST(Collective, TextHasTheNcclTestsTableAndTheSummary) {
  const auto r = acco(std::string("bench --collective allreduce,sendrecv") + kSmall);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("#       size        count   type  redop  root       time"));
  EXPECT_THAT(r.out, HasSubstr("# allreduce: plateau algbw"));
  EXPECT_THAT(r.out, HasSubstr("# sendrecv: plateau algbw"));
  EXPECT_THAT(r.out, HasSubstr("# Out of bounds values : 0 OK"));
}

TEST(Collective, BadFlagsAreUsageErrors) {
  auto r = acco("bench --collective allreduce,gather");
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_THAT(r.err, HasSubstr("--collective: collective 'gather': expected allreduce"));
  r = acco("bench --collective allreduce --min-bytes 1MiB --max-bytes 1KiB");
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_THAT(r.err, HasSubstr("--min-bytes 1MiB is larger than --max-bytes 1KiB"));
  r = acco("bench --collective allreduce --factor 1");
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_THAT(r.err, HasSubstr("--factor"));
  r = acco("bench --collective allreduce --suite storage");
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_THAT(r.err, HasSubstr("--collective runs on its own"));
}

TEST(Collective, TwoRanksOverSharedMemory) {
  if (std::string(kMpiexec).empty()) {
    GTEST_SKIP() << "acco was built without MPI (libopenmpi-dev not found)";
  }
  const auto r =
      mpirun(2, "--mca btl self,vader", std::string("bench --collective all --json") + kSmall);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  expect_conforms(r.out, "collective.schema.json");
  const auto j = nlohmann::json::parse(r.out);  // rank 0 alone prints
  expect_every_op_checked(j, 2);
  EXPECT_EQ(j["backend"], "mpi");
  EXPECT_EQ(j["nodes"], 1);
  EXPECT_THAT(j["library"].get<std::string>(), HasSubstr("Open MPI"));
  EXPECT_EQ(j["ops"][0]["summary"]["verdict"], "no peak");  // one node: no network link
  EXPECT_THAT(j["ops"][0]["summary"]["expected_source"].get<std::string>(), HasSubstr("one node"));
}

TEST(Collective, FourRanksOverTcp) {
  if (std::string(kMpiexec).empty()) {
    GTEST_SKIP() << "acco was built without MPI (libopenmpi-dev not found)";
  }
  const auto r =
      mpirun(4, "--mca btl self,tcp", std::string("bench --collective all --json") + kSmall);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  expect_conforms(r.out, "collective.schema.json");
  expect_every_op_checked(nlohmann::json::parse(r.out), 4);
}

}  // namespace
}  // namespace acco::testing
