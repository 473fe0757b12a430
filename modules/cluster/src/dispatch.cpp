#include "acco/cluster/dispatch.hpp"

#include <algorithm>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "acco/core/stats.hpp"
#include "acco/core/units.hpp"
#include "acco/sched/schedule_math.hpp"
#include "acco/sched/workload_run.hpp"

namespace acco::cluster {

const char* to_string(DispatchPolicy policy) {
  switch (policy) {
    case DispatchPolicy::kLocality:
      return "locality";
    case DispatchPolicy::kRoundRobin:
      return "round-robin";
  }
  return "?";
}

std::optional<DispatchPolicy> parse_dispatch_policy(std::string_view name) {
  for (DispatchPolicy p : {DispatchPolicy::kLocality, DispatchPolicy::kRoundRobin}) {
    if (name == to_string(p)) {
      return p;
    }
  }
  return std::nullopt;
}

Result<std::vector<DispatchPolicy>> parse_dispatch_policies(std::string_view list) {
  std::vector<DispatchPolicy> out;
  for (const std::string& name : units::split(list, ',')) {
    const auto policy = parse_dispatch_policy(name);
    if (!policy) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("'{}' is not locality or round-robin, comma-separated", name));
    }
    if (std::find(out.begin(), out.end(), *policy) != out.end()) {
      return fail(Errc::kInvalidArgument, fmt::format("'{}' named twice", name));
    }
    out.push_back(*policy);
  }
  return out;
}

namespace {

Status check_options(const DispatchOptions& o) {
  if (o.window_per_device < 1) {
    return fail(
        Errc::kInvalidArgument,
        fmt::format("dispatch: window {} per device, expected at least 1", o.window_per_device));
  }
  if (!(o.link_bytes_per_second > 0)) {
    return fail(Errc::kInvalidArgument, "dispatch: link rate must be positive");
  }
  if (!(o.straggler_factor > 1)) {
    return fail(
        Errc::kInvalidArgument,
        fmt::format("dispatch: straggler factor {}, expected more than 1", o.straggler_factor));
  }
  if (o.lookahead < 1) {
    return fail(Errc::kInvalidArgument, "dispatch: lookahead must be at least 1");
  }
  return {};
}

}  // namespace

Result<Coordinator> Coordinator::make(const sched::Workload& workload,
                                      const std::vector<WorkerInfo>& workers,
                                      DispatchOptions options) {
  ACCO_RETURN_IF_ERROR(check_options(options));
  if (workers.empty()) {
    return fail(Errc::kInvalidArgument, "dispatch: no workers");
  }
  std::set<int> ranks;
  const std::size_t device_count = workload.tasks.empty() ? 0 : workload.tasks[0].seconds.size();
  for (const WorkerInfo& w : workers) {
    if (!ranks.insert(w.rank).second) {
      return fail(Errc::kInvalidArgument, fmt::format("dispatch: rank {} given twice", w.rank));
    }
    if (w.devices.empty()) {
      return fail(Errc::kInvalidArgument, fmt::format("dispatch: rank {} has no devices", w.rank));
    }
    for (std::size_t d : w.devices) {
      if (!workload.tasks.empty() && d >= device_count) {
        return fail(Errc::kInvalidArgument,
                    fmt::format("dispatch: rank {} owns device {}, the workload has costs for {}",
                                w.rank, d, device_count));
      }
    }
  }
  Coordinator c;
  c.options_ = options;
  c.data_bytes_ = workload.data_bytes;
  const std::size_t data = workload.data_bytes.size();
  c.producer_.resize(data);
  std::vector<std::uint32_t> writers(data, 0);
  c.tasks_.resize(workload.tasks.size());
  for (std::size_t i = 0; i < workload.tasks.size(); ++i) {
    const sched::WorkTask& w = workload.tasks[i];
    if (w.seconds.size() != device_count) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("dispatch: task {} has costs for {} devices, task 0 for {}", i,
                              w.seconds.size(), device_count));
    }
    c.cost_.push_back(w.seconds);
    TaskState& t = c.tasks_[i];
    for (const auto& [datum, mode] : w.accesses) {
      if (datum >= data) {
        return fail(Errc::kInvalidArgument,
                    fmt::format("dispatch: task {} names datum {} of {}", i, datum, data));
      }
      auto same = std::find_if(t.uses.begin(), t.uses.end(),
                               [datum = datum](const Use& u) { return u.datum == datum; });
      if (same == t.uses.end()) {
        t.uses.push_back({datum, writers[datum], sched::reads(mode), sched::writes(mode)});
      } else {
        same->reads = same->reads || sched::reads(mode);
        same->writes = same->writes || sched::writes(mode);
      }
    }
    for (const Use& u : t.uses) {
      if (u.writes) {
        ++writers[u.datum];
        c.producer_[u.datum].push_back(i);
      }
    }
  }
  for (const sched::Edge& e : sched::infer_edges(workload)) {
    c.tasks_[e.from].successors.push_back(e.to);
    ++c.tasks_[e.to].pending;
  }
  ACCO_ASSIGN_OR_RETURN(
      const std::vector<double> ranks_u,
      sched::upward_ranks(sched::workload_dag(workload, options.link_bytes_per_second),
                          sched::RankCost::kBest),
      "dispatch");
  for (std::size_t i = 0; i < c.tasks_.size(); ++i) {
    c.tasks_[i].priority = ranks_u[i];
  }
  for (const WorkerInfo& info : workers) {
    Worker w;
    w.info = info;
    w.window = info.devices.size() * static_cast<std::size_t>(options.window_per_device);
    w.stats.rank = info.rank;
    w.busy.resize(data);
    w.holds.assign(data, 0);  // every rank can make the initial values
    c.workers_storage_.push_back(std::move(w));
  }
  c.remaining_ = c.tasks_.size();
  for (std::size_t i = 0; i < c.tasks_.size(); ++i) {
    if (c.tasks_[i].pending == 0) {
      c.make_ready(i);
    }
  }
  return c;
}

