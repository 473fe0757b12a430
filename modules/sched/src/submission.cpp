// Registering data and writing it back; validating, adding and ordering submitted tasks.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "runtime_core.hpp"

namespace acco::sched::detail {

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
    device::Device& device = *devices_[static_cast<std::size_t>(source)]->spec.device;
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
    // A prefetch whose task went elsewhere (or failed) is waited for by nobody else: its pins,
    // here and on its source, would hold this wait for ever.
    for (std::size_t d = 0; d < h.replicas.size(); ++d) {
      if (h.replicas[d].fetching) {
        (void)wait_inflight(static_cast<int>(d), handle.id, lock);
      }
    }
    pins_released_.wait(lock, [&] {
      return std::all_of(h.replicas.begin(), h.replicas.end(),
                         [](const Replica& r) { return r.pins == 0; });
    });
    for (std::size_t d = 0; d < h.replicas.size(); ++d) {
      if (h.replicas[d].buffer) {
        devices_[d]->memory.drop(std::move(h.replicas[d].buffer), options_.buffer_cache_bytes);
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
      largest = std::max(largest, devices_[d]->memory.budget);
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
  t.on_done = std::move(task.on_done);
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
    // A copy, not the binding: clang before 16 cannot capture a structured binding.
    const auto handle_id = handle.id;
    auto it = std::find_if(t.accesses.begin(), t.accesses.end(),
                           [handle_id](const auto& a) { return a.first == handle_id; });
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

}  // namespace acco::sched::detail
