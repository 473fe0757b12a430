#include "acco/sched/schedule_math.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "simplex.hpp"

namespace acco::sched {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Arc {
  std::size_t task = 0;
  double comm = 0;
};

// The DAG checked and indexed once: adjacency both ways, a topological order, mean costs.
struct Graph {
  std::size_t tasks = 0;
  std::size_t processors = 0;
  std::vector<std::vector<Arc>> succ;
  std::vector<std::vector<Arc>> pred;
  std::vector<std::size_t> topo;
  std::vector<double> mean_cost;  // over the processors that can run the task
};

std::string edge_label(std::size_t k, const DagEdge& e) {
  return "edge " + std::to_string(k) + " (" + std::to_string(e.from) + " -> " +
         std::to_string(e.to) + ")";
}

Status check_costs(const Dag& dag) {
  if (dag.cost.empty()) {
    return fail(Errc::kInvalidArgument, "cost matrix is empty (no tasks)");
  }
  const std::size_t q = dag.cost[0].size();
  if (q == 0) {
    return fail(Errc::kInvalidArgument, "cost row 0 is empty (no processors)");
  }
  for (std::size_t i = 0; i < dag.cost.size(); ++i) {
    const std::vector<double>& row = dag.cost[i];
    if (row.size() != q) {
      return fail(Errc::kInvalidArgument, "cost row " + std::to_string(i) + " has " +
                                              std::to_string(row.size()) + " entries, expected " +
                                              std::to_string(q) + " (ragged cost matrix)");
    }
    bool runnable = false;
    for (std::size_t p = 0; p < q; ++p) {
      const std::string where = "cost[" + std::to_string(i) + "][" + std::to_string(p) + "]";
      if (std::isnan(row[p])) {
        return fail(Errc::kInvalidArgument, where + " is NaN");
      }
      if (row[p] < 0) {
        return fail(Errc::kInvalidArgument, where + " is negative");
      }
      runnable = runnable || std::isfinite(row[p]);
    }
    if (!runnable) {
      return fail(Errc::kInvalidArgument,
                  "task " + std::to_string(i) + ": no processor can run it (every cost infinite)");
    }
  }
  return {};
}

Result<Graph> analyse(const Dag& dag) {
  ACCO_RETURN_IF_ERROR(check_costs(dag), "dag");
  Graph g;
  g.tasks = dag.cost.size();
  g.processors = dag.cost[0].size();
  g.succ.resize(g.tasks);
  g.pred.resize(g.tasks);
  std::vector<std::size_t> indegree(g.tasks, 0);
  for (std::size_t k = 0; k < dag.edges.size(); ++k) {
    const DagEdge& e = dag.edges[k];
    if (e.from >= g.tasks || e.to >= g.tasks) {
      return fail(Errc::kInvalidArgument, "dag: " + edge_label(k, e) +
                                              ": task index out of range (" +
                                              std::to_string(g.tasks) + " tasks)");
    }
    if (e.from == e.to) {
      return fail(Errc::kInvalidArgument,
                  "dag: " + edge_label(k, e) + ": self-edge on task " + std::to_string(e.from));
    }
    if (!(e.comm >= 0) || std::isinf(e.comm)) {
      return fail(Errc::kInvalidArgument,
                  "dag: " + edge_label(k, e) + ": communication cost must be finite and >= 0");
    }
    g.succ[e.from].push_back({e.to, e.comm});
    g.pred[e.to].push_back({e.from, e.comm});
    ++indegree[e.to];
  }
  // Kahn's algorithm, smallest index first so the order is reproducible.
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < g.tasks; ++i) {
    if (indegree[i] == 0) {
      ready.push(i);
    }
  }
  while (!ready.empty()) {
    const std::size_t i = ready.top();
    ready.pop();
    g.topo.push_back(i);
    for (const Arc& a : g.succ[i]) {
      if (--indegree[a.task] == 0) {
        ready.push(a.task);
      }
    }
  }
  if (g.topo.size() != g.tasks) {
    // Walking back through unfinished predecessors from any unfinished task ends up on a cycle
    // after at most `tasks` steps.
    std::size_t at = 0;
    while (indegree[at] == 0) {
      ++at;
    }
    for (std::size_t step = 0; step < g.tasks; ++step) {
      for (const Arc& a : g.pred[at]) {
        if (indegree[a.task] != 0) {
          at = a.task;
          break;
        }
      }
    }
    return fail(Errc::kInvalidArgument,
                "dag: the edges form a cycle through task " + std::to_string(at));
  }
  g.mean_cost.resize(g.tasks);
  for (std::size_t i = 0; i < g.tasks; ++i) {
    double sum = 0;
    double count = 0;
    for (double c : dag.cost[i]) {
      if (std::isfinite(c)) {
        sum += c;
        count += 1;
      }
    }
    g.mean_cost[i] = sum / count;
  }
  return g;
}