std::size_t Coordinator::worker_index(int rank) const {
  for (std::size_t i = 0; i < workers_storage_.size(); ++i) {
    if (workers_storage_[i].info.rank == rank) {
      return i;
    }
  }
  return workers_storage_.size();
}

double Coordinator::cost_on(std::size_t task, const Worker& w) const {
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t d : w.info.devices) {
    best = std::min(best, cost_[task][d]);
  }
  return best * w.stats.slowdown;
}

int Coordinator::holder(std::size_t datum, std::uint32_t version, int except) const {
  int best = -1;
  std::size_t best_running = std::numeric_limits<std::size_t>::max();
  for (const Worker& w : workers_storage_) {
    if (w.lost || w.info.rank == except || w.holds[datum] != static_cast<std::int64_t>(version) ||
        w.busy[datum].writers > 0) {
      continue;
    }
    if (w.running < best_running) {
      best = w.info.rank;
      best_running = w.running;
    }
  }
  return best;
}

bool Coordinator::available(std::size_t datum, std::uint32_t version) const {
  return version == 0 || holder(datum, version, -1) >= 0;
}

bool Coordinator::fits(std::size_t task, const Worker& w) const {
  // Only readers of the same version share a worker's copy of a datum.
  return std::ranges::all_of(tasks_[task].uses, [&w](const Use& u) {
    const Busy& b = w.busy[u.datum];
    return (b.readers == 0 && b.writers == 0) ||
           (!u.writes && b.writers == 0 && b.version == u.version_in);
  });
}

std::uint64_t Coordinator::missing_bytes(std::size_t task, const Worker& w) const {
  std::uint64_t bytes = 0;
  for (const Use& u : tasks_[task].uses) {
    const Busy& b = w.busy[u.datum];
    const bool here = w.holds[u.datum] == static_cast<std::int64_t>(u.version_in) ||
                      (b.readers > 0 && b.version == u.version_in);
    if (u.reads && !here && u.version_in > 0) {
      bytes += data_bytes_[u.datum];
    }
  }
  return bytes;
}

double Coordinator::estimate(std::size_t task, const Worker& w) const {
  return w.backlog_seconds / static_cast<double>(w.info.devices.size()) +
         static_cast<double>(missing_bytes(task, w)) / options_.link_bytes_per_second +
         cost_on(task, w);
}

void Coordinator::make_ready(std::size_t task) {
  TaskState& t = tasks_[task];
  t.phase = Phase::kReady;
  t.rank = -1;
  t.ready_seq = ready_counter_++;
  ready_.push_back(task);
}

