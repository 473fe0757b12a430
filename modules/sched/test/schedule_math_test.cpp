#include "acco/sched/schedule_math.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/sched/workload.hpp"
#include "acco/testing/matchers.hpp"

#include "simplex.hpp"

namespace acco::sched {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Topcuoglu, Hariri and Wu (2002), figure 2: tasks n1..n10 as 0..9, processors P1..P3 as 0..2.
Dag paper_dag() {
  Dag dag;
  dag.cost = {{14, 16, 9}, {13, 19, 18}, {11, 13, 19}, {13, 8, 17},  {12, 13, 10},
              {13, 16, 9}, {7, 15, 11},  {5, 11, 14},  {18, 12, 20}, {21, 7, 16}};
  auto e = [&dag](std::size_t from, std::size_t to, double comm) {
    dag.edges.push_back({from - 1, to - 1, comm});
  };
  e(1, 2, 18);
  e(1, 3, 12);
  e(1, 4, 9);
  e(1, 5, 11);
  e(1, 6, 14);
  e(2, 8, 19);
  e(2, 9, 16);
  e(3, 7, 23);
  e(4, 8, 27);
  e(4, 9, 23);
  e(5, 9, 13);
  e(6, 8, 15);
  e(7, 10, 17);
  e(8, 10, 11);
  e(9, 10, 13);
  return dag;
}

// Every task runs on a processor that can run it, for its cost there, after its predecessors'
// data arrived, and no two tasks overlap on a processor.
void expect_valid(const Dag& dag, const StaticSchedule& s) {
  ASSERT_EQ(s.tasks.size(), dag.cost.size());
  ASSERT_EQ(s.order.size(), dag.cost.size());
  double makespan = 0;
  for (std::size_t i = 0; i < dag.cost.size(); ++i) {
    const Placement& p = s.tasks[i];
    ASSERT_LT(p.processor, dag.cost[i].size());
    EXPECT_TRUE(std::isfinite(dag.cost[i][p.processor])) << "task " << i;
    EXPECT_NEAR(p.finish - p.start, dag.cost[i][p.processor], 1e-9) << "task " << i;
    makespan = std::max(makespan, p.finish);
  }
  EXPECT_DOUBLE_EQ(s.makespan, makespan);
  for (const DagEdge& e : dag.edges) {
    const Placement& from = s.tasks[e.from];
    const Placement& to = s.tasks[e.to];
    const double comm = from.processor == to.processor ? 0 : e.comm;
    EXPECT_GE(to.start + 1e-9, from.finish + comm) << e.from << " -> " << e.to;
  }
  for (std::size_t a = 0; a < s.tasks.size(); ++a) {
    for (std::size_t b = a + 1; b < s.tasks.size(); ++b) {
      const Placement& x = s.tasks[a];
      const Placement& y = s.tasks[b];
      if (x.processor != y.processor || x.finish == x.start || y.finish == y.start) {
        continue;
      }
      EXPECT_TRUE(x.finish <= y.start + 1e-9 || y.finish <= x.start + 1e-9)
          << "tasks " << a << " and " << b << " overlap";
    }
  }
}

TEST(HeftTest, UpwardRanksMatchThePaper) {
  auto ranks = upward_ranks(paper_dag());
  ASSERT_THAT(ranks, IsOk());
  const std::vector<double> expected = {108,    77,     80,     80,     69,
                                        63.333, 42.667, 35.667, 44.333, 14.667};
  ASSERT_EQ(ranks->size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR((*ranks)[i], expected[i], 1e-3) << "n" << i + 1;
  }
}

TEST(HeftTest, BestCostRanksFollowTheFastestProcessorsCriticalPath) {
  // Processor 0 is a CPU, 1 a GPU. Task 0 is a GEMM-like task (40 on the CPU, 1 on the GPU);
  // tasks 1 -> 2 a chain the CPU runs slightly faster (7 vs 8); task 3 joins them, task 4 runs
  // on the GPU only; the chain's edge costs 0.5. Mean costs rank the GEMM first (20.5 + 1 >
  // 7.5 + 0.5 + 7.5 + 1); on the fastest processor's costs the chain is the critical path
  // (7 + 0.5 + 7 + 1 = 15.5 > 1 + 1).
  Dag dag;
  const double inf = std::numeric_limits<double>::infinity();
  dag.cost = {{40, 1}, {7, 8}, {7, 8}, {1, 1}, {inf, 3}};
  dag.edges = {{0, 3, 0}, {1, 2, 0.5}, {2, 3, 0}, {4, 3, 0}};
  auto mean = upward_ranks(dag);
  auto best = upward_ranks(dag, RankCost::kBest);
  ASSERT_TRUE(mean.has_value() && best.has_value());
  EXPECT_GT((*mean)[0], (*mean)[1]);
  const std::vector<double> expected = {2, 15.5, 8, 1, 4};
  ASSERT_EQ(best->size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_DOUBLE_EQ((*best)[i], expected[i]) << i;
  }
}

TEST(HeftTest, PaperExampleMakespanIs80) {
  const Dag dag = paper_dag();
  auto s = heft(dag);
  ASSERT_THAT(s, IsOk());
  EXPECT_DOUBLE_EQ(s->makespan, 80);
  EXPECT_EQ(s->tasks[0], (Placement{2, 0, 9}));
  EXPECT_EQ(s->tasks[9].processor, 1u);
  EXPECT_DOUBLE_EQ(s->tasks[9].finish, 80);
  EXPECT_NEAR(s->rank_u[0], 108, 1e-9);
  EXPECT_EQ(s->order.front(), 0u);
  EXPECT_EQ(s->order.back(), 9u);
  expect_valid(dag, *s);
}

TEST(HeftTest, OrderIsDecreasingUpwardRankWithTiesToTheLowerTask) {
  auto s = heft(paper_dag());
  ASSERT_THAT(s, IsOk());
  EXPECT_THAT(s->order, ElementsAre(0, 2, 3, 1, 4, 5, 8, 6, 7, 9));
}

TEST(HeftTest, InfiniteCostKeepsTaskOffThatProcessorAndOutOfItsMean) {
  Dag dag;
  dag.cost = {{kInf, 4}, {2, 2}};
  dag.edges = {{0, 1, 0}};
  auto s = heft(dag);
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->tasks[0].processor, 1u);
  EXPECT_DOUBLE_EQ(s->rank_u[0], 4 + 2);
  EXPECT_DOUBLE_EQ(s->makespan, 6);
  expect_valid(dag, *s);
}

