// Slurm end to end (label `slow`): tests/integration/slurm_cluster.sh starts munged, slurmctld and
// two slurmd on this machine, then `srun -N2 -n2 --mpi=pmix` runs acco's collective bench and the
// distributed schedule across the two emulated nodes. Skipped, with the script's reason, where
// the machine cannot run Slurm (not root, slurm-wlm or munge missing, a daemon refused).
#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_acco.hpp"

namespace acco::testing {
namespace {

TEST(Slurm, SrunRunsTheCollectiveBenchAndTheDistributedScheduleOnTwoNodes) {
  if (std::string(kMpiexec).empty()) {
    GTEST_SKIP() << "acco was built without MPI (libopenmpi-dev not found)";
  }
  TempDir io;
  const std::string cmd = sanitizer_env() + "sh " + ACCO_SOURCE_DIR +
                          "/tests/integration/slurm_cluster.sh " + ACCO_BINARY + " " +
                          io.path().string() + " 2>" + (io.path() / "err").string();
  const int status = std::system(cmd.c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 77) {
    GTEST_SKIP() << slurp(io.path() / "err");
  }
  ASSERT_EQ(code, 0) << slurp(io.path() / "err");

  // srun placed one task on each emulated node.
  const std::string nodes = slurp(io.path() / "nodes");
  EXPECT_THAT(nodes, ::testing::HasSubstr("node1 0"));
  EXPECT_THAT(nodes, ::testing::HasSubstr("node2 1"));

  const std::string coll = slurp(io.path() / "collective.json");
  expect_conforms(coll, "collective.schema.json");
  const auto c = nlohmann::json::parse(coll);
  EXPECT_EQ(c["ranks"], 2);
  EXPECT_EQ(c["nodes"], 2);  // PMIx tells each rank its node: two, though one host
  EXPECT_EQ(c["backend"], "mpi");
  EXPECT_EQ(c["wrong"], 0);

  const std::string sched = slurp(io.path() / "schedule.json");
  expect_conforms(sched, "schedule-distributed.schema.json");
  const auto s = nlohmann::json::parse(sched);
  EXPECT_EQ(s["ranks"], 2);
  ASSERT_EQ(s["runs"].size(), 2U);
  for (const auto& run : s["runs"]) {
    std::size_t tasks = 0;
    for (const auto& w : run["workers"]) {
      tasks += w["tasks"].get<std::size_t>();
    }
    EXPECT_EQ(tasks, 35U) << run["dispatch"];
    EXPECT_GT(run["bytes_between_ranks"].get<std::uint64_t>(), 0U) << run["dispatch"];
  }
}

}  // namespace
}  // namespace acco::testing
