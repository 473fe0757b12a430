#include "acco/sched/runtime.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "acco/sched/schedule_math.hpp"

#include "runtime_core.hpp"

namespace acco::sched {

namespace detail {

namespace {

std::string device_instance(const dev::DeviceInfo& info) {
  if (!info.pci.empty()) {
    return fmt::format("{}:{}", info.backend, info.pci);
  }
  return fmt::format("{}:{}", info.backend, info.index);
}

}  // namespace

RuntimeCore::RuntimeCore(std::vector<DeviceSpec> specs, RuntimeOptions options, PerfModels models)
    : options_(std::move(options)),
      start_(std::chrono::steady_clock::now()),
      knobs_(options_.knobs),
      models_(std::move(models)) {
  for (PolicyKind kind : all_policies()) {
    policies_.push_back(make_policy(kind));
  }
  policy_ = policy_of(options_.policy);
  for (DeviceSpec& spec : specs) {
    auto d = std::make_unique<DeviceState>();
    const dev::DeviceInfo& info = spec.device->info();
    d->kind = spec.kind.empty() ? info.backend : spec.kind;
    d->instance = device_instance(info);
    d->name = fmt::format("dev{} {} ({})", devices_.size(), d->instance, d->kind);
    d->budget = spec.memory_budget_bytes != 0 ? spec.memory_budget_bytes : info.memory_bytes;
    d->link_bytes_per_second = info.link_bytes_per_second;
    d->latency_s = std::chrono::duration<double>(info.link_latency).count();
    d->copy_fixed_s = d->latency_s;
    d->seconds_per_byte = 1 / d->link_rate();
    d->relative_speed = info.speed_factor > 0 ? info.speed_factor : 1;
    d->async.device = spec.device;
    d->async.origin = start_;
    d->spec = std::move(spec);
    devices_.push_back(std::move(d));
  }
}

Status RuntimeCore::start() {
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    auto engine = xfer::Engine::create(*devices_[i]->spec.device, options_.transfer_profile);
    if (!engine) {
      return tl::unexpected(
          std::move(engine.error()).with_context(fmt::format("device {}", devices_[i]->name)));
    }
    devices_[i]->engine = std::move(*engine);
  }
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    devices_[i]->thread = std::thread([this, i] { worker(static_cast<int>(i)); });
  }
  return {};
}

RuntimeCore::~RuntimeCore() {
  Lock lock = acquire();
  // Tasks parked because every device able to run them is drained would wait forever: once
  // nothing else can make progress, they (and so their dependants) fail instead.
  const auto idle = [&] {
    if (!shared_queue_.empty()) {
      return false;
    }
    for (const auto& d : devices_) {
      if (!d->queue.empty() || d->running_end_s != 0) {
        return false;
      }
    }
    return true;
  };
  for (;;) {
    all_done_.wait(lock, [&] { return unfinished_ == 0 || (!parked_.empty() && idle()); });
    if (unfinished_ == 0) {
      break;
    }
    std::vector<TaskId> parked = std::move(parked_);
    parked_.clear();
    for (TaskId id : parked) {
      finish(id, "the runtime was destroyed while every device able to run it was drained", -1);
    }
  }
  stop_ = true;
  work_epoch_.fetch_add(1, std::memory_order_release);
  for (auto& d : devices_) {
    d->cv.notify_all();
  }
  lock.unlock();
  for (auto& d : devices_) {
    if (d->thread.joinable()) {
      d->thread.join();
    }
  }
  // Replicas before engines and devices' queues: buffers keep what they use alive.
  handles_.clear();
}

std::chrono::nanoseconds RuntimeCore::now() const {
  const auto t = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::steady_clock::now() - start_);
  clock_ns_.store(t.count(), std::memory_order_relaxed);
  return t;
}

double RuntimeCore::now_s() const {
  return std::chrono::duration<double>(now()).count();
}

namespace {

TaskFailure failure_of(TaskId id, const TaskState& t) {
  return {id, t.name.empty() ? t.codelet->type : t.name, t.error};
}

}  // namespace

Policy* RuntimeCore::policy_of(PolicyKind kind) const {
  for (const auto& p : policies_) {
    if (p->kind() == kind) {
      return p.get();
    }
  }
  ACCO_CHECK(false);
  return nullptr;
}

bool RuntimeCore::settled(TaskId id) const {
  if (id < tasks_.base()) {
    return true;
  }
  const TaskPhase phase = state(id).phase;
  return phase == TaskPhase::kDone || phase == TaskPhase::kFailed;
}

bool RuntimeCore::failed_task(TaskId id) const {
  if (id < tasks_.base()) {
    // Dropped failures are kept in id order.
    return std::ranges::binary_search(forgotten_failures_, id, {}, &TaskFailure::task);
  }
  return state(id).phase == TaskPhase::kFailed;
}

void RuntimeCore::reclaim() {
  if (options_.keep_task_records) {
    return;  // records() and explain() need every task
  }
  TaskId id = tasks_.base();
  for (; id < tasks_.end() && settled(id); ++id) {
    const TaskState& t = state(id);
    if (t.phase == TaskPhase::kFailed) {
      forgotten_failures_.push_back(failure_of(id, t));
    }
  }
  tasks_.drop_before(id);
}

void RuntimeCore::grow_tasks(std::size_t n) {
  if (tasks_.at_chunk_start()) {
    reclaim();
  }
  tasks_.grow(n);
}

