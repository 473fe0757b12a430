// What the runtime reports: run records, transfer and link records, placement reasons
// (explain), and the models learned so far.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>

#include <fmt/format.h>

#include "runtime_core.hpp"

namespace acco::sched::detail {

RuntimeCounters RuntimeCore::counters() const {
  RuntimeCounters out;
  {
    const Lock lock = acquire();
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      const DeviceState& d = *devices_[i];
      RuntimeDeviceCounters c;
      c.device = static_cast<int>(i);
      c.name = d.name;
      c.kind = d.kind;
      c.queued = d.queue.size();
      c.running = d.totals.running;
      c.started = d.totals.started;
      c.finished = d.totals.finished;
      c.failed = d.totals.failed;
      c.task_seconds = std::chrono::duration<double>(d.totals.run).count();
      c.queue_wait_seconds = std::chrono::duration<double>(d.totals.wait).count();
      out.devices.push_back(std::move(c));
    }
  }
  // Without mu_: a copy being issued holds engine_mu, and mu_ is never taken under it.
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    DeviceTransfers& t = devices_[i]->transfers;
    const std::lock_guard<std::mutex> guard(t.engine_mu);
    transfer::EngineCounters c = t.retired;
    if (t.engine) {
      c += t.engine->counters();
    }
    out.devices[i].transfers = c;
  }
  return out;
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
    run.devices.push_back(
        {static_cast<int>(d), ds.name, ds.kind, ds.counters.busy, ds.counters.tasks_run,
         ds.counters.tasks_batched, ns(ds.costs.overhead_s), ns(ds.costs.poll_latency_s),
         ns(ds.costs.wake_latency_s), ds.drained, ds.failed, ds.memory.buffers_allocated,
         ds.memory.buffers_reused, ds.failure, ds.failed_at, ds.moved_away});
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
    d->counters.busy = std::chrono::nanoseconds(0);
    d->counters.tasks_run = 0;
    d->counters.tasks_batched = 0;
    d->memory.buffers_allocated = 0;
    d->memory.buffers_reused = 0;
    d->moved_away = 0;
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

std::string RuntimeCore::reason_of(const TaskState& t) {
  if (!t.placement.set) {
    return t.reason;
  }
  return select_device(t.placement.policy, t.placement.view, t.placement.knobs, true).reason +
         t.reason;
}

void RuntimeCore::note_failed_transfer(NodeId from, NodeId to, const InflightCopy& copy,
                                       bool prefetch, const std::string& error) {
  if (options_.keep_task_records) {
    transfers_.push_back(
        {copy.handle, from, to, copy.bytes, copy.start, now(), prefetch, false, error});
  }
}

void RuntimeCore::note_transfer(NodeId from, NodeId to, const InflightCopy& copy, bool prefetch,
                                bool eviction) {
  const std::chrono::nanoseconds end = now();
  LinkRecord& link = links_[{from, to}];
  link.from = from;
  link.to = to;
  link.bytes += copy.bytes;
  ++link.transfers;
  if (options_.keep_task_records) {
    transfers_.push_back({copy.handle, from, to, copy.bytes, copy.start, end, prefetch, eviction});
  }
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

}  // namespace acco::sched::detail
