// Task graphs of the Standard Task Graph Set (STG format): read into acco.dag/1 with their
// dummy entry and exit tasks, simulated to their critical path, and every malformed line named.
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "acco/sim/dag_file.hpp"
#include "acco/sim/simulate.hpp"
#include "acco/testing/files.hpp"
#include "acco/testing/json_schema.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::sim {
namespace {

using ::acco::testing::IsOk;
using ::testing::HasSubstr;

// Five tasks in the set's layout (numbers right-aligned in 11-character fields), the entry T0 and
// exit T6 of time 0, and an information part. The longest path T0 T1 T3 T5 T6 takes 4 + 6 + 5 =
// 15 units; the work is 20.
constexpr const char* kGraph =
    "          5\n"
    "          0          0          0\n"
    "          1          4          1          0\n"
    "          2          3          1          0\n"
    "          3          6          1          1\n"
    "          4          2          2          1          2\n"
    "          5          5          2          3          4\n"
    "          6          0          1          5\n"
    "#-------------------------------------------\n"
    "# Tasks             : 5 (+dummy tasks : 2)\n"
    "# CP Length         : 15\n";

TEST(StgTest, TheGraphIsItsTasksWithTheDummiesAndItsEdges) {
  const auto dag = dag_from_stg(kGraph, "five");
  ASSERT_THAT(dag, IsOk());
  EXPECT_THAT(testing::validate(testing::published_schema("dag.schema.json"), *dag),
              ::testing::IsEmpty());
  EXPECT_EQ((*dag)["name"], "five");
  ASSERT_EQ((*dag)["tasks"].size(), 7U);
  EXPECT_EQ((*dag)["tasks"][0]["name"], "T0");
  EXPECT_DOUBLE_EQ((*dag)["tasks"][3]["seconds"].get<double>(), 0.006);  // a unit is 1 ms
  EXPECT_EQ((*dag)["edges"].size(), 8U);
  const auto w = workload_from_dag(*dag);
  ASSERT_THAT(w, IsOk());
  EXPECT_EQ(w->tasks.size(), 7U);
  EXPECT_EQ(w->data_bytes, std::vector<std::size_t>(8, 0));  // no communication costs
}

TEST(StgTest, OnThreeDevicesHeftFinishesAtTheCriticalPathAndOneDeviceTakesTheWork) {
  const auto dag = dag_from_stg(kGraph);
  ASSERT_THAT(dag, IsOk());
  const auto w = workload_from_dag(*dag);
  ASSERT_THAT(w, IsOk());
  Platform p;
  for (int i = 0; i < 3; ++i) {
    p.node.devices.push_back("P" + std::to_string(i));
    p.node.links.push_back({"pcie " + std::to_string(i), "pcie", 1e9, 0});
    p.node.to_host.push_back({i});
  }
  p.node.peer.assign(3, std::vector<std::vector<int>>(3));
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      if (i != j) {
        p.node.peer[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = {i, j};
      }
    }
  }
  SimOptions heft;
  heft.policy = sched::PolicyKind::kHeft;
  const auto r = simulate(p, *w, heft);
  ASSERT_THAT(r, IsOk());
  EXPECT_NEAR(r->critical_path, 0.015, 1e-12);
  EXPECT_NEAR(r->makespan, 0.015, 1e-9);
  p.node.devices.resize(1);
  p.node.links.resize(1);
  p.node.to_host.resize(1);
  p.node.peer.assign(1, std::vector<std::vector<int>>(1));
  const auto one = simulate(p, *w, heft);
  ASSERT_THAT(one, IsOk());
  EXPECT_NEAR(one->makespan, 0.020, 1e-9);
}

TEST(StgTest, EachMalformedGraphIsNamedByItsLine) {
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"", "no task graph: the first line is not the number of tasks"},
           {"# only information\n", "no task graph: the first line is not the number of tasks"},
           {"1 2\n", "line 1: the first line is not the number of tasks (0 to 10 million)"},
           {"-1\n", "line 1: the first line is not the number of tasks (0 to 10 million)"},
           {"1\n0 0 0\n1 5 1 0\n", "2 task lines for 1 tasks and the two dummies (T0 to T2)"},
           {"1\n0 0 0\n1 5 2 0\n2 0 1 1\n",
            "line 3: '1 5 2 0' is not \"1 TIME PREDECESSORS IDS...\" with as many ids as "
            "predecessors"},
           {"1\n0 0 0\n2 5 1 0\n2 0 1 1\n",
            "line 3: '2 5 1 0' is not \"1 TIME PREDECESSORS IDS...\" with as many ids as "
            "predecessors"},
           {"1\n0 0 0\n1 -5 1 0\n2 0 1 1\n",
            "line 3: '1 -5 1 0' is not \"1 TIME PREDECESSORS IDS...\" with as many ids as "
            "predecessors"},
           {"1\n0 0 0\n1 5 1 7\n2 0 1 1\n", "line 3: T1 names T7 as its predecessor"},
           {"1\n0 0 0\n1 5 1 1\n2 0 1 1\n", "line 3: T1 names T1 as its predecessor"},
           {"1\n0 0 0\n1 five 1 0\n", "line 3: '1 five 1 0' is not whole numbers"},
           {"1\n0 0 0\n1 5 1 0\n2 0 1 1\n3 0 0\n",
            "line 5: a task after T2, the exit task of 1 tasks"},
       }) {
    SCOPED_TRACE(text);
    const auto dag = dag_from_stg(text);
    ASSERT_FALSE(dag.has_value());
    EXPECT_EQ(dag.error().code, Errc::kInvalidArgument);
    EXPECT_EQ(dag.error().message, message);
  }
  // A cycle is the graph's error, named by workload_from_dag.
  const auto cycle = dag_from_stg("2\n0 0 0\n1 1 2 0 2\n2 1 1 1\n3 0 1 2\n");
  ASSERT_THAT(cycle, IsOk());
  EXPECT_THAT(workload_from_dag(*cycle).error().message, HasSubstr("the edges make a cycle"));
}

TEST(StgTest, AFileThatIsNotJsonIsReadAsStgAndNamedByItsStem) {
  testing::TempDir dir;
  const auto file = dir.path() / "rand0000.stg";
  std::ofstream(file) << kGraph;
  const auto w = load_dag(file.string());
  ASSERT_THAT(w, IsOk());
  EXPECT_EQ(w->name, "rand0000");
  EXPECT_EQ(w->tasks.size(), 7U);
  std::ofstream(file, std::ios::trunc) << "3\n0 0 0\n";
  EXPECT_EQ(load_dag(file.string()).error().message,
            file.string() + ": 1 task lines for 3 tasks and the two dummies (T0 to T4)");
}

}  // namespace
}  // namespace acco::sim