bool Coordinator::inputs_ready(std::size_t task) {
  bool ready = true;
  for (const Use& u : tasks_[task].uses) {
    if (!u.reads || available(u.datum, u.version_in)) {
      continue;
    }
    ready = false;
    const std::size_t producer = producer_[u.datum][u.version_in - 1];
    if (tasks_[producer].phase == Phase::kDone) {
      // Only a lost worker held it: computed again (its own inputs are checked the same way).
      make_ready(producer);
      ++remaining_;
      ++reruns_;
    }
  }
  return ready;
}

Assignment Coordinator::assign(std::size_t task, Worker& w) {
  TaskState& t = tasks_[task];
  Assignment a{task, w.info.rank, {}};
  for (const Use& u : t.uses) {
    Busy& b = w.busy[u.datum];
    const bool here = w.holds[u.datum] == static_cast<std::int64_t>(u.version_in) ||
                      (b.readers > 0 && b.version == u.version_in);
    if (u.reads && !here) {
      const int from = u.version_in == 0 ? -1 : holder(u.datum, u.version_in, w.info.rank);
      a.fetches.push_back({u.datum, u.version_in, from});
      if (from >= 0) {
        bytes_moved_ += data_bytes_[u.datum];
        w.stats.bytes_in += data_bytes_[u.datum];
      }
    }
    if (u.writes) {
      ++b.writers;
    } else {
      ++b.readers;
      b.version = u.version_in;
    }
  }
  t.phase = Phase::kRunning;
  t.rank = w.info.rank;
  t.fetches = a.fetches;
  ++w.running;
  w.backlog_seconds += cost_on(task, w);
  ready_.erase(std::find(ready_.begin(), ready_.end(), task));
  return a;
}

std::vector<Assignment> Coordinator::dispatch() {
  return options_.policy == DispatchPolicy::kRoundRobin ? dispatch_round_robin()
                                                        : dispatch_locality();
}

std::vector<Assignment> Coordinator::dispatch_round_robin() {
  std::vector<Assignment> out;
  std::sort(ready_.begin(), ready_.end(), [this](std::size_t a, std::size_t b) {
    return tasks_[a].ready_seq < tasks_[b].ready_seq;
  });
  while (!ready_.empty() && !stuck()) {
    Worker& w = workers_storage_[turn_ % workers_storage_.size()];
    if (w.lost) {
      ++turn_;
      continue;
    }
    if (w.running >= w.window) {
      break;  // strictly in turn: the next task waits for this worker
    }
    std::optional<std::size_t> pick;
    for (std::size_t i = 0; i < ready_.size() && !pick; ++i) {
      if (fits(ready_[i], w) && inputs_ready(ready_[i])) {
        pick = ready_[i];
      }
    }
    if (!pick) {
      break;
    }
    out.push_back(assign(*pick, w));
    ++turn_;
  }
  return out;
}

bool Coordinator::ends_soonest(std::size_t task, std::size_t ahead, const Worker& w) const {
  // Here unless another worker would end it sooner, its queue included and the `ahead` ready
  // tasks of higher priority that go before it there.
  const double here = estimate(task, w);
  return std::ranges::none_of(workers_storage_, [&](const Worker& other) {
    if (&other == &w || other.lost || !fits(task, other)) {
      return false;
    }
    const double before = static_cast<double>(ahead) * cost_on(task, other) /
                          static_cast<double>(other.info.devices.size());
    return estimate(task, other) + before < here;
  });
}

std::vector<std::size_t> Coordinator::candidates() {
  std::sort(ready_.begin(), ready_.end(), [this](std::size_t a, std::size_t b) {
    return tasks_[a].priority > tasks_[b].priority ||
           (tasks_[a].priority == tasks_[b].priority && a < b);
  });
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < ready_.size() && out.size() < options_.lookahead; ++i) {
    if (inputs_ready(ready_[i])) {
      out.push_back(ready_[i]);
    }
  }
  return out;
}