// `cost` per task: the mean over the processors (HEFT) or the fastest one's.
std::vector<double> rank_upward(const Graph& g, const std::vector<double>& cost) {
  std::vector<double> rank(g.tasks, 0);
  for (auto it = g.topo.rbegin(); it != g.topo.rend(); ++it) {
    double tail = 0;
    for (const Arc& a : g.succ[*it]) {
      tail = std::max(tail, a.comm + rank[a.task]);
    }
    rank[*it] = cost[*it] + tail;
  }
  return rank;
}
std::vector<double> rank_upward(const Graph& g) {
  return rank_upward(g, g.mean_cost);
}

std::vector<double> best_costs(const Dag& dag) {
  std::vector<double> best;
  best.reserve(dag.cost.size());
  for (const std::vector<double>& row : dag.cost) {
    best.push_back(*std::min_element(row.begin(), row.end()));  // analyse: one is finite
  }
  return best;
}

std::vector<double> rank_downward(const Graph& g) {
  std::vector<double> rank(g.tasks, 0);
  for (std::size_t i : g.topo) {
    double head = 0;
    for (const Arc& a : g.pred[i]) {
      head = std::max(head, rank[a.task] + g.mean_cost[a.task] + a.comm);
    }
    rank[i] = head;
  }
  return rank;
}

// Priorities for ordering: ranks rounded to a grid of 1e-9 of the largest, so that sums which
// are equal on paper but differ in the last bits (80 and 80 + 1e-14) tie, and ties go to the
// lower task index as the list schedulers specify. Rounding keeps a strict weak order.
std::vector<double> tie_keys(const std::vector<double>& priority) {
  double largest = 0;
  for (double p : priority) {
    largest = std::max(largest, std::abs(p));
  }
  if (largest == 0) {
    return priority;
  }
  const double grid = largest * 1e-9;
  std::vector<double> keys;
  keys.reserve(priority.size());
  for (double p : priority) {
    keys.push_back(std::round(p / grid));
  }
  return keys;
}

// Whether `a` is earlier than `b` by more than rounding noise, so near-equal finish times go to
// the lower processor index.
bool clearly_less(double a, double b) {
  return std::isinf(b) ? a < b : a < b - 1e-9 * std::abs(b);
}

struct Slot {
  double start = 0;
  double finish = 0;
};

// Insertion policy: the earliest idle gap on the processor, at or after `ready`, that holds
// `duration`; the gap after the last slot is unbounded. Slots are sorted by start.
double earliest_start(const std::vector<Slot>& slots, double ready, double duration) {
  double start = ready;
  for (const Slot& slot : slots) {
    if (start + duration <= slot.start) {
      return start;
    }
    start = std::max(start, slot.finish);
  }
  return start;
}

// List scheduling shared by HEFT and CPOP: repeatedly takes the ready task of highest priority
// (ties: lower index) and places it, with insertion, on pinned[i] when that processor can run
// it, otherwise on the processor of earliest finish (ties: lower index).
StaticSchedule list_schedule(const Dag& dag, const Graph& g, const std::vector<double>& rank,
                             const std::vector<std::size_t>& pinned) {
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  const std::vector<double> priority = tie_keys(rank);
  StaticSchedule s;
  s.tasks.resize(g.tasks);
  std::vector<std::vector<Slot>> slots(g.processors);
  auto lower = [&priority](std::size_t a, std::size_t b) {
    return priority[a] < priority[b] || (priority[a] == priority[b] && a > b);
  };
  std::priority_queue<std::size_t, std::vector<std::size_t>, decltype(lower)> ready(lower);
  std::vector<std::size_t> waiting(g.tasks);
  for (std::size_t i = 0; i < g.tasks; ++i) {
    waiting[i] = g.pred[i].size();
    if (waiting[i] == 0) {
      ready.push(i);
    }
  }
  while (!ready.empty()) {
    const std::size_t i = ready.top();
    ready.pop();
    std::size_t best = kNone;
    double best_start = 0;
    double best_finish = kInf;
    for (std::size_t p = 0; p < g.processors; ++p) {
      const double w = dag.cost[i][p];
      if (!std::isfinite(w)) {
        continue;
      }
      if (pinned[i] != kNone && pinned[i] != p && std::isfinite(dag.cost[i][pinned[i]])) {
        continue;
      }
      double data_ready = 0;
      for (const Arc& a : g.pred[i]) {
        const Placement& from = s.tasks[a.task];
        data_ready = std::max(data_ready, from.finish + (from.processor == p ? 0 : a.comm));
      }
      const double start = earliest_start(slots[p], data_ready, w);
      if (best == kNone || clearly_less(start + w, best_finish)) {
        best = p;
        best_start = start;
        best_finish = start + w;
      }
    }
    ACCO_CHECK(best != kNone);
    s.tasks[i] = Placement{best, best_start, best_finish};
    std::vector<Slot>& on = slots[best];
    const Slot slot{best_start, best_finish};
    on.insert(std::upper_bound(on.begin(), on.end(), slot,
                               [](const Slot& a, const Slot& b) {
                                 return a.start < b.start ||
                                        (a.start == b.start && a.finish < b.finish);
                               }),
              slot);
    s.order.push_back(i);
    s.makespan = std::max(s.makespan, best_finish);
    for (const Arc& a : g.succ[i]) {
      if (--waiting[a.task] == 0) {
        ready.push(a.task);
      }
    }
  }
  ACCO_CHECK(s.order.size() == g.tasks);
  return s;
}