TEST(HeftTest, EqualFinishTimesGoToTheLowerProcessor) {
  Dag dag;
  dag.cost = {{3, 3, 3}, {3, 3, 3}};
  auto s = heft(dag);
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->tasks[0], (Placement{0, 0, 3}));
  EXPECT_EQ(s->tasks[1], (Placement{1, 0, 3}));
  EXPECT_THAT(s->order, ElementsAre(0, 1));
}

TEST(HeftTest, CommunicationIsFreeOnTheSameProcessor) {
  Dag dag;
  dag.cost = {{5, 5}, {5, 5}};
  dag.edges = {{0, 1, 100}};
  auto s = heft(dag);
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->tasks[1], (Placement{0, 5, 10}));
  EXPECT_DOUBLE_EQ(s->makespan, 10);
}

TEST(HeftTest, InsertsATaskIntoAnEarlierIdleGap) {
  // Ranks: 0 -> 12, 2 -> 4, 3 -> 2, 1 -> 1. Task 0 runs on P1 [0, 3); task 2 waits for its data
  // on P0 until 3 + 5 = 8. Tasks 3 and 1 then fit in the idle gap [0, 8) before it on P0.
  Dag dag;
  dag.cost = {{kInf, 3}, {1, 1}, {4, kInf}, {2, kInf}};
  dag.edges = {{0, 2, 5}};
  auto s = heft(dag);
  ASSERT_THAT(s, IsOk());
  EXPECT_THAT(s->order, ElementsAre(0, 2, 3, 1));
  EXPECT_EQ(s->tasks[0], (Placement{1, 0, 3}));
  EXPECT_EQ(s->tasks[2], (Placement{0, 8, 12}));
  EXPECT_EQ(s->tasks[3], (Placement{0, 0, 2}));
  EXPECT_EQ(s->tasks[1], (Placement{0, 2, 3}));  // finishes at 3 in the gap, 4 on P1
  EXPECT_DOUBLE_EQ(s->makespan, 12);
  expect_valid(dag, *s);
}

