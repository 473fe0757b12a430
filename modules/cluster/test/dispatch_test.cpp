#include "acco/cluster/dispatch.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/sched/workload.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::cluster {
namespace {

using acco::testing::IsOk;
using sched::Access;

std::vector<sched::DeviceModel> gpus(int n) {
  return std::vector<sched::DeviceModel>(static_cast<std::size_t>(n), sched::DeviceModel{});
}

sched::Workload cholesky(int tiles, int devices) {
  sched::WorkloadSpec spec;
  spec.tiles = tiles;
  spec.tile_bytes = 4096;
  auto w = sched::make_workload(spec, gpus(devices));
  EXPECT_THAT(w, IsOk());
  return *w;
}

std::vector<WorkerInfo> workers(int ranks, int devices_each) {
  std::vector<WorkerInfo> out;
  for (int r = 0; r < ranks; ++r) {
    WorkerInfo w{r, {}};
    for (int d = 0; d < devices_each; ++d) {
      w.devices.push_back(static_cast<std::size_t>(r * devices_each + d));
    }
    out.push_back(w);
  }
  return out;
}

// Plays the workers: every assignment is checked against what each rank holds (an input is held
// there at the version the task reads, or fetched from a rank holding it, or the initial value),
// and tasks end in the order they started, each taking `slowdown[rank]` times its cost.
class Simulation {
 public:
  Simulation(Coordinator& c, const sched::Workload& w, int ranks) : c_(c), w_(w) {
    for (int r = 0; r < ranks; ++r) {
      holds_[r].assign(w.data_bytes.size(), 0);
    }
    std::vector<std::uint32_t> writers(w.data_bytes.size(), 0);
    for (const sched::WorkTask& t : w.tasks) {
      std::vector<std::pair<std::size_t, std::uint32_t>> in;
      for (const auto& [d, mode] : t.accesses) {
        in.emplace_back(d, writers[d]);
      }
      for (const auto& [d, mode] : t.accesses) {
        if (sched::writes(mode)) {
          ++writers[d];
        }
      }
      version_in_.push_back(std::move(in));
    }
  }

  void apply(const Assignment& a, bool resend = false) {
    ASSERT_FALSE(lost_.contains(a.rank)) << "task " << a.task << " given to lost rank " << a.rank;
    const sched::WorkTask& t = w_.tasks[a.task];
    for (std::size_t i = 0; i < t.accesses.size(); ++i) {
      const auto [d, mode] = t.accesses[i];
      const std::uint32_t v = version_in_[a.task][i].second;
      auto f = std::find_if(a.fetches.begin(), a.fetches.end(),
                            [d = d](const Fetch& x) { return x.datum == d; });
      if (f != a.fetches.end()) {
        EXPECT_EQ(f->version, v) << "task " << a.task;
        if (f->from < 0) {
          EXPECT_EQ(v, 0U) << "task " << a.task << " datum " << d;
        } else {
          EXPECT_FALSE(lost_.contains(f->from));
          EXPECT_EQ(holds_[f->from][d], v)
              << "task " << a.task << " datum " << d << " from " << f->from;
        }
        holds_[a.rank][d] = v;
      } else if (!resend && sched::reads(mode)) {
        EXPECT_EQ(holds_[a.rank][d], v)
            << "task " << a.task << " datum " << d << " on rank " << a.rank;
      }
    }
    if (!resend) {
      running_.push_back(a);
      started_.push_back(now_);
      per_rank_[a.rank] += 1;
    }
  }

  // Dispatches and ends tasks until none is left (or `stop_after` have ended), on a virtual
  // clock: a task ends its cost times slowdown[rank] after it was given (every test here has a
  // window of one task per device, so a given task runs at once).
  void run(std::size_t stop_after = SIZE_MAX, const std::map<int, double>& slowdown = {}) {
    std::size_t ended = 0;
    for (int guard = 0; guard < 1000000 && !c_.finished() && ended < stop_after; ++guard) {
      for (const Assignment& a : c_.dispatch()) {
        apply(a);
        const std::size_t device = static_cast<std::size_t>(a.rank) * 2;
        const double factor = slowdown.contains(a.rank) ? slowdown.at(a.rank) : 1.0;
        ends_.push_back(now_ + w_.tasks[a.task].seconds[device] * factor);
      }
      for (const Assignment& a : c_.resend()) {
        apply(a, true);
      }
      for (const auto& [rank, task] : c_.cancels()) {
        ASSERT_THAT(c_.cancelled(rank, task), IsOk());
        const auto it = std::find_if(running_.begin(), running_.end(), [&](const Assignment& x) {
          return x.rank == rank && x.task == task;
        });
        ASSERT_NE(it, running_.end());
        const auto i = it - running_.begin();
        running_.erase(it);
        ends_.erase(ends_.begin() + i);
        started_.erase(started_.begin() + i);
        ++cancelled_;
      }
      if (running_.empty()) {
        ASSERT_TRUE(c_.finished()) << "nothing runs and tasks are left";
        break;
      }
      const auto first =
          static_cast<std::size_t>(std::min_element(ends_.begin(), ends_.end()) - ends_.begin());
      const Assignment a = running_[first];
      now_ = ends_[first];
      const double took = now_ - starts_of(first);
      running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(first));
      ends_.erase(ends_.begin() + static_cast<std::ptrdiff_t>(first));
      const sched::WorkTask& t = w_.tasks[a.task];
      for (std::size_t i = 0; i < t.accesses.size(); ++i) {
        if (sched::writes(t.accesses[i].second)) {
          holds_[a.rank][t.accesses[i].first] = version_in_[a.task][i].second + 1;
        }
      }
      const std::size_t device = static_cast<std::size_t>(a.rank) * 2;
      ASSERT_THAT(c_.done(a.rank, a.task, device, took), IsOk());
      ++ended;
    }
  }

