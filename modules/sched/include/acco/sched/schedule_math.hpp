// Static scheduling mathematics on explicit DAGs: lower bounds on the makespan (critical path and
// area) and the HEFT and CPOP list schedulers of Topcuoglu, Hariri and Wu (IEEE TPDS 13(3), 2002).
// Pure functions on values: the `heft` policy, `acco schedule` and the benchmarks use them.
#pragma once

#include <cstddef>
#include <vector>

#include "acco/core/result.hpp"

namespace acco::sched {

// cost[i][p]: run time of task i on processor p (seconds or any unit, consistently);
// +infinity where p cannot run i. Edges carry the communication cost paid when the two ends run
// on different processors (0 on the same one).
struct DagEdge {
  std::size_t from = 0;
  std::size_t to = 0;
  double comm = 0;
  bool operator==(const DagEdge&) const = default;
};
struct Dag {
  std::vector<std::vector<double>> cost;
  std::vector<DagEdge> edges;
};

struct Bounds {
  double critical_path = 0;  // longest path, each task at its fastest processor, no comm
  double area = 0;           // LP: work spread fractionally over processors, no dependencies
  [[nodiscard]] double best() const { return critical_path > area ? critical_path : area; }
};
// The area is an LP over tasks grouped by identical cost rows, solved exactly (to 1e-10
// relative, and never above the true optimum) by column generation on a small dense simplex.
// kInvalidArgument for an empty or ragged cost matrix, an edge out of range, a self-edge, a
// cycle, a negative or NaN cost, a negative or non-finite comm, or a task no processor can run;
// kInternal if the LP fails to converge.
[[nodiscard]] Result<Bounds> bounds(const Dag& dag);

struct Placement {
  std::size_t processor = 0;
  double start = 0;
  double finish = 0;
  bool operator==(const Placement&) const = default;
};
struct StaticSchedule {
  std::vector<Placement> tasks;    // indexed like Dag::cost
  std::vector<double> rank_u;      // upward ranks (mean costs)
  std::vector<std::size_t> order;  // tasks in the order they were scheduled
  double makespan = 0;
};
// Insertion-based HEFT. Ties: ranks equal to 1e-9 of the largest go to the lower task index,
// finish times equal to 1e-9 relative to the lower processor index. Same errors as bounds().
[[nodiscard]] Result<StaticSchedule> heft(const Dag& dag);
// CPOP: critical-path tasks on the one processor that runs them fastest in total (a path task
// that processor cannot run goes to its earliest-finish processor). Same ties and errors.
[[nodiscard]] Result<StaticSchedule> cpop(const Dag& dag);
// Upward ranks alone: the longest path to an exit, each task counted at its mean cost over the
// processors that can run it (kMean, HEFT's rank_u) or at its fastest processor's (kBest, the
// bottom level when every task runs where it is fastest), with the edges' comm. On machines
// whose processors differ widely per task type, mean costs rank a chain of tasks that one slow
// processor would run badly (a CPU's GEMMs) above the real critical path; kBest does not.
enum class RankCost {
  kMean,
  kBest
};
[[nodiscard]] Result<std::vector<double>> upward_ranks(const Dag& dag,
                                                       RankCost cost = RankCost::kMean);

}  // namespace acco::sched