void TaskTable::reset(TaskState& t) {
  // Field by field (assigning a fresh TaskState cost ~480 instructions a task, callgrind): every
  // field back to its initial value, the vectors' and strings' buffers kept.
#if defined(__GLIBCXX__) && defined(__x86_64__)
  static_assert(sizeof(TaskState) == 456, "a field was added to TaskState: reset it here");
#endif
  t.codelet.reset();
  t.codelet_id = 0;
  t.info = nullptr;
  t.slots = nullptr;
  t.name.clear();
  t.accesses.clear();
  t.access_handles.clear();
  t.priority = 0;
  t.cost = CostHint{};
  t.bytes = 0;
  t.size_class = 0;
  t.pending = 0;
  t.dependents.clear();
  t.dependency_error.clear();
  t.phase = TaskPhase::kWaiting;
  t.device = -1;
  t.planned = -1;
  t.prefetched_on = -1;
  t.stolen = false;
  t.predicted_s = 0;
  t.queued_cost_s = 0;
  t.calibrated = false;
  t.reason.clear();
  t.placement.set = false;
  t.placement.view.devices.clear();
  t.error.clear();
  t.submitted = t.ready = t.started = t.finished = std::chrono::nanoseconds{0};
  t.transfer_bytes = 0;
  t.transfer_time = std::chrono::nanoseconds{0};
}

void TaskTable::grow(std::size_t n) {
  for (std::size_t i = 0; i < n; ++i, ++end_) {
    if (end_ % kChunk == 0) {
      if (chunks_.empty()) {
        first_chunk_ = end_ / kChunk;
      }
      if (spare_.empty()) {
        chunks_.push_back(std::make_unique<TaskState[]>(kChunk));
      } else {
        chunks_.push_back(std::move(spare_.back()));
        spare_.pop_back();
      }
    }
    reset(slot(end_));
  }
}

void TaskTable::drop_before(TaskId id) {
  ACCO_CHECK(id >= base_ && id <= end_);
  base_ = id;
  while (!chunks_.empty() && (first_chunk_ + 1) * kChunk <= base_) {
    if (spare_.size() < kMaxSpare) {
      spare_.push_back(std::move(chunks_.front()));
    }
    chunks_.pop_front();
    ++first_chunk_;
  }
}

Result<DataHandle> RuntimeCore::register_data(void* host_ptr, std::size_t bytes) {
  if (host_ptr == nullptr || bytes == 0) {
    return fail(Errc::kInvalidArgument,
                fmt::format("register_data: expected a non-null pointer and a non-zero size, "
                            "got {} and {} bytes",
                            host_ptr, bytes));
  }
  Lock lock = acquire();
  const auto* lo = static_cast<const std::byte*>(host_ptr);
  for (std::size_t i = 0; i < handles_.size(); ++i) {
    const HandleState& h = handles_[i];
    const auto* hlo = static_cast<const std::byte*>(h.host);
    if (h.registered && lo < hlo + h.bytes && hlo < lo + bytes) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("register_data: [{}, +{}) overlaps data {} already registered",
                              host_ptr, bytes, i));
    }
  }
  HandleState h;
  h.host = host_ptr;
  h.bytes = bytes;
  h.registered = true;
  h.replicas.resize(devices_.size());
  handles_.push_back(std::move(h));
  return DataHandle{handles_.size() - 1};
}

Status RuntimeCore::write_back(DataHandle handle, bool forget) {
  Lock lock = acquire();
  if (handle.id >= handles_.size() || !handles_[handle.id].registered) {
    return fail(Errc::kInvalidArgument, fmt::format("data {}: not registered", handle.id));
  }
  ++settle_waiters_;
  all_done_.wait(lock, [&] {
    const HandleState& h = handles_[handle.id];
    if (h.host_writing || (h.last_writer && !settled(*h.last_writer))) {
      return false;
    }
    return !forget || std::all_of(h.readers_since.begin(), h.readers_since.end(),
                                  [&](TaskId t) { return settled(t); });
  });
  --settle_waiters_;
  HandleState& h = handles_[handle.id];
  Status status;
  if (h.last_writer && failed_task(*h.last_writer)) {
    status = fail(Errc::kDeviceError, fmt::format("data {}: its last writer, task {}, failed",
                                                  handle.id, *h.last_writer));
  } else if (!h.lost.empty()) {
    status = fail(Errc::kDeviceError, fmt::format("data {}: {}", handle.id, h.lost));
  } else if (!h.host_valid) {
    const int source = pick_source(handle.id, -1, false);
    ACCO_CHECK(source >= 0);
    Replica& r = h.replicas[static_cast<std::size_t>(source)];
    ++r.pins;
    h.host_writing = true;
    const std::uint64_t version = h.version;
    dev::Device& device = *devices_[static_cast<std::size_t>(source)]->spec.device;
    void* src = r.buffer->data();
    lock.unlock();
    status = device.copy(h.host, src, h.bytes);
    spin_lock(lock);
    --r.pins;
    h.host_writing = false;
    pins_released_.notify_all();
    all_done_.notify_all();
    if (status) {
      h.host_valid = h.version == version;  // a writer that slipped in keeps it stale
    } else {
      status = tl::unexpected(
          std::move(status.error()).with_context(fmt::format("data {}: write back", handle.id)));
    }
  }
  if (forget) {
    pins_released_.wait(lock, [&] {
      return std::all_of(h.replicas.begin(), h.replicas.end(),
                         [](const Replica& r) { return r.pins == 0; });
    });
    for (std::size_t d = 0; d < h.replicas.size(); ++d) {
      if (h.replicas[d].buffer) {
        drop_buffer(*devices_[d], std::move(h.replicas[d].buffer));
        h.replicas[d] = Replica{};
      }
    }
    h.registered = false;
  }
  return status;
}