TEST(CpopTest, PaperExampleMakespanIs86) {
  const Dag dag = paper_dag();
  auto s = cpop(dag);
  ASSERT_THAT(s, IsOk());
  EXPECT_DOUBLE_EQ(s->makespan, 86);
  for (std::size_t cp : {0u, 1u, 8u, 9u}) {
    EXPECT_EQ(s->tasks[cp].processor, 1u) << "n" << cp + 1;
  }
  expect_valid(dag, *s);
}

TEST(CpopTest, CriticalTaskThePathProcessorCannotRunGoesElsewhere) {
  Dag dag;
  dag.cost = {{1, 10}, {kInf, 5}, {1, 10}};
  dag.edges = {{0, 1, 0}, {1, 2, 0}};
  auto s = cpop(dag);
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->tasks[1].processor, 1u);
  expect_valid(dag, *s);
}

TEST(HeftTest, SchedulesARandomWorkloadValidly) {
  WorkloadSpec spec;
  spec.kind = WorkloadKind::kRandom;
  spec.tasks = 60;
  spec.seed = 7;
  auto w = make_workload(spec, {{"cpu", 1}, {"gpu", 2}, {"gpu", 2}});
  ASSERT_THAT(w, IsOk());
  Dag dag;
  for (const WorkTask& t : w->tasks) {
    dag.cost.push_back(t.seconds);
  }
  for (const Edge& e : infer_edges(*w)) {
    dag.edges.push_back({e.from, e.to, static_cast<double>(e.bytes) / 1e10});
  }
  auto h = heft(dag);
  ASSERT_THAT(h, IsOk());
  expect_valid(dag, *h);
  auto c = cpop(dag);
  ASSERT_THAT(c, IsOk());
  expect_valid(dag, *c);
  auto b = bounds(dag);
  ASSERT_THAT(b, IsOk());
  EXPECT_GE(h->makespan + 1e-12, b->best());
  EXPECT_GE(c->makespan + 1e-12, b->best());
}

TEST(BoundsTest, PaperExampleCriticalPathIsTheFastestChain) {
  auto b = bounds(paper_dag());
  ASSERT_THAT(b, IsOk());
  // n1 -> n2 -> n9 -> n10 at 9 + 13 + 12 + 7 = 41, the SLR denominator of the paper.
  EXPECT_DOUBLE_EQ(b->critical_path, 41);
  EXPECT_GT(b->area, 0);
  EXPECT_LE(b->area, 80);
}

TEST(BoundsTest, TwoIdenticalProcessorsAreaIsHalfTheWork) {
  Dag dag;
  dag.cost = {{3, 3}, {5, 5}, {7, 7}, {1, 1}};
  auto b = bounds(dag);
  ASSERT_THAT(b, IsOk());
  EXPECT_NEAR(b->area, 8, 1e-9);
  EXPECT_DOUBLE_EQ(b->critical_path, 7);
  EXPECT_NEAR(b->best(), 8, 1e-9);
}

TEST(BoundsTest, OneTaskTypeOnSpeedsOneAndThreeTakesAQuarterOfTheWork) {
  // n tasks of cost w at speed 1 and w/3 at speed 3: the pair completes 4/w tasks per unit of
  // time, so T = n w / 4.
  Dag dag;
  dag.cost.assign(10, {6, 2});
  auto b = bounds(dag);
  ASSERT_THAT(b, IsOk());
  EXPECT_NEAR(b->area, 10 * 6 / 4.0, 1e-9);
  EXPECT_DOUBLE_EQ(b->critical_path, 2);
}

TEST(BoundsTest, TaskOnlyOneProcessorCanRunLoadsThatProcessor) {
  Dag dag;
  dag.cost = {{10, kInf}, {1, 1}};
  auto b = bounds(dag);
  ASSERT_THAT(b, IsOk());
  EXPECT_NEAR(b->area, 10, 1e-9);
}

// Reference b8: with two classes of identical processors, giving the GPUs the task types of
// highest t_cpu / t_gpu first and splitting one type is optimal. Tries every split type.
struct TaskType {
  double count;
  double cpu;
  double gpu;
};
double two_class_area(std::vector<TaskType> types, double cpus, double gpus) {
  std::sort(types.begin(), types.end(),
            [](const TaskType& a, const TaskType& b) { return a.cpu / a.gpu > b.cpu / b.gpu; });
  double best = kInf;
  for (std::size_t k = 0; k < types.size(); ++k) {
    double on_gpu = 0;
    double on_cpu = 0;
    for (std::size_t j = 0; j < types.size(); ++j) {
      if (j < k) {
        on_gpu += types[j].count * types[j].gpu;
      } else if (j > k) {
        on_cpu += types[j].count * types[j].cpu;
      }
    }
    const double x = types[k].count * types[k].gpu;
    const double y = types[k].count * types[k].cpu;
    const double f =
        std::clamp((gpus * (y + on_cpu) - cpus * on_gpu) / (cpus * x + gpus * y), 0.0, 1.0);
    best = std::min(best, std::max((on_gpu + f * x) / gpus, ((1 - f) * y + on_cpu) / cpus));
  }
  return best;
}