std::vector<Assignment> Coordinator::dispatch_locality() {
  std::vector<Assignment> out;
  for (bool progress = true; progress;) {
    progress = false;
    const std::vector<std::size_t> ready = candidates();
    if (ready.empty()) {
      break;
    }
    // Workers with a free slot, the least loaded first.
    std::vector<Worker*> free;
    for (Worker& w : workers_storage_) {
      if (!w.lost && w.running < w.window) {
        free.push_back(&w);
      }
    }
    std::sort(free.begin(), free.end(), [](const Worker* a, const Worker* b) {
      return a->backlog_seconds / static_cast<double>(a->info.devices.size()) <
             b->backlog_seconds / static_cast<double>(b->info.devices.size());
    });
    for (std::size_t wi = 0; wi < free.size() && !progress; ++wi) {
      Worker& w = *free[wi];
      for (std::size_t k = 0; k < ready.size(); ++k) {
        if (fits(ready[k], w) && ends_soonest(ready[k], k, w)) {
          out.push_back(assign(ready[k], w));
          progress = true;  // estimates changed: look again
          break;
        }
      }
    }
  }
  return out;
}

std::vector<Assignment> Coordinator::resend() {
  std::vector<Assignment> out;
  if (!lost_since_resend_) {
    return out;  // the fetches from every lost worker were rerouted when it was lost
  }
  lost_since_resend_ = false;
  for (std::size_t task = 0; task < tasks_.size(); ++task) {
    TaskState& t = tasks_[task];
    if (t.phase != Phase::kRunning || t.cancel || t.cancelling) {
      continue;
    }
    const std::size_t wi = worker_index(t.rank);
    bool unavailable = false;
    for (const Fetch& f : t.fetches) {
      unavailable = unavailable || (f.from >= 0 && workers_storage_[worker_index(f.from)].lost &&
                                    !available(f.datum, f.version));
    }
    if (unavailable) {
      t.cancel = true;
      marked_to_cancel_ = true;
      continue;
    }
    for (Fetch& f : t.fetches) {
      if (f.from < 0 || !workers_storage_[worker_index(f.from)].lost) {
        continue;
      }
      f.from = f.version == 0 ? -1 : holder(f.datum, f.version, t.rank);
      if (f.from >= 0) {
        bytes_moved_ += data_bytes_[f.datum];
        workers_storage_[wi].stats.bytes_in += data_bytes_[f.datum];
      }
      out.push_back({task, t.rank, {f}});
    }
  }
  return out;
}

std::vector<std::pair<int, std::size_t>> Coordinator::cancels() {
  std::vector<std::pair<int, std::size_t>> out;
  if (!marked_to_cancel_) {
    return out;
  }
  marked_to_cancel_ = false;
  for (std::size_t task = 0; task < tasks_.size(); ++task) {
    TaskState& t = tasks_[task];
    if (t.phase == Phase::kRunning && t.cancel) {
      t.cancel = false;
      t.cancelling = true;
      out.emplace_back(t.rank, task);
    }
  }
  return out;
}

Status Coordinator::cancelled(int rank, std::size_t task) {
  const std::size_t wi = worker_index(rank);
  if (wi == workers_storage_.size() || task >= tasks_.size() ||
      tasks_[task].phase != Phase::kRunning || tasks_[task].rank != rank) {
    return fail(Errc::kInvalidArgument,
                fmt::format("dispatch: task {} is not running on rank {}", task, rank));
  }
  release(task, workers_storage_[wi]);
  tasks_[task].cancelling = false;
  tasks_[task].fetches.clear();
  make_ready(task);
  return {};
}

void Coordinator::release(std::size_t task, Worker& w) {
  for (const Use& u : tasks_[task].uses) {
    Busy& b = w.busy[u.datum];
    if (u.writes) {
      --b.writers;
    } else {
      --b.readers;
    }
  }
  --w.running;
  w.backlog_seconds = std::max(0.0, w.backlog_seconds - cost_on(task, w));
  if (w.running == 0) {
    w.backlog_seconds = 0;  // no drift from slowdowns that changed meanwhile
  }
}