const CodeletInfo& RuntimeCore::codelet_info(const std::shared_ptr<const Codelet>& codelet) {
  if (last_codelet_ != nullptr && last_codelet_->keep_alive == codelet) {
    return *last_codelet_;
  }
  auto it = codelets_.find(codelet.get());
  if (it != codelets_.end()) {
    last_codelet_ = &it->second;
    return it->second;
  }
  CodeletInfo info;
  info.keep_alive = codelet;
  info.id = codelets_.size();
  info.impl.assign(devices_.size(), -1);
  info.launches.assign(devices_.size(), CodeletInfo::kUnknown);
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    for (std::size_t i = 0; i < codelet->implementations.size(); ++i) {
      if (codelet->implementations[i].first == devices_[d]->kind &&
          codelet->implementations[i].second) {
        info.impl[d] = static_cast<int>(i);
        break;
      }
    }
  }
  last_codelet_ = &codelets_.emplace(codelet.get(), std::move(info)).first->second;
  return *last_codelet_;
}

Status RuntimeCore::validate(const Task& task, std::size_t id, std::size_t graph_end) {
  // Messages are built only on failure: submit is on the per-task hot path.
  const auto who = [&] {
    return fmt::format("task {} ({})", id,
                       task.name.empty() ? (task.codelet ? task.codelet->type : "?") : task.name);
  };
  if (!task.codelet) {
    return fail(Errc::kInvalidArgument, who() + ": no codelet");
  }
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < task.accesses.size(); ++i) {
    const std::size_t h = task.accesses[i].first.id;
    if (h >= handles_.size() || !handles_[h].registered) {
      return fail(Errc::kInvalidArgument, fmt::format("{}: data {} is not registered", who(), h));
    }
    const bool repeated = std::any_of(task.accesses.begin(), task.accesses.begin() + i,
                                      [&](const auto& a) { return a.first.id == h; });
    if (!repeated) {
      bytes += handles_[h].bytes;
    }
  }
  for (TaskId dep : task.depends_on) {
    if (dep >= id) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("{}: depends on task {}, which is not submitted before it (a task "
                              "cannot depend on itself or a later task)",
                              who(), dep));
    }
  }
  for (std::size_t a : task.after) {
    if (graph_end == 0) {
      return fail(Errc::kInvalidArgument,
                  who() + ": 'after' is for submit_graph; use depends_on with submit");
    }
    if (a >= graph_end) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("{}: 'after' index {} is outside the graph", who(), a));
    }
  }
  bool runnable = false;
  std::uint64_t largest = 0;
  // The cache is filled even for a task refused below: it only depends on the codelet.
  const CodeletInfo& info = codelet_info(task.codelet);
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    const bool has = !devices_[d]->failed && info.impl[d] >= 0;
    if (has) {
      runnable = true;
      largest = std::max(largest, devices_[d]->budget);
    }
  }
  if (!runnable) {
    std::vector<std::string> kinds;
    for (const auto& d : devices_) {
      if (!d->failed) {
        kinds.push_back(d->kind);
      }
    }
    std::vector<std::string> has;
    for (const auto& impl : task.codelet->implementations) {
      has.push_back(impl.first);
    }
    std::sort(kinds.begin(), kinds.end());
    kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
    return fail(Errc::kUnsupported,
                fmt::format("{}: no implementation for any available device (devices: {}; "
                            "task has: {})",
                            who(), fmt::join(kinds, ", "),
                            has.empty() ? "none" : fmt::format("{}", fmt::join(has, ", "))));
  }
  if (bytes > largest) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: its data ({} bytes) is larger than the memory budget of every "
                            "device that can run it (largest {} bytes)",
                            who(), bytes, largest));
  }
  return {};
}

void RuntimeCore::add_edge(TaskId from, TaskId to, bool inherits_failure) {
  TaskState& t = state(to);
  if (settled(from)) {
    if (!failed_task(from)) {
      return;
    }
    if (inherits_failure && t.dependency_error.empty()) {
      t.dependency_error = fmt::format("dependency task {} failed", from);
    }
    return;
  }
  state(from).dependents.push_back({to, inherits_failure});
  ++t.pending;
}

void RuntimeCore::add_task(TaskId id, Task task) {
  TaskState& t = state(id);
  const CodeletInfo& info = codelet_info(task.codelet);  // filled by validate
  t.codelet_id = info.id;
  t.info = &info;
  t.codelet = std::move(task.codelet);
  t.name = std::move(task.name);
  t.priority = task.priority;
  t.cost = task.cost;
  // Timestamps only feed records and the run's span: the clock is read once per event that
  // needs it, not on every step of every task.
  if (options_.keep_task_records || first_submit_.count() < 0) {
    t.submitted = now();
  }
  if (first_submit_.count() < 0) {
    first_submit_ = t.submitted;
  }
  // One entry per handle, with the union of its modes.
  for (const auto& [handle, mode] : task.accesses) {
    t.access_handles.push_back(handle.id);
    auto it = std::find_if(t.accesses.begin(), t.accesses.end(),
                           [&](const auto& a) { return a.first == handle.id; });
    if (it == t.accesses.end()) {
      t.accesses.emplace_back(handle.id, mode);
      t.bytes += handles_[handle.id].bytes;
    } else if (it->second != mode) {
      it->second = Access::kReadWrite;
    }
  }
  t.size_class = size_class(t.bytes);
  t.slots = &model_slots(t);
  for (TaskId dep : task.depends_on) {
    add_edge(dep, id);
  }
  // Sequential consistency per handle: RAW on the last writer, WAR on readers since, WAW.
  for (const auto& [h, mode] : t.accesses) {
    HandleState& hs = handles_[h];
    if (reads(mode) && hs.last_writer) {
      add_edge(*hs.last_writer, id);
    }
    if (writes(mode)) {
      for (TaskId r : hs.readers_since) {
        if (r != id) {
          add_edge(r, id, /*inherits_failure=*/false);
        }
      }
      if (hs.last_writer && !reads(mode) && hs.readers_since.empty()) {
        add_edge(*hs.last_writer, id);
      }
      hs.last_writer = id;
      hs.readers_since.clear();
    } else {
      // Keep the list short: settled readers no longer order anything.
      std::erase_if(hs.readers_since, [&](TaskId r) { return settled(r); });
      hs.readers_since.push_back(id);
    }
  }
  ++unfinished_;
}

