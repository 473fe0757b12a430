// Task Bench's patterns as graphs: task and edge counts worked out by hand from core.cc's rules.
#include "acco/sim/taskbench.hpp"

#include <algorithm>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/sim/simulate.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::sim {
namespace {

using ::acco::testing::IsOk;
using ::testing::HasSubstr;

std::pair<std::size_t, std::size_t> shape(Pattern pattern, int width, int steps, int radix = 3) {
  TaskBenchSpec s;
  s.pattern = pattern;
  s.width = width;
  s.steps = steps;
  s.radix = radix;
  const auto w = task_bench(s);
  EXPECT_THAT(w, IsOk());
  return w ? std::pair{w->tasks.size(), sched::infer_edges(*w).size()} : std::pair{0UL, 0UL};
}

TEST(TaskBenchTest, EachPatternHasTheTasksAndEdgesOfItsRule) {
  using P = std::pair<std::size_t, std::size_t>;
  EXPECT_EQ(shape(Pattern::kTrivial, 4, 3), P(12, 0));
  EXPECT_EQ(shape(Pattern::kNoComm, 4, 3), P(12, 8));
  // Inner points read three, the two edge points two: 10 a step.
  EXPECT_EQ(shape(Pattern::kStencil1d, 4, 3), P(12, 20));
  EXPECT_EQ(shape(Pattern::kStencil1dPeriodic, 4, 3), P(12, 24));
  // Widths 1, 2, 3, 2, 1 (offsets 0, 0, 0, 1, 2); each point reads p-1 and p where alive at
  // t - 1: 2, then 1 + 2 + 1, then 2 + 2, then 2 reads.
  EXPECT_EQ(shape(Pattern::kDom, 3, 5), P(9, 12));
  // Widths 1, 2, 4, 8: every task but the root reads its parent.
  EXPECT_EQ(shape(Pattern::kTree, 8, 4), P(15, 14));
  // Strides 1, 2, 4: 8 + 2 x (8 - stride) reads a step.
  EXPECT_EQ(shape(Pattern::kFft, 8, 4), P(32, (8 + 14) + (8 + 12) + (8 + 8)));
  EXPECT_EQ(shape(Pattern::kAllToAll, 4, 2), P(8, 16));
  // radix 3 around p (p-1..p+1 clipped), and spread over the width (p, p+2, p+4 mod 6).
  EXPECT_EQ(shape(Pattern::kNearest, 4, 2), P(8, 10));
  EXPECT_EQ(shape(Pattern::kSpread, 6, 2, 3), P(12, 18));
}

// The edges of a random pattern on 64 points, 10 steps, radix 5, at `fraction`.
std::size_t random_edges(Pattern pattern, double fraction) {
  TaskBenchSpec s;
  s.pattern = pattern;
  s.width = 64;
  s.steps = 10;
  s.radix = 5;
  s.fraction = fraction;
  const auto w = task_bench(s);
  EXPECT_THAT(w, IsOk());
  return w ? sched::infer_edges(*w).size() : 0;
}

// random_nearest keeps each task's own point and each other of its radix with the fraction's
// probability: none at 0 (no_comm's edges), all at 1 (nearest's), between in between, the same
// graph each time.
TEST(TaskBenchTest, RandomNearestKeepsAFractionOfNearestsEdges) {
  const auto edges = [](double fraction) {
    return random_edges(Pattern::kRandomNearest, fraction);
  };
  EXPECT_EQ(edges(0), shape(Pattern::kNoComm, 64, 10).second);
  EXPECT_EQ(edges(1), shape(Pattern::kNearest, 64, 10, 5).second);
  const auto half = edges(0.5);
  EXPECT_EQ(half, edges(0.5));
  // 9 steps of 64 points: 576 own points and about half of the other 4 x 576 - 18 clipped.
  EXPECT_GT(half, 576 + 900);
  EXPECT_LT(half, 576 + 1400);
  TaskBenchSpec bad;
  bad.pattern = Pattern::kRandomNearest;
  bad.fraction = 1.5;
  EXPECT_EQ(task_bench(bad).error().message, "fraction 1.5 is not 0 to 1");
}

TEST(TaskBenchTest, RandomSpreadKeepsAFractionOfSpreadsEdges) {
  const auto edges = [](double fraction) { return random_edges(Pattern::kRandomSpread, fraction); };
  // Fraction 0: each point reads only its own (spread's first point is p itself); 1: spread.
  EXPECT_EQ(edges(0), shape(Pattern::kNoComm, 64, 10).second);
  EXPECT_EQ(edges(1), shape(Pattern::kSpread, 64, 10, 5).second);
  const auto half = edges(0.5);
  EXPECT_EQ(half, edges(0.5));  // the same graph for the same spec
  // 9 steps of 64 points: 576 own points and about half of the other 4 x 576.
  EXPECT_GT(half, 576 + 900);
  EXPECT_LT(half, 576 + 1400);
  EXPECT_EQ(*parse_pattern("random_spread"), Pattern::kRandomSpread);
  TaskBenchSpec spec;
  EXPECT_FALSE(draws_at_random(spec));  // stencil_1d, compute_bound
  spec.kernel = Kernel::kLoadImbalance;
  EXPECT_TRUE(draws_at_random(spec));
  spec = {};
  spec.pattern = Pattern::kRandomSpread;
  EXPECT_TRUE(draws_at_random(spec));
}

TEST(TaskBenchTest, KernelsSetEachTasksTime) {
  const auto times = [](Kernel kernel, double imbalance) {
    TaskBenchSpec s;
    s.kernel = kernel;
    s.seconds = 2e-3;
    s.imbalance = imbalance;
    s.width = 16;
    s.steps = 16;
    std::vector<double> out;
    const auto w = task_bench(s);
    EXPECT_THAT(w, IsOk());
    for (const auto& t : w ? w->tasks : std::vector<sched::WorkTask>{}) {
      out.push_back(t.seconds.front());
    }
    return out;
  };
  for (const double t : times(Kernel::kComputeBound, 0.5)) {
    EXPECT_EQ(t, 2e-3);
  }
  for (const double t : times(Kernel::kEmpty, 0.5)) {
    EXPECT_EQ(t, 0);
  }
  const auto imbalanced = times(Kernel::kLoadImbalance, 0.5);
  const auto [low, high] = std::minmax_element(imbalanced.begin(), imbalanced.end());
  EXPECT_GE(*low, 1e-3);  // 1 - 0.5 x u, u below 1
  EXPECT_LE(*high, 2e-3);
  EXPECT_LT(*high - *low, 1e-3);
  EXPECT_GT(*high - *low, 0.8e-3);  // 256 draws spread over the range
  EXPECT_EQ(imbalanced, times(Kernel::kLoadImbalance, 0.5));
  EXPECT_EQ(*parse_kernel("load_imbalance"), Kernel::kLoadImbalance);
  EXPECT_EQ(to_string(Kernel::kEmpty), "empty");
  EXPECT_EQ(parse_kernel("memory_bound").error().message,
            "'memory_bound' is not a Task Bench kernel: compute_bound, load_imbalance, empty");
  TaskBenchSpec bad;
  bad.imbalance = -0.1;
  EXPECT_EQ(task_bench(bad).error().message, "imbalance -0.1 is not 0 to 1");
}

TEST(TaskBenchTest, NamesAndLimitsAreChecked) {
  EXPECT_EQ(*parse_pattern("all_to_all"), Pattern::kAllToAll);
  EXPECT_EQ(to_string(Pattern::kStencil1dPeriodic), "stencil_1d_periodic");
  EXPECT_THAT(parse_pattern("stencil").error().message,
              HasSubstr("'stencil' is not a Task Bench pattern: trivial, no_comm, stencil_1d"));
  TaskBenchSpec s;
  s.pattern = Pattern::kNearest;
  s.radix = 0;
  ASSERT_FALSE(task_bench(s).has_value());
  EXPECT_EQ(task_bench(s).error().message, "radix 0 is not 1 to the width (8)");
  s = {};
  s.width = 100000;
  s.steps = 1000;
  ASSERT_FALSE(task_bench(s).has_value());
  EXPECT_EQ(task_bench(s).error().message, "100000 x 1000 is more than 10 million tasks");
}

TEST(TaskBenchTest, AStencilRunsOnTwoGpusAtItsCriticalPathWhenCopiesAreFree) {
  Platform p;
  p.node.devices = {"GPU0", "GPU1"};
  p.node.links = {{"a", "pcie", 1e15, 0}, {"b", "pcie", 1e15, 0}};
  p.node.to_host = {{0}, {1}};
  p.node.peer = {{{}, {0, 1}}, {{1, 0}, {}}};
  TaskBenchSpec s;
  s.width = 2;
  s.steps = 5;
  s.seconds = 1;
  s.output_bytes = 1;
  const auto w = task_bench(s);
  ASSERT_THAT(w, IsOk());
  const auto r = simulate(p, *w, {});
  ASSERT_THAT(r, IsOk());
  EXPECT_DOUBLE_EQ(r->critical_path, 5);
  EXPECT_NEAR(r->makespan, 5, 1e-6);
}

}  // namespace
}  // namespace acco::sim
