// A task's end: publishing what it wrote, learning its run time, releasing its dependants;
// failed tasks and failed devices; wait_all and failures.
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "runtime_core.hpp"

namespace acco::sched::detail {

namespace {

std::chrono::nanoseconds scaled(std::chrono::nanoseconds t, double factor) {
  return std::chrono::nanoseconds(
      static_cast<std::int64_t>(static_cast<double>(t.count()) * factor));
}

}  // namespace

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
  if (t.on_done) {
    const bool started = t.started.count() > 0;
    t.on_done({id, started ? t.device : -1,
               started ? std::chrono::duration<double>(t.finished - t.started).count() : 0,
               t.error});
    t.on_done = nullptr;
  }
  --unfinished_;
  // wait_all waits for all tasks, write_back for one handle's writers, the destructor for parked
  // tasks to become hopeless. Nobody else is woken: a waiter woken per task would cost a
  // context switch per task.
  if (unfinished_ == 0 || settle_waiters_ > 0 || !parked_.empty()) {
    all_done_.notify_all();
  }
}

void RuntimeCore::unpin(int device, const TaskState& t, std::size_t count) {
  const auto dev_index = static_cast<std::size_t>(device);
  for (const auto& [h, mode] : t.accesses) {
    if (count-- == 0) {
      break;
    }
    Replica& r = handles_[h].replicas[dev_index];
    if (r.pins > 0 && r.buffer) {
      --r.pins;
      r.last_use = ++use_tick_;
    }
  }
}

bool RuntimeCore::complete(int device, TaskId id, Outcome outcome, double weight, Lock& lock) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  const auto dev_index = static_cast<std::size_t>(device);
  TaskState& t = state(id);
  t.started = outcome.started;
  unpin(device, t);
  --d.totals.running;
  if (!outcome.device_error.empty()) {
    fail_device(device, outcome.device_error, lock);
    t.phase = TaskPhase::kQueued;
    place(id, -1);
    note_replaced(t, device);
    return false;
  }
  d.counters.busy += outcome.finished - outcome.started;
  ++d.counters.tasks_run;
  d.totals.run += outcome.finished - outcome.started;
  d.totals.wait += std::max(std::chrono::nanoseconds(0), outcome.started - t.ready);
  ++(outcome.error.empty() ? d.totals.finished : d.totals.failed);
  if (!outcome.error.empty()) {
    finish(id, fmt::format("threw on dev{}: {}", device, outcome.error), device);
    return true;
  }
  for (const auto& [h, mode] : t.accesses) {
    if (!writes(mode)) {
      continue;
    }
    HandleState& hs = handles_[h];
    for (std::size_t r = 0; r < hs.replicas.size(); ++r) {
      hs.replicas[r].valid = r == dev_index;
    }
    hs.host_valid = false;
    hs.lost.clear();
    ++hs.version;
  }
  // Normalised to full weight, so a slowed device's model stays the device's own.
  learn(device, t, scaled(outcome.finished - outcome.started, weight));
  finish(id, "", device, outcome.finished);
  return true;
}

void RuntimeCore::note_replaced(TaskState& t, int failed_device) {
  ++devices_[static_cast<std::size_t>(failed_device)]->moved_away;
  if (options_.keep_task_records) {
    t.reason += fmt::format("; re-placed: dev{} failed ({})", failed_device,
                            devices_[static_cast<std::size_t>(failed_device)]->failure);
  }
}

void RuntimeCore::salvage(int device, std::size_t handle) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  HandleState& hs = handles_[handle];
  const Replica& r = hs.replicas[static_cast<std::size_t>(device)];
  if (!r.valid || !hs.registered || hs.host_valid || hs.host_writing || !r.buffer ||
      pick_source(handle, device, true) != -2) {
    return;
  }
  // The only valid copy is on the failing device. A device retired because a copy or an
  // allocation failed may still answer: one plain copy back to host memory (synchronous, under
  // the lock: a failure path) saves the data; a lost device refuses it and the data is lost.
  // Not after a task's own DeviceFailure (an uncorrectable ECC error, a device off the bus):
  // its memory is not to be trusted then.
  InflightCopy copy{handle, device, hs.host, r.buffer->data(), hs.bytes, {}, false, now()};
  if (const Status saved = d.spec.device->copy(hs.host, r.buffer->data(), hs.bytes); saved) {
    hs.host_valid = true;
    note_transfer(device + 1, kHostNode, copy, false, false);
  } else {
    note_failed_transfer(device + 1, kHostNode, copy, false,
                         "salvaging the only valid copy: " + saved.error().message);
  }
}

void RuntimeCore::fail_device(int device, const std::string& why, Lock& lock, bool salvage_data) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  if (!d.failed) {
    d.failure = why;
    d.failed_at = now();
  }
  d.failed = true;
  drain_inflight(device, lock);
  for (std::size_t h = 0; h < handles_.size(); ++h) {
    HandleState& hs = handles_[h];
    Replica& r = hs.replicas[static_cast<std::size_t>(device)];
    if (salvage_data) {
      salvage(device, h);
    }
    // Buffers stay allocated (other devices may be reading them); they are never valid again.
    const bool was_valid = r.valid;
    r.valid = false;
    if (was_valid && hs.registered && hs.lost.empty() && pick_source(h, device, true) == -2) {
      hs.lost = fmt::format("its only valid copy was on dev{}, which failed: {}", device, why);
    }
  }
  requeue_from(device);
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

}  // namespace acco::sched::detail