Result<TaskId> RuntimeCore::submit(Task task) {
  Lock lock = acquire();
  const TaskId id = next_id();
  ACCO_RETURN_IF_ERROR(validate(task, id, 0), "submit");
  grow_tasks(1);
  add_task(id, std::move(task));
  if (state(id).pending == 0) {
    make_ready(id, -1);
    prefetch_pushed(lock);
  }
  return id;
}

Result<std::vector<TaskId>> RuntimeCore::submit_graph(std::vector<Task> graph) {
  Lock lock = acquire();
  const TaskId first = next_id();
  const std::size_t n = graph.size();
  for (std::size_t i = 0; i < n; ++i) {
    ACCO_RETURN_IF_ERROR(validate(graph[i], first + i, n), "submit_graph");
  }
  // Kahn's algorithm on the explicit `after` edges, lowest index first, so data dependencies
  // are inferred in an order that agrees with them.
  std::vector<std::vector<std::size_t>> succ(n);
  std::vector<std::size_t> indegree(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t a : graph[i].after) {
      succ[a].push_back(i);
      ++indegree[i];
    }
  }
  std::set<std::size_t> ready;
  for (std::size_t i = 0; i < n; ++i) {
    if (indegree[i] == 0) {
      ready.insert(i);
    }
  }
  std::vector<std::size_t> order;
  while (!ready.empty()) {
    const std::size_t i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    for (std::size_t s : succ[i]) {
      if (--indegree[s] == 0) {
        ready.insert(s);
      }
    }
  }
  if (order.size() != n) {
    for (std::size_t i = 0; i < n; ++i) {
      if (indegree[i] != 0) {
        return fail(Errc::kInvalidArgument,
                    fmt::format("submit_graph: task {} ({}) is on a dependency cycle", first + i,
                                graph[i].name.empty() ? graph[i].codelet->type : graph[i].name));
      }
    }
  }
  grow_tasks(n);
  std::vector<TaskId> ids(n);
  for (std::size_t i : order) {
    for (std::size_t a : graph[i].after) {
      graph[i].depends_on.push_back(first + a);
    }
    add_task(first + i, std::move(graph[i]));
    ids[i] = first + i;
  }
  plan_graph(first, first + n);
  for (std::size_t i : order) {
    if (state(first + i).pending == 0 && state(first + i).phase == TaskPhase::kWaiting) {
      make_ready(first + i, -1);
    }
  }
  prefetch_pushed(lock);
  return ids;
}