Status Coordinator::done(int rank, std::size_t task, std::size_t device, double seconds) {
  const std::size_t wi = worker_index(rank);
  if (wi == workers_storage_.size() || task >= tasks_.size() ||
      tasks_[task].phase != Phase::kRunning || tasks_[task].rank != rank) {
    return fail(Errc::kInvalidArgument,
                fmt::format("dispatch: task {} is not running on rank {}", task, rank));
  }
  Worker& w = workers_storage_[wi];
  if (std::find(w.info.devices.begin(), w.info.devices.end(), device) == w.info.devices.end()) {
    return fail(Errc::kInvalidArgument,
                fmt::format("dispatch: rank {} does not own device {}", rank, device));
  }
  release(task, w);
  TaskState& t = tasks_[task];
  for (const Use& u : t.uses) {
    if (u.writes) {
      w.holds[u.datum] = static_cast<std::int64_t>(u.version_in) + 1;
    } else {
      w.holds[u.datum] = u.version_in;
    }
  }
  ++w.stats.tasks;
  w.stats.measured_seconds += std::max(0.0, seconds);
  w.stats.expected_seconds += cost_[task][device];
  if (w.stats.expected_seconds > 0 && w.stats.measured_seconds > 0) {
    w.stats.slowdown = w.stats.measured_seconds / w.stats.expected_seconds;
  }
  t.phase = Phase::kDone;
  t.cancel = false;
  t.cancelling = false;
  t.fetches.clear();
  --remaining_;
  if (!t.ran) {
    t.ran = true;
    for (std::size_t s : t.successors) {
      if (--tasks_[s].pending == 0) {
        make_ready(s);
      }
    }
  }
  update_stragglers();
  return {};
}

Status Coordinator::lost(int rank) {
  const std::size_t wi = worker_index(rank);
  if (wi == workers_storage_.size()) {
    return fail(Errc::kInvalidArgument, fmt::format("dispatch: no worker has rank {}", rank));
  }
  Worker& w = workers_storage_[wi];
  if (w.lost) {
    return {};
  }
  w.lost = true;
  lost_since_resend_ = true;
  w.stats.lost = true;
  w.stats.straggler = false;
  for (std::size_t task = 0; task < tasks_.size(); ++task) {
    if (tasks_[task].phase == Phase::kRunning && tasks_[task].rank == rank) {
      tasks_[task].fetches.clear();
      tasks_[task].cancel = false;
      tasks_[task].cancelling = false;
      make_ready(task);
    }
  }
  w.running = 0;
  w.backlog_seconds = 0;
  std::fill(w.busy.begin(), w.busy.end(), Busy{});
  std::fill(w.holds.begin(), w.holds.end(), -1);
  update_stragglers();
  return {};
}

bool Coordinator::stuck() const {
  return remaining_ > 0 && std::all_of(workers_storage_.begin(), workers_storage_.end(),
                                       [](const Worker& w) { return w.lost; });
}

std::vector<int> Coordinator::ranks() const {
  std::vector<int> out;
  for (const Worker& w : workers_storage_) {
    out.push_back(w.info.rank);
  }
  return out;
}

std::size_t Coordinator::in_flight(int rank) const {
  const std::size_t wi = worker_index(rank);
  return wi == workers_storage_.size() ? 0 : workers_storage_[wi].running;
}

std::vector<WorkerStats> Coordinator::stats() const {
  std::vector<WorkerStats> out;
  for (const Worker& w : workers_storage_) {
    out.push_back(w.stats);
  }
  return out;
}

void Coordinator::update_stragglers() {
  std::vector<double> slowdowns;
  for (const Worker& w : workers_storage_) {
    if (!w.lost && w.stats.tasks >= options_.straggler_min_tasks) {
      slowdowns.push_back(w.stats.slowdown);
    }
  }
  if (slowdowns.size() < 2) {
    for (Worker& w : workers_storage_) {
      w.stats.straggler = false;
    }
    return;
  }
  // The reference is the median rank: the slowest at or below the median slowdown
  // (core::stats), so with two workers the faster one, whose slowdown a straggler cannot raise.
  const double median = core::stats::median(slowdowns);
  double reference = std::numeric_limits<double>::lowest();
  for (const double s : slowdowns) {
    if (s <= median) {
      reference = std::max(reference, s);
    }
  }
  for (Worker& w : workers_storage_) {
    w.stats.straggler = !w.lost && w.stats.tasks >= options_.straggler_min_tasks &&
                        w.stats.slowdown > options_.straggler_factor * reference;
  }
}

}  // namespace acco::cluster