Dag two_class_dag(const std::vector<TaskType>& types, int cpus, int gpus) {
  Dag dag;
  for (const TaskType& t : types) {
    std::vector<double> row(static_cast<std::size_t>(cpus), t.cpu);
    row.insert(row.end(), static_cast<std::size_t>(gpus), t.gpu);
    for (int i = 0; i < static_cast<int>(t.count); ++i) {
      dag.cost.push_back(row);
    }
  }
  return dag;
}

TEST(BoundsTest, AreaMatchesTheSortByRatioRuleOnTwoTypesAndTwoClasses) {
  // Worked by hand: the GPU takes 29/30 of type A, T = 29/3.
  const std::vector<TaskType> types = {{10, 4, 1}, {6, 3, 2}};
  EXPECT_NEAR(two_class_area(types, 2, 1), 29.0 / 3, 1e-12);
  auto b = bounds(two_class_dag(types, 2, 1));
  ASSERT_THAT(b, IsOk());
  EXPECT_NEAR(b->area, 29.0 / 3, 1e-9);
}

TEST(BoundsTest, CholeskyAreaOnSiroccoMatchesTheSortByRatioRule) {
  WorkloadSpec spec;
  spec.kind = WorkloadKind::kCholesky;
  spec.tiles = 16;
  const std::vector<DeviceModel> devices = {{"cpu", 1}, {"cpu", 1}, {"cpu", 1},
                                            {"cpu", 1}, {"gpu", 1}, {"gpu", 1}};
  auto w = make_workload(spec, devices);
  ASSERT_THAT(w, IsOk());
  ASSERT_EQ(w->tasks.size(), 816u);
  Dag dag;
  std::map<std::string, TaskType> types;
  for (const WorkTask& t : w->tasks) {
    dag.cost.push_back(t.seconds);
    TaskType& type = types[t.type];
    type.count += 1;
    type.cpu = t.seconds[0];
    type.gpu = t.seconds[4];
  }
  for (const Edge& e : infer_edges(*w)) {
    dag.edges.push_back({e.from, e.to, 0});
  }
  std::vector<TaskType> list;
  for (const auto& [name, type] : types) {
    list.push_back(type);
  }
  const double expected = two_class_area(list, 4, 2);
  auto b = bounds(dag);
  ASSERT_THAT(b, IsOk());
  EXPECT_NEAR(b->area, expected, 1e-9 * expected);
}

TEST(BoundsTest, AreaLpHandlesManyDistinctCostRows) {
  // Every row distinct: one LP group per task. Identical processors make the answer W / q.
  Dag dag;
  double work = 0;
  for (int i = 0; i < 200; ++i) {
    const double c = 1 + (i * 37 % 101) / 10.0;
    dag.cost.push_back({c, c, c});
    work += c;
  }
  auto b = bounds(dag);
  ASSERT_THAT(b, IsOk());
  EXPECT_NEAR(b->area, work / 3, 1e-9 * work);
}