// HEFT plan (kHeft) or upward-rank priorities (others) for a graph, from the current models.
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
        dag.cost[i][d] = std::chrono::duration<double>(pred->time).count() / devices_[d]->weight;
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
                          [&](const auto& a) { return a.first == h && writes(a.second); })) {
            bytes += static_cast<double>(handles_[h].bytes);
          }
        }
        double rate = 0;
        double latency = 0;
        for (const auto& d : devices_) {
          rate += d->link_rate();
          latency += d->latency_s;
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
  // fastest, which is where dmda sends it when that device is free. (Mean-cost ranks, as HEFT
  // uses, put a CPU's 47-times-slower GEMMs into the ranks: on the tiled Cholesky with a CPU
  // and three GPUs the GEMMs of earlier steps then outranked the POTRF-TRSM-SYRK chain, whose
  // tasks waited 1-8 ms in GPU queues; 84 % -> 88 % of the bound.)
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

std::optional<Prediction> RuntimeCore::predict(int device, const TaskState& task) const {
  const ModelSlot& slot = model_slot(device, task);
  if (cached_prediction_serves(slot, task)) {
    return slot.cached;
  }
  return predict_uncached(device, task);
}

std::optional<Prediction> RuntimeCore::predict_uncached(int device, const TaskState& task) const {
  const DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  ModelSlot& slot = model_slot(device, task);
  flush(slot);
  auto p = models_.predict(slot.key, task.cost, d.spec.peak);
  slot.calibrated = p && p->calibrated;
  slot.cached = p;
  slot.cached_s = p ? std::chrono::duration<double>(p->time).count() : 0;
  slot.cached_cost = task.cost;  // what an uncalibrated prediction (the prior) depended on
  slot.cached_valid = true;
  return p;
}

std::vector<ModelSlot>& RuntimeCore::model_slots(const TaskState& task) const {
  const std::uint64_t key = (static_cast<std::uint64_t>(task.codelet_id) << 8) |
                            static_cast<std::uint64_t>(task.size_class);
  if (key == last_slots_key_) {
    return *last_slots_;
  }
  auto [it, inserted] = model_slots_.try_emplace(key);
  last_slots_key_ = key;
  last_slots_ = &it->second;
  if (inserted) {
    it->second.resize(devices_.size());
    for (std::size_t d = 0; d < devices_.size(); ++d) {
      it->second[d].key = ModelKey{task.codelet->type, devices_[d]->instance, task.size_class};
    }
  }
  return it->second;
}

void RuntimeCore::flush(ModelSlot& slot) const {
  if (!slot.pending.empty()) {
    models_.record_batch(slot.key, slot.pending);
    slot.pending.clear();
    // Known here, not only at the next prediction: a device may complete many tasks before
    // anyone predicts again (all placed at submit), and learn batches only calibrated samples.
    slot.calibrated = models_.calibrated(slot.key);
  }
}

void RuntimeCore::learn(int device, const TaskState& task, std::chrono::nanoseconds time) {
  ModelSlot& slot = model_slot(device, task);
  slot.pending.push_back(time);
  // Calibrated predictions are refreshed every kModelBatch samples: recomputing a median per
  // task would cost more than the scheduling decision itself.
  constexpr std::size_t kModelBatch = 16;
  // `calibrated` outlives the cache: a device that completes a batch of tasks in a row, with no
  // prediction in between, must not record each sample alone once the cache is reset.
  if (!slot.calibrated || slot.pending.size() >= kModelBatch) {
    flush(slot);
    slot.cached.reset();
    slot.cached_valid = false;
  }
}

namespace {

// Modelled time of one copy of `bytes` into `d`: the link's latency and rate, and what copies
// into it were measured to take beyond them.
double copy_seconds(const DeviceState& d, std::size_t bytes) {
  return d.copy_fixed_s + static_cast<double>(bytes) * d.seconds_per_byte;
}

}  // namespace

double RuntimeCore::transfer_estimate(int device, const TaskState& task) const {
  const DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  double seconds = 0;
  for (const auto& [h, mode] : task.accesses) {
    if (reads(mode) && !handles_[h].replicas[static_cast<std::size_t>(device)].valid) {
      seconds += copy_seconds(d, handles_[h].bytes);
    }
  }
  return seconds;
}

void RuntimeCore::transfer_estimates(const TaskState& task, std::vector<double>& out) const {
  out.assign(devices_.size(), 0.0);
  for (const auto& [h, mode] : task.accesses) {
    if (!reads(mode)) {
      continue;
    }
    const HandleState& hs = handles_[h];
    for (std::size_t d = 0; d < out.size(); ++d) {
      if (!hs.replicas[d].valid) {
        out[d] += copy_seconds(*devices_[d], hs.bytes);
      }
    }
  }
}

// The queued work a task waits for on `d`: the whole queue (StarPU's dmda), or with the sorted
// decision knob (dmdasd) only the tasks that will run before it, those of higher or equal
// priority (the queue is sorted by priority, highest first).
double RuntimeCore::queued_ahead(const DeviceState& d, int priority) const {
  if (!knobs_.sorted_decision || d.queue.empty() || priority <= state(d.queue.back()).priority) {
    return d.queued_s;
  }
  double ahead = 0;
  for (TaskId q : d.queue) {
    if (state(q).priority < priority) {
      break;
    }
    ahead += state(q).queued_cost_s;
  }
  return ahead;
}

DeviceView RuntimeCore::view_of(int device, const TaskState& task, double now) const {
  DeviceView v;
  fill_view(device, task, now, transfer_estimate(device, task), v);
  return v;
}

void RuntimeCore::fill_view(int device, const TaskState& task, double now, double transfer,
                            DeviceView& v) const {
  const DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  v.eligible = eligible(device, task);
  v.weight = d.weight;
  v.queued = d.queue.size();
  // An idle device's thread must be scheduled before it starts anything; every task costs its
  // device the dispatch overhead on top of its run time.
  const double start = d.active     ? now
                       : d.sleeping ? now + d.wake_latency_s
                                    : now + d.poll_latency_s;
  v.available_at = std::max(start, d.running_end_s) + queued_ahead(d, task.priority) + d.overhead_s;
  v.relative_speed = d.relative_speed;
  v.predicted.reset();
  v.calibrated = false;
  v.transfer = 0;
  if (v.eligible) {
    const ModelSlot& slot = model_slot(device, task);
    if (!cached_prediction_serves(slot, task)) {
      predict_uncached(device, task);
    }
    if (slot.cached) {
      v.predicted = slot.cached_s;
      v.calibrated = slot.cached->calibrated;
    }
    v.transfer = transfer;
  }
}

void RuntimeCore::make_ready(TaskId id, int releasing_device, std::chrono::nanoseconds at) {
  TaskState& t = state(id);
  if (options_.keep_task_records) {
    t.ready = at.count() >= 0 ? at : now();
  }
  if (!t.dependency_error.empty()) {
    finish(id, t.dependency_error, releasing_device);
    return;
  }
  place(id, releasing_device, at);
}

void RuntimeCore::place(TaskId id, int releasing_device, std::chrono::nanoseconds at) {
  TaskState& t = state(id);
  t.phase = TaskPhase::kQueued;
  const int n = static_cast<int>(devices_.size());
  int target = -1;
  if (t.planned >= 0 && eligible(t.planned, t)) {
    target = t.planned;
    if (options_.keep_task_records) {
      t.placement.set = false;
      t.reason = fmt::format("heft: dev{} by the plan made at submit", target);
    }
    if (auto p = predict(target, t)) {
      t.predicted_s = std::chrono::duration<double>(p->time).count() /
                      devices_[static_cast<std::size_t>(target)]->weight;
    }
  } else {
    SystemView& view = scratch_view_;  // reused: no allocation per placement
    view.now = std::chrono::duration<double>(at.count() >= 0 ? at : now()).count();
    view.devices.resize(devices_.size());
    transfer_estimates(t, scratch_transfer_);
    bool any = false;
    for (int d = 0; d < n; ++d) {
      const auto i = static_cast<std::size_t>(d);
      fill_view(d, t, view.now, scratch_transfer_[i], view.devices[i]);  // in place: no copy
      any = any || view.devices[i].eligible;
    }
    if (!any) {
      bool all_failed = true;
      for (std::size_t d = 0; d < devices_.size(); ++d) {
        all_failed =
            all_failed && (devices_[d]->failed || codelets_.at(t.codelet.get()).impl[d] < 0);
      }
      if (all_failed) {
        finish(id, "no device left that can run it", -1);
      } else {
        t.phase = TaskPhase::kWaiting;
        parked_.push_back(id);
      }
      return;
    }
    const bool records = options_.keep_task_records;
    if (records) {
      t.reason.clear();
    }
    target = policy_->place(view, knobs_, releasing_device, records ? &t.reason : nullptr);
    if (records) {
      // Unless a rule of the policy gave its own, the reason is formatted on request from what
      // the decision saw (select_device is pure): formatting it here cost more than deciding.
      t.placement.set = t.reason.empty();
      if (t.placement.set) {
        t.placement.policy = policy_->kind();
        t.placement.knobs = knobs_;
        t.placement.view.now = view.now;
        t.placement.view.round_robin_next = view.round_robin_next;
        t.placement.view.devices.assign(view.devices.begin(), view.devices.end());
      }
    }
    if (policy_->shared_queue()) {
      insert_by_priority(shared_queue_, id);
      work_epoch_.fetch_add(1, std::memory_order_release);
      for (int d = 0; d < n; ++d) {
        DeviceState& ds = *devices_[static_cast<std::size_t>(d)];
        if (ds.sleeping && eligible(d, t)) {
          ds.sleeping = false;
          ds.cv.notify_one();
          break;
        }
      }
      return;
    }
    const DeviceView& chosen = view.devices[static_cast<std::size_t>(target)];
    t.predicted_s = chosen.predicted ? *chosen.predicted / chosen.weight : 0;
    t.calibrated = chosen.calibrated;
  }
  enqueue(target, id);
  if (policy_->steals()) {
    // Wake one idle device: it may steal.
    for (auto& d : devices_) {
      if (d->sleeping && !d->failed && !d->drained) {
        d->sleeping = false;
        d->cv.notify_one();
        break;
      }
    }
  }
}

bool RuntimeCore::missing_input(int device, const TaskState& t) const {
  const auto dev_index = static_cast<std::size_t>(device);
  return std::any_of(t.accesses.begin(), t.accesses.end(), [&](const auto& access) {
    const Replica& r = handles_[access.first].replicas[dev_index];
    return reads(access.second) && !r.valid && !r.fetching;
  });
}

std::size_t RuntimeCore::insert_by_priority(std::deque<TaskId>& queue, TaskId id) const {
  const int priority = state(id).priority;
  auto pos = queue.end();
  while (pos != queue.begin() && state(*std::prev(pos)).priority < priority) {
    --pos;
  }
  const auto index = static_cast<std::size_t>(pos - queue.begin());
  // push_back at the end: deque::insert at the position of an empty deque is a push_front,
  // which allocates a node that the next pop_front frees (a malloc and a free per task when a
  // queue holds one task at a time).
  if (pos == queue.end()) {
    queue.push_back(id);
  } else {
    queue.insert(pos, id);
  }
  return index;
}

void RuntimeCore::enqueue(int device, TaskId id) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  TaskState& t = state(id);
  t.device = device;
  const std::size_t index = insert_by_priority(d.queue, id);
  t.queued_cost_s = t.predicted_s + d.overhead_s;
  d.queued_s += t.queued_cost_s;
  // A prefetch pass only looks at the first prefetch_depth tasks of the queue, and only inputs
  // missing here need one: most pushes (a task released where its data already is) need none.
  d.prefetch_wanted =
      d.prefetch_wanted ||
      (index < static_cast<std::size_t>(options_.prefetch_depth) && missing_input(device, t));
  if (!d.active && d.idle_push.count() < 0) {
    d.idle_push = now();
    d.idle_push_woke = d.sleeping;
  }
  d.epoch.fetch_add(1, std::memory_order_release);
  if (policy_->steals()) {
    work_epoch_.fetch_add(1, std::memory_order_release);
  }
  if (d.sleeping) {
    d.sleeping = false;
    d.cv.notify_one();
  }
}