double critical_path(const Dag& dag, const Graph& g) {
  std::vector<double> finish(g.tasks, 0);
  double longest = 0;
  for (std::size_t i : g.topo) {
    double start = 0;
    for (const Arc& a : g.pred[i]) {
      start = std::max(start, finish[a.task]);
    }
    finish[i] = start + *std::min_element(dag.cost[i].begin(), dag.cost[i].end());
    longest = std::max(longest, finish[i]);
  }
  return longest;
}

// The area bound: min T such that every task is split over the processors that can run it
// (fractions summing to 1) and no processor's share of work exceeds T. Tasks with the same cost
// row form one group of n_g tasks, whose work on p is w_gp = n_g c_gp (scaled by the largest so
// the LPs stay near 1).
//
// A direct LP has (groups x processors) variables, too many for a dense simplex on a random DAG
// of 1000 distinct rows. Its constraint set per group is a simplex whose vertices put the whole
// group on one processor, so by Dantzig-Wolfe decomposition the LP is
//   min T  s.t.  sum_k mu_k L^k_p <= T for every p,  sum_k mu_k = 1,  mu >= 0
// over assignments k (every group on one processor, loads L^k_p). Column generation solves it
// with q + 1 rows: given the master's load-row duals lambda_p (>= 0, summing to 1), the best new
// assignment puts each group on its processor of least lambda_p w_gp, and
//   f(lambda) = sum_g min_p lambda_p w_gp
// is a lower bound on the area by weak duality while the master's T is an upper bound. Columns
// are added until the two meet; the lower one is returned, so it stays a valid bound.
Result<double> area_bound(const Dag& dag) {
  std::map<std::vector<double>, double> groups;
  for (const std::vector<double>& row : dag.cost) {
    groups[row] += 1;
  }
  const std::size_t q = dag.cost[0].size();
  double scale = 0;
  for (const auto& [row, count] : groups) {
    for (double c : row) {
      if (std::isfinite(c)) {
        scale = std::max(scale, count * c);
      }
    }
  }
  if (scale == 0) {
    return 0.0;
  }
  std::vector<std::vector<double>> work;  // [group][p], +infinity where p cannot run it
  for (const auto& [row, count] : groups) {
    std::vector<double> w(q);
    for (std::size_t p = 0; p < q; ++p) {
      w[p] = std::isfinite(row[p]) ? count * row[p] / scale : kInf;
    }
    work.push_back(std::move(w));
  }
  // f(lambda), and the loads of the assignment that attains it (ties: lower processor).
  auto price = [&work, q](const std::vector<double>& lambda, std::vector<double>& loads) {
    loads.assign(q, 0);
    double value = 0;
    for (const std::vector<double>& w : work) {
      std::size_t best = q;
      for (std::size_t p = 0; p < q; ++p) {
        if (std::isfinite(w[p]) && (best == q || w[p] * lambda[p] < w[best] * lambda[best])) {
          best = p;
        }
      }
      loads[best] += w[best];
      value += w[best] * lambda[best];
    }
    return value;
  };
  std::vector<std::vector<double>> columns;
  std::vector<double> loads;
  std::vector<double> lambda(q, 1.0 / static_cast<double>(q));
  double lower = price(lambda, loads);
  columns.push_back(loads);
  constexpr std::size_t kMaxColumns = 100000;
  while (columns.size() < kMaxColumns) {
    // Master columns: mu_k, then T, then one slack per load row; rows: q loads, convexity.
    const std::size_t k = columns.size();
    const std::size_t t_col = k;
    detail::LinearProgram master;
    master.c.assign(k + 1 + q, 0);
    master.c[t_col] = 1;
    for (std::size_t p = 0; p < q; ++p) {
      std::vector<double> row(k + 1 + q, 0);
      for (std::size_t j = 0; j < k; ++j) {
        row[j] = columns[j][p];
      }
      row[t_col] = -1;
      row[t_col + 1 + p] = 1;
      master.a.push_back(std::move(row));
      master.b.push_back(0);
    }
    std::vector<double> convexity(k + 1 + q, 0);
    std::fill(convexity.begin(), convexity.begin() + static_cast<std::ptrdiff_t>(k), 1.0);
    master.a.push_back(std::move(convexity));
    master.b.push_back(1);
    ACCO_ASSIGN_OR_RETURN(const detail::LpSolution solution, detail::solve_lp(master),
                          "area bound");
    const double upper = solution.objective;
    double total = 0;
    for (std::size_t p = 0; p < q; ++p) {
      lambda[p] = std::max(0.0, -solution.duals[p]);
      total += lambda[p];
    }
    if (total > 0) {
      for (double& l : lambda) {
        l /= total;
      }
      lower = std::max(lower, price(lambda, loads));
    }
    if (upper - lower <= 1e-10 * upper || total == 0) {
      return lower * scale;
    }
    columns.push_back(loads);
  }
  return fail(Errc::kInternal,
              "area bound: no convergence after " + std::to_string(kMaxColumns) + " columns");
}

}  // namespace