TEST(BoundsTest, AreaMatchesADirectLpOnUnrelatedDistinctRows) {
  // The direct LP over x_ip (fraction of task i on p), T and one slack per processor.
  WorkloadSpec spec;
  spec.kind = WorkloadKind::kRandom;
  spec.tasks = 30;
  spec.beta = 1.5;
  auto w = make_workload(spec, {{"cpu", 1}, {"gpu", 3}, {"gpu", 0.5}});
  ASSERT_THAT(w, IsOk());
  Dag dag;
  for (const WorkTask& t : w->tasks) {
    dag.cost.push_back(t.seconds);
  }
  dag.cost[4][1] = kInf;
  const std::size_t n = dag.cost.size();
  const std::size_t q = 3;
  const std::size_t cols = n * q + 1 + q;
  detail::LinearProgram lp;
  lp.c.assign(cols, 0);
  lp.c[n * q] = 1;
  for (std::size_t p = 0; p < q; ++p) {
    std::vector<double> row(cols, 0);
    for (std::size_t i = 0; i < n; ++i) {
      row[i * q + p] = std::isfinite(dag.cost[i][p]) ? dag.cost[i][p] : 0;
    }
    row[n * q] = -1;
    row[n * q + 1 + p] = 1;
    lp.a.push_back(row);
    lp.b.push_back(0);
  }
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> row(cols, 0);
    for (std::size_t p = 0; p < q; ++p) {
      row[i * q + p] = std::isfinite(dag.cost[i][p]) ? 1 : 0;
    }
    lp.a.push_back(row);
    lp.b.push_back(1);
  }
  auto direct = detail::solve_lp(lp);
  ASSERT_THAT(direct, IsOk());
  auto b = bounds(dag);
  ASSERT_THAT(b, IsOk());
  EXPECT_NEAR(b->area, direct->objective, 1e-9 * direct->objective);
}

// One message per bad input, naming what is wrong; the same checks guard every entry point.
void expect_invalid(const Dag& dag, const std::string& what) {
  auto b = bounds(dag);
  ASSERT_THAT(b, StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(b.error().message, HasSubstr(what));
  EXPECT_EQ(b.error().message.find('\n'), std::string::npos);
  auto h = heft(dag);
  ASSERT_FALSE(h.has_value());
  EXPECT_EQ(h.error(), b.error());
  auto c = cpop(dag);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error(), b.error());
  auto r = upward_ranks(dag);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error(), b.error());
  auto best = upward_ranks(dag, RankCost::kBest);
  ASSERT_FALSE(best.has_value());
  EXPECT_EQ(best.error(), b.error());
}

TEST(ScheduleMathErrorTest, EmptyCostMatrixIsRejected) {
  expect_invalid(Dag{}, "cost matrix is empty");
  Dag no_processors;
  no_processors.cost = {{}, {}};
  expect_invalid(no_processors, "cost row 0 is empty");
}

TEST(ScheduleMathErrorTest, RaggedCostMatrixIsRejected) {
  Dag dag;
  dag.cost = {{1, 2}, {1}};
  expect_invalid(dag, "cost row 1 has 1 entries, expected 2");
}

TEST(ScheduleMathErrorTest, EdgeOutOfRangeIsRejected) {
  Dag dag;
  dag.cost = {{1}, {1}};
  dag.edges = {{0, 2, 0}};
  expect_invalid(dag, "edge 0 (0 -> 2): task index out of range (2 tasks)");
}

TEST(ScheduleMathErrorTest, SelfEdgeIsRejected) {
  Dag dag;
  dag.cost = {{1}, {1}};
  dag.edges = {{1, 1, 0}};
  expect_invalid(dag, "self-edge on task 1");
}

TEST(ScheduleMathErrorTest, CycleIsRejected) {
  Dag dag;
  dag.cost = {{1}, {1}, {1}, {1}};
  dag.edges = {{0, 1, 0}, {1, 2, 0}, {2, 3, 0}, {3, 1, 0}};
  auto b = bounds(dag);
  ASSERT_FALSE(b.has_value());
  EXPECT_THAT(b.error().message, HasSubstr("cycle through task"));
  const std::string message = b.error().message;
  const std::string task = message.substr(message.rfind(' ') + 1);
  EXPECT_TRUE(task == "1" || task == "2" || task == "3") << message;
  expect_invalid(dag, "cycle");
}

TEST(ScheduleMathErrorTest, NegativeCostIsRejected) {
  Dag dag;
  dag.cost = {{1, -1}};
  expect_invalid(dag, "cost[0][1] is negative");
  dag.cost = {{1, -kInf}};
  expect_invalid(dag, "cost[0][1] is negative");
}

TEST(ScheduleMathErrorTest, NanCostIsRejected) {
  Dag dag;
  dag.cost = {{1, std::nan("")}};
  expect_invalid(dag, "cost[0][1] is NaN");
}

TEST(ScheduleMathErrorTest, TaskNoProcessorCanRunIsRejected) {
  Dag dag;
  dag.cost = {{1, 1}, {kInf, kInf}};
  expect_invalid(dag, "task 1: no processor can run it");
}