void RuntimeCore::finish(TaskId id, std::string error, int releasing_device,
                         std::chrono::nanoseconds at) {
  TaskState& t = state(id);
  t.finished = at.count() >= 0 ? at : now();
  last_finish_ = std::max(last_finish_, t.finished);
  const bool failed = !error.empty();
  if (failed) {
    t.phase = TaskPhase::kFailed;
    t.error = std::move(error);
    failures_.push_back(failure_of(id, t));
  } else {
    t.phase = TaskPhase::kDone;
  }
  // In place, by index (the buffer is kept for the slot's next task): releasing a dependant
  // never adds a dependant to a settled task.
  for (std::size_t i = 0; i < t.dependents.size(); ++i) {
    const auto [s, inherits_failure] = t.dependents[i];
    TaskState& st = state(s);
    if (failed && inherits_failure && st.dependency_error.empty()) {
      st.dependency_error = fmt::format("dependency task {} failed", id);
    }
    if (--st.pending == 0) {
      make_ready(s, releasing_device, t.finished);  // read just now, or just before the call
    }
  }
  t.dependents.clear();
  --unfinished_;
  // wait_all waits for all tasks, write_back for one handle's writers, the destructor for parked
  // tasks to become hopeless. Nobody else is woken: a waiter woken per task would cost a
  // context switch per task.
  if (unfinished_ == 0 || settle_waiters_ > 0 || !parked_.empty()) {
    all_done_.notify_all();
  }
}

