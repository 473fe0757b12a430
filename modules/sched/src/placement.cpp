// A ready task to a queue: the devices as the policy sees them (eligibility, load, predictions,
// transfer estimates), the policy's choice, the shared queue, and requeueing from a drained or
// failed device.
#include <algorithm>
#include <deque>
#include <iterator>
#include <vector>

#include <fmt/format.h>

#include "runtime_core.hpp"

namespace acco::sched::detail {

double RuntimeCore::transfer_estimate(int device, const TaskState& task) const {
  const DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  double seconds = 0;
  for (const auto& [h, mode] : task.accesses) {
    if (reads(mode) && !handles_[h].replicas[static_cast<std::size_t>(device)].valid) {
      seconds += d.copy_cost.seconds(handles_[h].bytes);
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
        out[d] += devices_[d]->copy_cost.seconds(hs.bytes);
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
  v.weight = d.weight * d.headroom;
  v.queued = d.queue.size();
  // An idle device's thread must be scheduled before it starts anything; every task costs its
  // device the dispatch overhead on top of its run time.
  const double start = d.worker.active     ? now
                       : d.worker.sleeping ? now + d.costs.wake_latency_s
                                           : now + d.costs.poll_latency_s;
  v.available_at =
      std::max(start, d.running_end_s) + queued_ahead(d, task.priority) + d.costs.overhead_s;
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

int RuntimeCore::follow_plan(TaskState& t) {
  const int target = t.planned;
  if (options_.keep_task_records) {
    t.placement.set = false;
    t.reason = fmt::format("heft: dev{} by the plan made at submit", target);
  }
  if (auto p = predict(target, t)) {
    const DeviceState& d = *devices_[static_cast<std::size_t>(target)];
    t.predicted_s = std::chrono::duration<double>(p->time).count() / (d.weight * d.headroom);
  }
  return target;
}

bool RuntimeCore::fill_system_view(const TaskState& t, std::chrono::nanoseconds at,
                                   SystemView& view) {
  view.now = std::chrono::duration<double>(at.count() >= 0 ? at : now()).count();
  view.devices.resize(devices_.size());
  transfer_estimates(t, scratch_transfer_);
  bool any = false;
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    fill_view(static_cast<int>(i), t, view.now, scratch_transfer_[i],
              view.devices[i]);  // in place: no copy
    any = any || view.devices[i].eligible;
  }
  return any;
}

void RuntimeCore::park_or_fail(TaskId id, TaskState& t) {
  bool all_failed = true;
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    all_failed = all_failed && (devices_[d]->failed || codelets_.at(t.codelet.get()).impl[d] < 0);
  }
  if (all_failed) {
    finish(id, "no device left that can run it", -1);
  } else {
    t.phase = TaskPhase::kWaiting;
    parked_.push_back(id);
  }
}

int RuntimeCore::choose_by_policy(TaskState& t, SystemView& view, int releasing_device) {
  const bool records = options_.keep_task_records;
  if (records) {
    t.reason.clear();
  }
  const int target = policy_->place(view, knobs_, releasing_device, records ? &t.reason : nullptr);
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
  return target;
}

void RuntimeCore::push_shared(TaskId id, const TaskState& t) {
  insert_by_priority(shared_queue_, id);
  work_epoch_.fetch_add(1, std::memory_order_release);
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    DeviceState& ds = *devices_[d];
    if (ds.worker.sleeping && eligible(static_cast<int>(d), t)) {
      ds.worker.sleeping = false;
      ds.worker.cv.notify_one();
      break;
    }
  }
}

void RuntimeCore::wake_one_idle_device() {
  for (auto& d : devices_) {
    if (d->worker.sleeping && !d->failed && !d->drained && d->accepting) {
      d->worker.sleeping = false;
      d->worker.cv.notify_one();
      break;
    }
  }
}

void RuntimeCore::place(TaskId id, int releasing_device, std::chrono::nanoseconds at) {
  TaskState& t = state(id);
  t.phase = TaskPhase::kQueued;
  int target = -1;
  if (t.planned >= 0 && eligible(t.planned, t)) {
    target = follow_plan(t);
  } else {
    SystemView& view = scratch_view_;  // reused: no allocation per placement
    if (!fill_system_view(t, at, view)) {
      park_or_fail(id, t);
      return;
    }
    target = choose_by_policy(t, view, releasing_device);
    if (policy_->shared_queue()) {
      push_shared(id, t);
      return;
    }
    const DeviceView& chosen = view.devices[static_cast<std::size_t>(target)];
    t.predicted_s = chosen.predicted ? *chosen.predicted / chosen.weight : 0;
    t.calibrated = chosen.calibrated;
  }
  enqueue(target, id);
  if (policy_->steals()) {
    wake_one_idle_device();  // it may steal
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
  t.queued_cost_s = t.predicted_s + d.costs.overhead_s;
  d.queued_s += t.queued_cost_s;
  // A prefetch pass only looks at the first prefetch_depth tasks of the queue, and only inputs
  // missing here need one: most pushes (a task released where its data already is) need none.
  d.transfers.prefetch_wanted =
      d.transfers.prefetch_wanted ||
      (index < static_cast<std::size_t>(options_.prefetch_depth) && missing_input(device, t));
  if (!d.worker.active && d.costs.idle_push.count() < 0) {
    d.costs.idle_push = now();
    d.costs.idle_push_woke = d.worker.sleeping;
  }
  d.worker.epoch.fetch_add(1, std::memory_order_release);
  if (policy_->steals()) {
    work_epoch_.fetch_add(1, std::memory_order_release);
  }
  if (d.worker.sleeping) {
    d.worker.sleeping = false;
    d.worker.cv.notify_one();
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
  if (d.failed) {
    d.moved_away += move.size();
  }
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

}  // namespace acco::sched::detail