Result<Bounds> bounds(const Dag& dag) {
  ACCO_ASSIGN_OR_RETURN(const Graph g, analyse(dag));
  Bounds b;
  b.critical_path = critical_path(dag, g);
  ACCO_ASSIGN_OR_RETURN(b.area, area_bound(dag));
  return b;
}

Result<std::vector<double>> upward_ranks(const Dag& dag, RankCost cost) {
  return analyse(dag).transform([&](const Graph& g) {
    return cost == RankCost::kMean ? rank_upward(g) : rank_upward(g, best_costs(dag));
  });
}

Result<StaticSchedule> heft(const Dag& dag) {
  ACCO_ASSIGN_OR_RETURN(const Graph g, analyse(dag));
  std::vector<double> rank = rank_upward(g);
  // With positive costs, decreasing rank_u is a topological order and the ready task of highest
  // rank is the highest of all unscheduled ones, as in the paper; the ready queue also keeps
  // zero-cost ties in dependency order.
  StaticSchedule s = list_schedule(
      dag, g, rank, std::vector<std::size_t>(g.tasks, std::numeric_limits<std::size_t>::max()));
  s.rank_u = std::move(rank);
  return s;
}

Result<StaticSchedule> cpop(const Dag& dag) {
  ACCO_ASSIGN_OR_RETURN(const Graph g, analyse(dag));
  std::vector<double> up = rank_upward(g);
  const std::vector<double> down = rank_downward(g);
  std::vector<double> rank_sum(g.tasks);
  for (std::size_t i = 0; i < g.tasks; ++i) {
    rank_sum[i] = up[i] + down[i];
  }
  const std::vector<double> priority = tie_keys(rank_sum);
  // The critical path: from the entry task of highest priority, follow the successor of highest
  // priority (ties: lower index) to an exit task.
  std::size_t at = g.tasks;
  for (std::size_t i = 0; i < g.tasks; ++i) {
    if (g.pred[i].empty() && (at == g.tasks || priority[i] > priority[at])) {
      at = i;
    }
  }
  std::vector<std::size_t> path{at};
  while (!g.succ[at].empty()) {
    std::size_t next = g.succ[at].front().task;
    for (const Arc& a : g.succ[at]) {
      if (priority[a.task] > priority[next] ||
          (priority[a.task] == priority[next] && a.task < next)) {
        next = a.task;
      }
    }
    at = next;
    path.push_back(at);
  }
  // p_CP runs the whole path fastest. A path task p_CP cannot run goes to its best processor.
  std::size_t p_cp = 0;
  double best_sum = kInf;
  for (std::size_t p = 0; p < g.processors; ++p) {
    double sum = 0;
    for (std::size_t i : path) {
      sum += dag.cost[i][p];
    }
    if (p == 0 || clearly_less(sum, best_sum)) {
      best_sum = sum;
      p_cp = p;
    }
  }
  std::vector<std::size_t> pinned(g.tasks, std::numeric_limits<std::size_t>::max());
  for (std::size_t i : path) {
    pinned[i] = p_cp;
  }
  StaticSchedule s = list_schedule(dag, g, rank_sum, pinned);
  s.rank_u = std::move(up);
  return s;
}

}  // namespace acco::sched