TEST(ScheduleMathErrorTest, NegativeOrNanCommunicationIsRejected) {
  Dag dag;
  dag.cost = {{1}, {1}};
  dag.edges = {{0, 1, -1}};
  expect_invalid(dag, "communication cost must be finite");
  dag.edges = {{0, 1, std::nan("")}};
  expect_invalid(dag, "communication cost must be finite");
}

TEST(ScheduleSimplexTest, RejectsNonFiniteCoefficients) {
  detail::LinearProgram lp;
  lp.a = {{1, 1}};
  lp.b = {std::numeric_limits<double>::infinity()};
  lp.c = {1, 1};
  auto s = detail::solve_lp(lp);
  ASSERT_THAT(s, StatusIs(Errc::kInvalidArgument));
  EXPECT_NE(s.error().message.find("finite"), std::string::npos);
}

TEST(ScheduleSimplexTest, SolvesASmallLinearProgram) {
  // min -x - y s.t. x + 2y + s1 = 4, 3x + y + s2 = 6: optimum at x = 8/5, y = 6/5.
  detail::LinearProgram lp;
  lp.a = {{1, 2, 1, 0}, {3, 1, 0, 1}};
  lp.b = {4, 6};
  lp.c = {-1, -1, 0, 0};
  auto s = detail::solve_lp(lp);
  ASSERT_THAT(s, IsOk());
  EXPECT_NEAR(s->objective, -14.0 / 5, 1e-12);
  EXPECT_NEAR(s->x[0], 8.0 / 5, 1e-12);
  EXPECT_NEAR(s->x[1], 6.0 / 5, 1e-12);
  // y.A_B = c_B for the basic x and y, and b.y is the optimum.
  EXPECT_THAT(s->duals, ElementsAre(DoubleNear(-2.0 / 5, 1e-12), DoubleNear(-1.0 / 5, 1e-12)));
}

TEST(ScheduleSimplexTest, BealesCyclingExampleTerminatesAtTheOptimum) {
  // Beale (1955): Dantzig's rule with naive ties cycles here; the optimum is -1/20.
  detail::LinearProgram lp;
  lp.a = {
      {1, 0, 0, 0.25, -60, -1.0 / 25, 9}, {0, 1, 0, 0.5, -90, -1.0 / 50, 3}, {0, 0, 1, 0, 0, 1, 0}};
  lp.b = {0, 0, 1};
  lp.c = {0, 0, 0, -0.75, 150, -1.0 / 50, 6};
  auto s = detail::solve_lp(lp);
  ASSERT_THAT(s, IsOk());
  EXPECT_NEAR(s->objective, -0.05, 1e-12);
}

TEST(ScheduleSimplexTest, InfeasibleAndUnboundedProgramsAreErrors) {
  detail::LinearProgram infeasible;
  infeasible.a = {{1, 1}, {1, 1}};
  infeasible.b = {1, 2};
  infeasible.c = {1, 1};
  auto a = detail::solve_lp(infeasible);
  ASSERT_FALSE(a.has_value());
  EXPECT_THAT(a.error().message, HasSubstr("infeasible"));

  detail::LinearProgram unbounded;
  unbounded.a = {{1, -1}};
  unbounded.b = {1};
  unbounded.c = {-1, 0};
  auto b = detail::solve_lp(unbounded);
  ASSERT_FALSE(b.has_value());
  EXPECT_THAT(b.error().message, HasSubstr("unbounded"));

  detail::LinearProgram ragged;
  ragged.a = {{1, 1}, {1}};
  ragged.b = {1, 1};
  ragged.c = {1, 1};
  auto c = detail::solve_lp(ragged);
  ASSERT_FALSE(c.has_value());
  EXPECT_THAT(c.error().message, HasSubstr("row 1 has 1 coefficients"));
}

TEST(ScheduleSimplexTest, RedundantEqualityRowsAndNegativeRightHandSidesAreHandled) {
  // x + y = 2 twice, and -x = -0.5: x = 0.5, y = 1.5, minimise y.
  detail::LinearProgram lp;
  lp.a = {{1, 1}, {1, 1}, {-1, 0}};
  lp.b = {2, 2, -0.5};
  lp.c = {0, 1};
  auto s = detail::solve_lp(lp);
  ASSERT_THAT(s, IsOk());
  EXPECT_NEAR(s->objective, 1.5, 1e-12);
  EXPECT_NEAR(s->x[0], 0.5, 1e-12);
}

}  // namespace
}  // namespace acco::sched
