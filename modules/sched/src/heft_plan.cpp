// A graph submitted whole: a HEFT plan when the policy plans graphs, else priorities from
// upward ranks, both from the current models.
#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

#include "acco/sched/schedule_math.hpp"

#include "runtime_core.hpp"

namespace acco::sched::detail {

// HEFT plan (policies that plan graphs) or upward-rank priorities (others) for a graph, from the
// current models.
void RuntimeCore::plan_graph(TaskId first, TaskId end) {
  const std::size_t n = end - first;
  const std::size_t p = devices_.size();
  if (n == 0) {
    return;
  }
  Dag dag;
  dag.cost.assign(n, std::vector<double>(p, std::numeric_limits<double>::infinity()));
  for (std::size_t i = 0; i < n; ++i) {
    const TaskState& t = state(first + i);
    std::vector<double> known;
    for (std::size_t d = 0; d < p; ++d) {
      if (!eligible(static_cast<int>(d), t)) {
        continue;
      }
      if (auto pred = predict(static_cast<int>(d), t)) {
        dag.cost[i][d] = std::chrono::duration<double>(pred->time).count() /
                         (devices_[d]->weight * devices_[d]->headroom);
        known.push_back(dag.cost[i][d] * devices_[d]->relative_speed);
      }
    }
    // Unknown somewhere: the other devices' figure scaled by relative speed, or 1 ms.
    const double base = known.empty() ? 1e-3
                                      : std::accumulate(known.begin(), known.end(), 0.0) /
                                            static_cast<double>(known.size());
    for (std::size_t d = 0; d < p; ++d) {
      if (eligible(static_cast<int>(d), t) &&
          dag.cost[i][d] == std::numeric_limits<double>::infinity()) {
        dag.cost[i][d] = base / devices_[d]->relative_speed;
      }
    }
    if (std::all_of(dag.cost[i].begin(), dag.cost[i].end(),
                    [](double c) { return c == std::numeric_limits<double>::infinity(); })) {
      // Every device able to run it is drained: plan it on the first capable one.
      for (std::size_t d = 0; d < p; ++d) {
        if (codelets_.at(t.codelet.get()).impl[d] >= 0 && !devices_[d]->failed) {
          dag.cost[i][d] = 1e-3;
          break;
        }
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (const auto& [s, inherits_failure] : state(first + i).dependents) {
      if (s >= first && s < end) {
        // Bytes it reads from this task's writes, over the average link.
        double bytes = 0;
        for (const auto& [h, mode] : state(s).accesses) {
          if (reads(mode) &&
              std::any_of(state(first + i).accesses.begin(), state(first + i).accesses.end(),
                          [&, handle = h](const auto& a) {
                            return a.first == handle && writes(a.second);
                          })) {
            bytes += static_cast<double>(handles_[h].bytes);
          }
        }
        double rate = 0;
        double latency = 0;
        for (const auto& d : devices_) {
          rate += d->copy_cost.link_rate();
          latency += d->copy_cost.latency_s();
        }
        rate /= static_cast<double>(p);
        latency /= static_cast<double>(p);
        dag.edges.push_back({i, s - first, bytes > 0 ? latency + bytes / rate : 0});
      }
    }
  }
  std::vector<double> rank;
  if (policy_->plans_graphs()) {
    auto plan = heft(dag);
    if (!plan) {
      return;  // validated above; a plan that cannot be made leaves dmda in charge
    }
    std::vector<std::size_t> by_start(n);
    std::iota(by_start.begin(), by_start.end(), 0);
    std::stable_sort(by_start.begin(), by_start.end(), [&](std::size_t a, std::size_t b) {
      return plan->tasks[a].start < plan->tasks[b].start;
    });
    for (std::size_t k = 0; k < n; ++k) {
      TaskState& t = state(first + by_start[k]);
      t.planned = static_cast<int>(plan->tasks[by_start[k]].processor);
      t.priority = static_cast<int>(n - k);
    }
    return;
  }
  // Priorities for the dynamic policies: the critical path when every task runs where it is
  // fastest, which is where dmda sends it when that device is free. Mean-cost ranks, as HEFT
  // uses, count a CPU's much slower kernels and let the off-critical work of earlier steps
  // outrank the critical chain (docs/scheduler.md, "Design notes").
  auto ranks = upward_ranks(dag, RankCost::kBest);
  if (!ranks) {
    return;
  }
  std::vector<std::size_t> by_rank(n);
  std::iota(by_rank.begin(), by_rank.end(), 0);
  std::stable_sort(by_rank.begin(), by_rank.end(),
                   [&](std::size_t a, std::size_t b) { return (*ranks)[a] > (*ranks)[b]; });
  for (std::size_t k = 0; k < n; ++k) {
    TaskState& t = state(first + by_rank[k]);
    if (t.priority == 0) {
      t.priority = static_cast<int>(n - k);
    }
  }
}

}  // namespace acco::sched::detail
