// Tasks as the runtime keeps them: each task's state from submission to completion, the
// per-codelet facts and model slots it points into, and the table that holds them by id.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "acco/sched/perf_model.hpp"
#include "acco/sched/policy.hpp"
#include "acco/sched/runtime.hpp"

namespace acco::sched::detail {

enum class TaskPhase {
  kWaiting,
  kQueued,
  kRunning,
  kDone,
  kFailed
};

// The model behind one (codelet, size class, device): the calibrated prediction cached, and
// samples waiting to be recorded in batches.
struct ModelSlot {
  ModelKey key;
  // The last prediction, valid while `cached_valid` (until samples are next recorded): a
  // calibrated one serves every task of the slot, an uncalibrated one (the prior, or the few
  // samples there are) the tasks with the cost hint it was computed for.
  bool cached_valid = false;
  std::optional<Prediction> cached;
  CostHint cached_cost;     // the hint `cached` was computed for
  bool calibrated = false;  // the model's last prediction was calibrated (samples go in batches)
  double cached_s = 0;      // cached->time in seconds (placement reads it for every device)
  std::vector<std::chrono::nanoseconds> pending;
};

// Per-codelet facts computed once: the implementation index for every device.
struct CodeletInfo {
  std::shared_ptr<const Codelet> keep_alive;
  std::size_t id = 0;     // dense, for model slots
  std::vector<int> impl;  // per device, -1 = none
  // Per device, what its implementation did when it last ran (under the lock): kSync, or
  // kAsync when it submitted its work to TaskContext::queue(); only kAsync tasks are launched
  // behind others (a synchronous one would run beside them on the same device).
  enum Launch : std::uint8_t {
    kUnknown,
    kSync,
    kAsync
  };
  mutable std::vector<Launch> launches;
};

struct TaskState {
  std::shared_ptr<const Codelet> codelet;
  std::size_t codelet_id = 0;
  // Looked up once at submit: the implementation per device, and the model slots of this
  // (codelet, size class). Both point into node-based maps whose entries never move.
  const CodeletInfo* info = nullptr;
  std::vector<ModelSlot>* slots = nullptr;  // one per device
  std::string name;
  std::vector<std::pair<std::size_t, Access>> accesses;  // distinct handles, merged modes
  std::vector<std::size_t> access_handles;               // as submitted, for TaskContext
  int priority = 0;
  CostHint cost;
  std::function<void(const TaskEnd&)> on_done;
  std::uint64_t bytes = 0;
  int size_class = 0;
  std::size_t pending = 0;
  // Tasks waiting for this one; `inherits_failure` is false for write-after-read edges: a reader
  // that fails leaves the data as it was, so the next writer still runs.
  struct Dependent {
    TaskId task = 0;
    bool inherits_failure = true;
  };
  std::vector<Dependent> dependents;
  std::string dependency_error;  // set when a dependency failed
  TaskPhase phase = TaskPhase::kWaiting;
  int device = -1;
  int planned = -1;        // heft: the plan's device
  int prefetched_on = -1;  // inputs being fetched there ahead of time: stays there
  bool stolen = false;
  double predicted_s = 0;    // its run time on its device
  double queued_cost_s = 0;  // what it adds to its device's queue: run time plus dispatch overhead
  bool calibrated = false;
  // Why it was placed where it is, with records on: `placement` holds what a policy decision
  // saw, and its reason is formatted on request (records(), explain) by asking the pure
  // select_device again (formatting at every placement cost more than deciding); `reason` holds
  // what is appended to it (a steal) or, when `placement` is not set, the whole reason (a HEFT
  // plan, the ws owner rule).
  struct Placement {
    bool set = false;
    PolicyKind policy = PolicyKind::kDmda;
    PolicyKnobs knobs;
    SystemView view;
  } placement;
  std::string reason;
  std::string error;
  std::chrono::nanoseconds submitted{0}, ready{0}, started{0}, finished{0};
  std::uint64_t transfer_bytes = 0;
  std::chrono::nanoseconds transfer_time{0};
};

inline TaskFailure failure_of(TaskId id, const TaskState& t) {
  return {id, t.name.empty() ? t.codelet->type : t.name, t.error};
}

// Tasks by id, from `base()` (the oldest still held) to `end()` (the next id), in chunks of
// kChunk that never move, so a TaskState& stays valid while the lock is released. Chunks of
// dropped tasks are kept for reuse and a reused TaskState is reset in place, keeping its vectors'
// capacity: a steady stream of tasks allocates nothing per task (allocating per task and per
// vector was a large share of an empty task's cost; docs/scheduler.md, "Design notes").
class TaskTable {
 public:
  static constexpr std::size_t kChunk = 1024;
  // Spare chunks kept beyond those in use (about 25 MiB); more are freed.
  static constexpr std::size_t kMaxSpare = 64;

  TaskId base() const { return base_; }
  TaskId end() const { return end_; }
  std::size_t size() const { return static_cast<std::size_t>(end_ - base_); }
  TaskState& operator[](TaskId id) { return slot(id); }
  const TaskState& operator[](TaskId id) const { return slot(id); }
  // Appends `n` tasks in their initial state.
  void grow(std::size_t n);
  // Whether the next grow starts a chunk (the moment to drop settled tasks: at most once per
  // kChunk tasks).
  bool at_chunk_start() const { return end_ % kChunk == 0; }
  // Forgets the tasks below `id` (base() <= id <= end()); chunks wholly below it are recycled.
  void drop_before(TaskId id);

 private:
  // Chunks are owned through pointers, so a const table still hands out its slots.
  TaskState& slot(TaskId id) const {
    return chunks_[static_cast<std::size_t>(id / kChunk - first_chunk_)][id % kChunk];
  }
  static void reset(TaskState& t);

  std::deque<std::unique_ptr<TaskState[]>> chunks_;  // chunks_[0] holds ids from first_chunk_
  std::vector<std::unique_ptr<TaskState[]>> spare_;
  TaskId first_chunk_ = 0;
  TaskId base_ = 0;
  TaskId end_ = 0;
};

}  // namespace acco::sched::detail