void RuntimeCore::requeue_from(int device) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  std::deque<TaskId> keep;
  std::vector<TaskId> move;
  for (TaskId id : d.queue) {
    if (state(id).prefetched_on == device && !d.failed) {
      keep.push_back(id);
    } else {
      move.push_back(id);
    }
  }
  d.queue = std::move(keep);
  d.queued_s = 0;
  for (TaskId id : d.queue) {
    d.queued_s += state(id).queued_cost_s;
  }
  for (TaskId id : move) {
    state(id).planned = -1;
    state(id).prefetched_on = -1;
    place(id, -1);
  }
}

Status RuntimeCore::wait_all() {
  Lock lock = acquire();
  all_done_.wait(lock, [&] { return unfinished_ == 0; });
  reclaim();
  if (failures_.empty()) {
    return {};
  }
  std::string message =
      fmt::format("{} task{} failed:", failures_.size(), failures_.size() == 1 ? "" : "s");
  for (const TaskFailure& f : failures_) {
    message += fmt::format(" task {} ({}): {};", f.task, f.name, f.error);
  }
  message.pop_back();
  failures_.clear();
  return fail(Errc::kInternal, message);
}

std::vector<TaskFailure> RuntimeCore::failures() const {
  Lock lock = acquire();
  std::vector<TaskFailure> out = forgotten_failures_;
  for (TaskId id = tasks_.base(); id < next_id(); ++id) {
    if (state(id).phase == TaskPhase::kFailed) {
      out.push_back(failure_of(id, state(id)));
    }
  }
  return out;
}

void RuntimeCore::set_policy(PolicyKind kind) {
  Lock lock = acquire();
  policy_ = policy_of(kind);
  if (!policy_->shared_queue()) {
    std::deque<TaskId> shared = std::move(shared_queue_);
    shared_queue_.clear();
    for (TaskId id : shared) {
      place(id, -1);
    }
  }
}

PolicyKind RuntimeCore::policy() const {
  Lock lock = acquire();
  return policy_->kind();
}

void RuntimeCore::set_knobs(const PolicyKnobs& knobs) {
  Lock lock = acquire();
  knobs_ = knobs;
}

Status RuntimeCore::set_weight(int device, double weight) {
  if (device < 0 || device >= devices()) {
    return fail(Errc::kInvalidArgument,
                fmt::format("set_weight: device {}: expected 0..{}", device, devices() - 1));
  }
  if (!(weight > 0 && weight <= 1)) {
    return fail(Errc::kInvalidArgument,
                fmt::format("set_weight: weight {}: expected a value in (0, 1]", weight));
  }
  Lock lock = acquire();
  devices_[static_cast<std::size_t>(device)]->weight = weight;
  return {};
}

Status RuntimeCore::set_drained(int device, bool drained) {
  if (device < 0 || device >= devices()) {
    return fail(Errc::kInvalidArgument,
                fmt::format("set_drained: device {}: expected 0..{}", device, devices() - 1));
  }
  Lock lock = acquire();
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  d.drained = drained;
  if (drained) {
    requeue_from(device);
  } else {
    std::vector<TaskId> parked = std::move(parked_);
    parked_.clear();
    for (TaskId id : parked) {
      place(id, -1);
    }
    work_epoch_.fetch_add(1, std::memory_order_release);
    d.cv.notify_one();
  }
  return {};
}

RunRecord RuntimeCore::records() const {
  Lock lock = acquire();
  RunRecord run;
  run.policy = std::string(to_string(policy_->kind()));
  if (first_submit_.count() >= 0) {
    run.elapsed = last_finish_ - first_submit_;
  }
  if (options_.keep_task_records) {
    for (TaskId id = std::max(records_from_, tasks_.base()); id < next_id(); ++id) {
      const TaskState& t = state(id);
      TaskRecord r;
      r.id = id;
      r.type = t.codelet ? t.codelet->type : "";
      r.name = t.name.empty() ? r.type : t.name;
      r.device = t.phase == TaskPhase::kDone || t.phase == TaskPhase::kFailed ||
                         t.phase == TaskPhase::kRunning
                     ? t.device
                     : -1;
      if (t.started.count() == 0 && t.phase == TaskPhase::kFailed) {
        r.device = -1;  // failed before running (a dependency)
      }
      r.priority = t.priority;
      r.status = t.phase == TaskPhase::kDone     ? TaskStatus::kDone
                 : t.phase == TaskPhase::kFailed ? TaskStatus::kFailed
                                                 : TaskStatus::kPending;
      r.error = t.error;
      r.submitted = t.submitted;
      r.ready = t.ready;
      r.started = t.started;
      r.finished = t.finished;
      r.predicted = std::chrono::nanoseconds(static_cast<std::int64_t>(t.predicted_s * 1e9));
      r.transfer_bytes = t.transfer_bytes;
      r.transfer_time = t.transfer_time;
      r.reason = reason_of(t);
      r.stolen = t.stolen;
      run.tasks.push_back(std::move(r));
    }
    run.transfers = transfers_;
  }
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    const DeviceState& ds = *devices_[d];
    const auto ns = [](double seconds) {
      return std::chrono::nanoseconds(static_cast<std::int64_t>(seconds * 1e9));
    };
    run.devices.push_back({static_cast<int>(d), ds.name, ds.kind, ds.busy, ds.tasks_run,
                           ds.tasks_batched, ns(ds.overhead_s), ns(ds.poll_latency_s),
                           ns(ds.wake_latency_s), ds.drained, ds.failed, ds.buffers_allocated,
                           ds.buffers_reused});
  }
  for (const auto& [key, link] : links_) {
    run.links.push_back(link);
  }
  run.tasks_held = tasks_.size();
  return run;
}