  void lose(int rank) {
    ASSERT_THAT(c_.lost(rank), IsOk());
    lost_.insert(rank);
    for (std::size_t i = running_.size(); i-- > 0;) {
      if (running_[i].rank == rank) {
        running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(i));
        ends_.erase(ends_.begin() + static_cast<std::ptrdiff_t>(i));
        started_.erase(started_.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
    holds_[rank].assign(w_.data_bytes.size(), -1);
  }

  std::map<int, std::size_t> per_rank_;
  std::size_t cancelled_ = 0;

 private:
  Coordinator& c_;
  const sched::Workload& w_;
  std::map<int, std::vector<std::int64_t>> holds_;
  std::vector<std::vector<std::pair<std::size_t, std::uint32_t>>> version_in_;
  double starts_of(std::size_t i) {
    const double at = started_[i];
    started_.erase(started_.begin() + static_cast<std::ptrdiff_t>(i));
    return at;
  }
  std::vector<Assignment> running_;  // with when each was given and when it ends
  std::vector<double> started_;
  std::vector<double> ends_;
  double now_ = 0;
  std::set<int> lost_;
};

TEST(Coordinator, RunsCholeskyOverTwoWorkersWithEveryInputWhereTheTaskRuns) {
  const sched::Workload w = cholesky(5, 4);
  for (DispatchPolicy policy : {DispatchPolicy::kLocality, DispatchPolicy::kRoundRobin}) {
    auto c = Coordinator::make(w, workers(2, 2), {.policy = policy, .window_per_device = 1});
    ASSERT_THAT(c, IsOk());
    Simulation sim(*c, w, 2);
    sim.run();
    EXPECT_TRUE(c->finished()) << to_string(policy);
    EXPECT_EQ(c->reruns(), 0U);
    std::size_t total = 0;
    for (const WorkerStats& s : c->stats()) {
      total += s.tasks;
      EXPECT_GT(s.tasks, 0U) << "rank " << s.rank << " idle under " << to_string(policy);
      EXPECT_DOUBLE_EQ(s.slowdown, 1.0);
      EXPECT_FALSE(s.straggler);
    }
    EXPECT_EQ(total, w.tasks.size());
  }
}

TEST(Coordinator, KeepsAChainWhereItsDataIsWhileRoundRobinMovesItEveryTask) {
  sched::WorkloadSpec spec;
  spec.kind = sched::WorkloadKind::kChain;
  spec.tasks = 20;
  spec.task_bytes = 1 << 20;
  auto w = sched::make_workload(spec, gpus(4));
  ASSERT_THAT(w, IsOk());
  auto local = Coordinator::make(*w, workers(2, 2), {.window_per_device = 1});
  ASSERT_THAT(local, IsOk());
  Simulation a(*local, *w, 2);
  a.run();
  EXPECT_EQ(local->bytes_moved(), 0U);
  auto rr = Coordinator::make(*w, workers(2, 2),
                              {.policy = DispatchPolicy::kRoundRobin, .window_per_device = 1});
  ASSERT_THAT(rr, IsOk());
  Simulation b(*rr, *w, 2);
  b.run();
  EXPECT_EQ(rr->bytes_moved(), 19U << 20);  // every task but the first on the other rank
}

// 200 independent tasks of 4 KiB over two workers of two devices, worker 1 `slowdown` times
// slower than worker 0: the stats at the end.
std::vector<WorkerStats> stats_with_slow_worker(double slowdown) {
  sched::WorkloadSpec spec;
  spec.kind = sched::WorkloadKind::kIndependent;
  spec.tasks = 200;
  spec.task_bytes = 4096;
  auto w = sched::make_workload(spec, gpus(4));
  EXPECT_THAT(w, IsOk());
  auto c = Coordinator::make(*w, workers(2, 2), {.window_per_device = 1});
  EXPECT_THAT(c, IsOk());
  if (!w || !c) {
    return {};
  }
  Simulation sim(*c, *w, 2);
  sim.run(SIZE_MAX, {{1, slowdown}});
  EXPECT_TRUE(c->finished());
  return c->stats();
}

TEST(Coordinator, GivesASlowWorkerLessAndNamesItAStraggler) {
  const std::vector<WorkerStats> stats = stats_with_slow_worker(4.0);
  ASSERT_EQ(stats.size(), 2U);
  EXPECT_NEAR(stats[1].slowdown, 4.0, 1e-9);
  EXPECT_TRUE(stats[1].straggler) << stats[1].tasks << " tasks, slowdown " << stats[1].slowdown
                                  << " vs " << stats[0].tasks;
  EXPECT_FALSE(stats[0].straggler);
  EXPECT_GT(stats[0].tasks, 2 * stats[1].tasks);
}

// With two workers the median rank is the faster one (core::stats' median of 1 and 2 is 1.5, and
// the reference is the slowest rank at or below it): 2x is a straggler at the factor 1.5.
TEST(Coordinator, WithTwoWorkersTheFasterOneIsTheStragglerReference) {
  const std::vector<WorkerStats> stats = stats_with_slow_worker(2.0);
  ASSERT_EQ(stats.size(), 2U);
  EXPECT_NEAR(stats[1].slowdown, 2.0, 1e-9);
  EXPECT_TRUE(stats[1].straggler);
  EXPECT_FALSE(stats[0].straggler);
}

TEST(Coordinator, RunsALostWorkersTasksElsewhereAndRecomputesWhatOnlyItHeld) {
  const sched::Workload w = cholesky(6, 6);
  auto c = Coordinator::make(w, workers(3, 2), {.window_per_device = 1});
  ASSERT_THAT(c, IsOk());
  Simulation sim(*c, w, 3);
  sim.run(w.tasks.size() / 3);
  ASSERT_FALSE(c->finished());
  sim.lose(1);
  sim.run();
  EXPECT_TRUE(c->finished());
  EXPECT_GT(c->reruns(), 0U);  // rank 1 held the only copy of some tiles
  const std::vector<WorkerStats> stats = c->stats();
  EXPECT_TRUE(stats[1].lost);
  EXPECT_EQ(stats[0].tasks + stats[1].tasks + stats[2].tasks, w.tasks.size() + c->reruns());
  EXPECT_FALSE(c->stuck());
  EXPECT_THAT(c->lost(1), IsOk());  // again: nothing changes
}

TEST(Coordinator, EveryWorkerLostIsStuck) {
  const sched::Workload w = cholesky(3, 2);
  auto c = Coordinator::make(w, workers(1, 2));
  ASSERT_THAT(c, IsOk());
  ASSERT_FALSE(c->dispatch().empty());
  ASSERT_THAT(c->lost(0), IsOk());
  EXPECT_TRUE(c->stuck());
  EXPECT_TRUE(c->dispatch().empty());
}

TEST(Coordinator, RefusesBadWorkersOptionsAndReports) {
  const sched::Workload w = cholesky(3, 4);
  EXPECT_FALSE(Coordinator::make(w, {}));
  EXPECT_FALSE(Coordinator::make(w, {{0, {0}}, {0, {1}}}));
  EXPECT_FALSE(Coordinator::make(w, {{0, {}}}));
  auto beyond = Coordinator::make(w, {{0, {9}}});
  ASSERT_FALSE(beyond);
  EXPECT_THAT(beyond.error().message, ::testing::HasSubstr("device 9"));
  EXPECT_FALSE(Coordinator::make(w, workers(2, 2), {.window_per_device = 0}));
  EXPECT_FALSE(Coordinator::make(w, workers(2, 2), {.link_bytes_per_second = 0}));
  EXPECT_FALSE(Coordinator::make(w, workers(2, 2), {.straggler_factor = 1}));
  auto c = Coordinator::make(w, workers(2, 2));
  ASSERT_THAT(c, IsOk());
  const std::vector<Assignment> first = c->dispatch();
  ASSERT_EQ(first.size(), 1U);  // potrf(0) alone is ready
  EXPECT_FALSE(c->done(first[0].rank == 0 ? 1 : 0, first[0].task, 0, 1.0));  // not there
  EXPECT_FALSE(c->done(first[0].rank, first[0].task + 1, 0, 1.0));           // not running
  const std::size_t foreign = first[0].rank == 0 ? 2 : 0;  // the other rank's device
  EXPECT_FALSE(c->done(first[0].rank, first[0].task, foreign, 1.0));
  EXPECT_FALSE(c->lost(7));
  EXPECT_EQ(parse_dispatch_policy("round-robin"), DispatchPolicy::kRoundRobin);
  EXPECT_EQ(parse_dispatch_policy("locality"), DispatchPolicy::kLocality);
  EXPECT_FALSE(parse_dispatch_policy("eager"));
}

}  // namespace
}  // namespace acco::cluster
