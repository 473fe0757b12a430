// The task table and which of its tasks are settled; reclaiming the settled prefix.
#include <algorithm>
#include <memory>

#include "runtime_core.hpp"

namespace acco::sched::detail {

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
  // Field by field, cheaper than assigning a fresh TaskState (docs/scheduler.md, "Design notes"):
  // every field back to its initial value, the vectors' and strings' buffers kept.
#if defined(__GLIBCXX__) && defined(__x86_64__)
  static_assert(sizeof(TaskState) == 488, "a field was added to TaskState: reset it here");
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
  t.on_done = nullptr;
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

}  // namespace acco::sched::detail