void RuntimeCore::reset_records() {
  Lock lock = acquire();
  records_from_ = next_id();
  transfers_.clear();
  links_.clear();
  first_submit_ = std::chrono::nanoseconds(-1);
  last_finish_ = std::chrono::nanoseconds(0);
  for (auto& d : devices_) {
    d->busy = std::chrono::nanoseconds(0);
    d->tasks_run = 0;
    d->tasks_batched = 0;
    d->buffers_allocated = 0;
    d->buffers_reused = 0;
  }
}

Result<std::string> RuntimeCore::explain(TaskId task) const {
  Lock lock = acquire();
  if (task >= next_id()) {
    return fail(Errc::kNotFound, fmt::format("explain: task {} was not submitted", task));
  }
  if (!options_.keep_task_records) {
    return fail(
        Errc::kNotFound,
        fmt::format("explain: task {}: reasons are not kept (keep_task_records=false)", task));
  }
  return reason_of(state(task));
}

std::string RuntimeCore::reason_of(const TaskState& t) const {
  if (!t.placement.set) {
    return t.reason;
  }
  return select_device(t.placement.policy, t.placement.view, t.placement.knobs, true).reason +
         t.reason;
}

PerfModels RuntimeCore::models() const {
  Lock lock = acquire();
  for (auto& [key, slots] : model_slots_) {
    for (ModelSlot& slot : slots) {
      flush(slot);
    }
  }
  return models_;
}

Status RuntimeCore::save_models(const std::optional<std::filesystem::path>& path) const {
  const auto target = path ? path : options_.model_file;
  if (!target) {
    return fail(Errc::kInvalidArgument,
                "save_models: no path given and RuntimeOptions::model_file is not set");
  }
  const PerfModels snapshot = models();
  return snapshot.save(*target);
}

}  // namespace detail

Result<std::unique_ptr<Runtime>> Runtime::create(std::vector<DeviceSpec> devices,
                                                 RuntimeOptions options) {
  if (devices.empty()) {
    return fail(Errc::kInvalidArgument, "runtime: expected at least one device");
  }
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (devices[i].device == nullptr) {
      return fail(Errc::kInvalidArgument, fmt::format("runtime: device {} is null", i));
    }
  }
  if (options.prefetch_depth < 0) {
    return fail(Errc::kInvalidArgument,
                fmt::format("runtime: prefetch_depth {}: expected >= 0", options.prefetch_depth));
  }
  if (!(options.knobs.alpha >= 0) || !(options.knobs.beta >= 0)) {
    return fail(Errc::kInvalidArgument, "runtime: dmda alpha and beta must be >= 0");
  }
  PerfModels models(options.models);
  if (options.model_file) {
    auto loaded = PerfModels::load(*options.model_file, options.models);
    if (!loaded) {
      return tl::unexpected(std::move(loaded.error()).with_context("runtime"));
    }
    models = std::move(*loaded);
  }
  auto core = std::make_unique<detail::RuntimeCore>(std::move(devices), std::move(options),
                                                    std::move(models));
  ACCO_RETURN_IF_ERROR(core->start(), "runtime");
  return std::unique_ptr<Runtime>(new Runtime(std::move(core)));
}

Runtime::Runtime(std::unique_ptr<detail::RuntimeCore> core) : core_(std::move(core)) {}
Runtime::~Runtime() = default;

Result<DataHandle> Runtime::register_data(void* host_ptr, std::size_t bytes) {
  return core_->register_data(host_ptr, bytes);
}
Status Runtime::write_back(DataHandle handle) {
  return core_->write_back(handle, false);
}
Status Runtime::unregister(DataHandle handle) {
  return core_->write_back(handle, true);
}
Result<TaskId> Runtime::submit(Task task) {
  return core_->submit(std::move(task));
}
Result<std::vector<TaskId>> Runtime::submit_graph(std::vector<Task> tasks) {
  return core_->submit_graph(std::move(tasks));
}
Status Runtime::wait_all() {
  return core_->wait_all();
}
std::vector<TaskFailure> Runtime::failures() const {
  return core_->failures();
}
void Runtime::set_policy(PolicyKind kind) {
  core_->set_policy(kind);
}
PolicyKind Runtime::policy() const {
  return core_->policy();
}
void Runtime::set_knobs(const PolicyKnobs& knobs) {
  core_->set_knobs(knobs);
}
Status Runtime::set_weight(int device, double weight) {
  return core_->set_weight(device, weight);
}
Status Runtime::set_drained(int device, bool drained) {
  return core_->set_drained(device, drained);
}
int Runtime::devices() const {
  return core_->devices();
}
RunRecord Runtime::records() const {
  return core_->records();
}
void Runtime::reset_records() {
  core_->reset_records();
}
Result<std::string> Runtime::explain(TaskId task) const {
  return core_->explain(task);
}
PerfModels Runtime::models() const {
  return core_->models();
}
Status Runtime::save_models(const std::optional<std::filesystem::path>& path) const {
  return core_->save_models(path);
}

}  // namespace acco::sched
