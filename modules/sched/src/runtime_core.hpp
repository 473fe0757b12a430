// The runtime's shared state and the methods that work on it, split by concern into files of
// their own. One mutex (mu_) guards it all; data moves and implementations run with it released.
// Where each concern lives:
//   runtime.cpp         construction, start and stop, the clock, settings (policy, knobs, weights,
//                       drain), the public Runtime facade
//   task_table.hpp/cpp  TaskState, TaskTable, which tasks are settled, reclaiming settled ones
//   submission.cpp      register_data, write_back, validating tasks, dependencies, submit,
//                       submit_graph
//   heft_plan.cpp       a graph's HEFT plan (policies that plan graphs) or upward-rank priorities
//   placement.cpp       a ready task to a queue: device views, transfer estimates, the policy's
//                       choice (../policies/), the shared queue, requeueing a drained device
//   predictions.cpp     model slots, predictions cached per slot, learning from run times
//   completion.cpp      publishing an outcome, releasing dependants, failed tasks and devices,
//                       wait_all, failures
//   records.cpp         run records, transfer and link records, explain, models, save_models
//   device_worker.cpp   each device's thread: taking tasks (own queue, shared queue, stealing),
//                       running tasks and batches, the dispatch overhead it measures
//   async_launch.hpp/cpp  TaskContext::queue, tasks launched behind each other and completed
//   replica_cache.cpp   replicas' buffers, eviction to stay within the budget, picking a source
//   buffer_cache.hpp/cpp  DeviceMemory and its BufferCache (pure)
//   data_movement.cpp   demand copies, prefetches, copies in flight
//   copy_cost.hpp/cpp   CopyCostModel: what a demand copy is expected to take (pure)
//   replicas.hpp        HandleState, Replica; device_state.hpp: DeviceState and its parts
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/sched/policy.hpp"
#include "acco/sched/runtime.hpp"
#include "acco/transfer/engine.hpp"

#include "async_launch.hpp"
#include "device_state.hpp"
#include "replicas.hpp"
#include "task_table.hpp"

namespace acco::sched::detail {

// Takes `lock`'s mutex, spinning briefly before blocking: the runtime's critical sections last
// well under a microsecond, so a waiter that sleeps in the kernel (futex wait, then a wake-up
// and a context switch for the holder's unlock) pays tens of times more than the wait itself.
// Never blocking at all was tried: with several threads per CPU, spinners then starve a
// preempted holder (docs/scheduler.md, "Design notes").
void spin_lock(std::unique_lock<std::mutex>& lock);

class RuntimeCore {
 public:
  RuntimeCore(std::vector<DeviceSpec> specs, RuntimeOptions options, PerfModels models);
  ~RuntimeCore();
  RuntimeCore(const RuntimeCore&) = delete;
  RuntimeCore& operator=(const RuntimeCore&) = delete;
  RuntimeCore(RuntimeCore&&) = delete;
  RuntimeCore& operator=(RuntimeCore&&) = delete;
  Status start();

  Result<DataHandle> register_data(void* host_ptr, std::size_t bytes);
  Status write_back(DataHandle handle, bool forget);
  Result<TaskId> submit(Task task);
  Result<std::vector<TaskId>> submit_graph(std::vector<Task> tasks);
  Status wait_all();
  std::vector<TaskFailure> failures() const;
  void set_policy(PolicyKind kind);
  PolicyKind policy() const;
  void set_knobs(const PolicyKnobs& knobs);
  Status set_weight(int device, double weight);
  Status set_drained(int device, bool drained);
  Status set_headroom(int device, double headroom);
  Status set_accepting(int device, bool accepting);
  int devices() const { return static_cast<int>(devices_.size()); }
  RuntimeCounters counters() const;
  RunRecord records() const;
  void reset_records();
  Result<std::string> explain(TaskId task) const;
  PerfModels models() const;
  Status save_models(const std::optional<std::filesystem::path>& path) const;

 private:
  using Lock = std::unique_lock<std::mutex>;

  // runtime.cpp: construction, the clock, the lock, settings.
  std::chrono::nanoseconds now() const;
  double now_s() const;
  // The latest clock reading of any thread (now() keeps it): as old as the last event the
  // runtime timed. For estimates that tolerate that (a device's expected end), not measurements.
  std::chrono::nanoseconds recent() const {
    return std::chrono::nanoseconds(clock_ns_.load(std::memory_order_relaxed));
  }
  Lock acquire() const {
    Lock lock(mu_, std::defer_lock);
    spin_lock(lock);
    return lock;
  }
  Policy* policy_of(PolicyKind kind) const;

  // task_table.cpp: the task table.
  TaskId next_id() const { return tasks_.end(); }
  TaskState& state(TaskId id) {
    ACCO_CHECK(id >= tasks_.base());
    return tasks_[id];
  }
  const TaskState& state(TaskId id) const {
    ACCO_CHECK(id >= tasks_.base());
    return tasks_[id];
  }
  bool settled(TaskId id) const;      // done or failed (every dropped task is)
  bool failed_task(TaskId id) const;  // failed, dropped or not
  // Drops the settled prefix (records off): in wait_all, and when a submit starts a new chunk of
  // the task table, so a stream of tasks without any wait_all stays bounded too. Dropped tasks'
  // chunks are recycled, not freed (docs/scheduler.md, "Design notes").
  void reclaim();
  // Appends `n` tasks to the table (reclaiming first when a chunk starts).
  void grow_tasks(std::size_t n);

  // submission.cpp: registering data, validating tasks, dependencies.
  const CodeletInfo& codelet_info(const std::shared_ptr<const Codelet>& codelet);
  // Also fills the codelet cache (codelet_info) for the task's codelet.
  Status validate(const Task& task, std::size_t id, std::size_t graph_end);
  void add_task(TaskId id, Task task);
  void add_edge(TaskId from, TaskId to, bool inherits_failure = true);

  // heft_plan.cpp: a graph's HEFT plan, or its tasks' priorities.
  void plan_graph(TaskId first, TaskId end);

  // placement.cpp: a ready task to a queue.
  // `at`: the time now, if the caller has just read the clock (reading it is not free, and a
  // task would otherwise read it several times).
  void make_ready(TaskId id, int releasing_device,
                  std::chrono::nanoseconds at = std::chrono::nanoseconds(-1));
  void place(TaskId id, int releasing_device,
             std::chrono::nanoseconds at = std::chrono::nanoseconds(-1));
  // place()'s steps. The HEFT plan's device for `t`, with its prediction.
  int follow_plan(TaskState& t);
  // Every device's view of `t` into `view`; false when no device is eligible.
  bool fill_system_view(const TaskState& t, std::chrono::nanoseconds at, SystemView& view);
  // `t` can run nowhere now: it waits for a device, or fails when none is left that could run it.
  void park_or_fail(TaskId id, TaskState& t);
  // The policy's device for `t`, and what the decision saw when records are kept.
  int choose_by_policy(TaskState& t, SystemView& view, int releasing_device);
  // Into the shared queue, waking one sleeping device that can run it.
  void push_shared(TaskId id, const TaskState& t);
  void wake_one_idle_device();
  // Inserts `id` after every task of higher or equal priority (FIFO among equals); returns its
  // position.
  std::size_t insert_by_priority(std::deque<TaskId>& queue, TaskId id) const;
  void enqueue(int device, TaskId id);
  // A drained or failed device's queue goes elsewhere (what is being prefetched there stays,
  // unless it failed).
  void requeue_from(int device);
  // Places every parked task again now that `back` takes work (undrained or accepting), and
  // wakes its worker. Holds the lock.
  void place_parked(DeviceState& back);
  // `t` reads data not valid on `device` and not being fetched there.
  bool missing_input(int device, const TaskState& t) const;
  // The per-device steps of a placement are forced inline: called once per device per task,
  // their calls cost as much as their bodies.
  [[gnu::always_inline]] inline bool eligible(int device, const TaskState& task) const;
  DeviceView view_of(int device, const TaskState& task, double now) const;
  // The same into `v`, every field written, with the transfer time already known (place
  // computes every device's in one pass and fills its reused view in place).
  [[gnu::always_inline]] inline void fill_view(int device, const TaskState& task, double now,
                                               double transfer, DeviceView& v) const;
  [[gnu::always_inline]] inline double queued_ahead(const DeviceState& d, int priority) const;
  double transfer_estimate(int device, const TaskState& task) const;
  // The same for every device, in one pass over the task's data (`out` is resized).
  void transfer_estimates(const TaskState& task, std::vector<double>& out) const;

  // predictions.cpp: predictions and learning (predict itself is inline, below).
  [[gnu::always_inline]] inline std::optional<Prediction> predict(int device,
                                                                  const TaskState& task) const;
  // A calibrated prediction serves every task of the slot; one from the prior only tasks with
  // the same cost hint (tasks of one kind and size usually have the same).
  static bool cached_prediction_serves(const ModelSlot& slot, const TaskState& task) {
    return slot.cached_valid &&
           ((slot.cached && slot.cached->calibrated) || slot.cached_cost == task.cost);
  }
  // predict() when the slot's cached prediction cannot be used.
  std::optional<Prediction> predict_uncached(int device, const TaskState& task) const;
  static ModelSlot& model_slot(int device, const TaskState& task) {
    return (*task.slots)[static_cast<std::size_t>(device)];
  }
  std::vector<ModelSlot>& model_slots(const TaskState& task) const;
  void flush(ModelSlot& slot) const;
  void learn(int device, const TaskState& task, std::chrono::nanoseconds time);

  // completion.cpp: completion and failures.
  // `at`: when it finished, if the caller already read the clock.
  void finish(TaskId id, std::string error, int releasing_device,
              std::chrono::nanoseconds at = std::chrono::nanoseconds(-1));
  // Publishes an outcome under the lock; false when the device failed (the task was re-placed).
  bool complete(int device, TaskId id, Outcome outcome, double weight, Lock& lock);
  // Releases the pins of the task's first `count` accesses on `device` (acquire_data pins them
  // in order; one that failed part way says how many it pinned).
  void unpin(int device, const TaskState& t,
             std::size_t count = std::numeric_limits<std::size_t>::max());
  // Retires a device; with `salvage_data` (it failed moving data, its memory is not suspect) the
  // data whose only valid copy it holds is copied back to the host first, where it still answers.
  void fail_device(int device, const std::string& why, Lock& lock, bool salvage_data = false);

  // records.cpp: run records and reasons.
  // Its placement reason, formatted now (see TaskState::placement).
  static std::string reason_of(const TaskState& t);
  // Appends to a task's reason (when records are kept) that it moved off a failed device.
  void note_replaced(TaskState& t, int failed_device);
  // Copies `handle`'s replica on a failing device back to host memory when it is the only valid
  // copy and the device still answers (fail_device, under the lock).
  void salvage(int device, std::size_t handle);
  // A copy that failed, in the records only (no link bytes).
  void note_failed_transfer(NodeId from, NodeId to, const InflightCopy& copy, bool prefetch,
                            const std::string& error);
  void note_transfer(NodeId from, NodeId to, const InflightCopy& copy, bool prefetch,
                     bool eviction);

  // device_worker.cpp: each device's thread loop, stealing, running tasks and batches.
  void worker(int device);
  bool next_task(int device, TaskId& out, Lock& lock);
  // Releases the lock and polls work_epoch_ and the device's epoch briefly; true when work
  // may have appeared for it.
  bool poll_for_work(int device, Lock& lock);
  bool try_steal(int device, TaskId& out);
  void take_front(int device, TaskId& out);
  // `t` left `d`'s queue (already removed): its predicted cost leaves the queue's load.
  static void unqueued(DeviceState& d, const TaskState& t);
  // Runs the task, or launches it (complete_launched completes it).
  void run_task(int device, TaskId id, Lock& lock);
  // A short task whose data is valid here (no copy, no allocation): batched with its
  // successors in the queue. take_batch fills `batch` (first included) and says whether there
  // is more than `first`; false leaves the queue as it was.
  bool batchable(int device, const TaskState& t) const;
  bool take_batch(int device, TaskId first, std::vector<TaskId>& batch);
  void run_batch(int device, const std::vector<TaskId>& batch, Lock& lock);
  // Fills `context` (a buffer of the device's contexts, reused: no allocation per task).
  void fill_context(int device, const TaskState& t, TaskContext& context);
  Outcome execute(TaskId id, const TaskState& t, int device, TaskContext& context);
  // A task left the device's thread, started: counts it (DeviceTotals).
  static void note_started(DeviceState& d) {
    ++d.totals.started;
    ++d.totals.running;
  }
  static void note_overhead(DeviceState& d, std::chrono::nanoseconds gap, std::size_t tasks);

  // async_launch.cpp: asynchronous tasks launched behind each other.
  // Asynchronous tasks in flight per device: the one running and the next, submitted behind it
  // so that the device goes from one to the next without waiting for its thread.
  static constexpr std::size_t kPipelineDepth = 2;
  // The task at the front of the queue can be launched behind the ones in flight without
  // waiting for them: its codelet ran asynchronously here, and its data need no eviction (which
  // could wait for their pins).
  bool front_launchable(int device) const;
  // How long to wait before launching the front task behind the running one: until kLaunchLead
  // plus the front task's transfer estimate before the running work's expected end (then a task
  // of higher priority pushed meanwhile is launched instead), in slices of at most
  // kLaunchWaitSlice; 0 to launch now. Launching at once made a critical task wait behind two
  // launched ones (docs/scheduler.md, "Asynchronous implementations").
  double launch_wait(int device) const;
  // The last launched task is the last dependency of a task of higher priority than the front
  // one: launching the front task behind it would make that task, released when it completes,
  // wait for the front one's whole run (the device thread places a completed task's dependants
  // before it takes its next task); so the front one waits for that completion instead.
  bool releases_higher_priority(int device) const;
  static constexpr double kLaunchLead = 200e-6;
  static constexpr double kLaunchWaitSlice = 200e-6;
  // Waits for the oldest launched task (without the lock) and completes it.
  void complete_launched(int device, Lock& lock);
  // Without the lock: waits for an asynchronous outcome's end and fills its times and errors.
  void settle(DeviceState& d, Outcome& out) const;

  // replica_cache.cpp: replicas' buffers and eviction.
  Status make_room(int device, std::uint64_t bytes, Lock& lock);
  Status allocate_replica(int device, std::size_t handle, Lock& lock);
  // A device holding a valid replica (>= 0), -1 for host memory (only when allow_host), -2 none.
  int pick_source(std::size_t handle, int device, bool allow_host) const;

  // data_movement.cpp: demand copies, prefetches, copies in flight.
  // Pins the task's replicas on `device`, copying what is not valid there; `moved_at` is set to
  // when it first had to copy, wait for or allocate anything (the lock was released), and left
  // as it was otherwise.
  Status acquire_data(int device, TaskId id, Lock& lock, std::chrono::nanoseconds& moved_at,
                      std::size_t& pinned);
  // The first time data moves for a task (a copy, a wait for one, an allocation): now.
  void mark_moved(std::chrono::nanoseconds& moved_at) const;
  // acquire_data's first half: a buffer for each of the task's accesses on `device`, pinned in
  // order (`pinned` counts them); kNotFound for data that is lost.
  Status pin_replicas(int device, const TaskState& t, Lock& lock,
                      std::chrono::nanoseconds& moved_at, std::size_t& pinned);
  void prefetch(int device, Lock& lock);
  // Prefetches for the devices that were pushed tasks (StarPU prefetches at push time): called
  // where the pushing thread may release the lock, after a completion and after a submit.
  void prefetch_pushed(Lock& lock);
  static Result<transfer::Transfer> issue(DeviceState& d, const InflightCopy& copy);
  // Issues `copies` (the first that cannot be issued stops the rest) and waits for those issued,
  // without the lock; each failure's message in `errors` (same index). The first failure.
  static Status issue_and_wait(DeviceState& d, std::vector<InflightCopy>& copies,
                               std::vector<std::string>& errors);
  Status wait_inflight(int device, std::size_t handle, Lock& lock);
  void drain_inflight(int device, Lock& lock);

  std::vector<std::unique_ptr<DeviceState>> devices_;
  RuntimeOptions options_;
  const std::chrono::steady_clock::time_point start_;
  // See recent(). Written by every thread that reads the clock: on a cache line of its own, not
  // the mutex's.
  alignas(64) mutable std::atomic<std::int64_t> clock_ns_{0};

  alignas(64) mutable std::mutex mu_;
  std::condition_variable all_done_;
  std::size_t settle_waiters_ = 0;  // write_back calls waiting on all_done_
  std::condition_variable pins_released_;
  bool stop_ = false;
  // Bumped whenever work appears for any device (the shared queue, a push under ws where
  // anyone may steal, an undrain, stop); pushes to one device bump its own epoch. An idle device
  // polls both for a short while before sleeping, so a steady stream of small tasks does not pay
  // a futex wake-up and a context switch per task, and idle devices do not all wake for work
  // that is not theirs.
  std::atomic<std::uint64_t> work_epoch_{0};
  // One policy object per kind, so that each keeps its state (round-robin's turn) across
  // set_policy; `policy_` is the current one.
  std::vector<std::unique_ptr<Policy>> policies_;
  Policy* policy_ = nullptr;
  PolicyKnobs knobs_;
  // Mutable: predictions are cached and batched samples flushed from const queries, always
  // under mu_.
  mutable PerfModels models_;
  // (codelet, size class) -> one slot per device: one lookup per placement.
  mutable std::unordered_map<std::uint64_t, std::vector<ModelSlot>> model_slots_;
  SystemView scratch_view_;
  std::vector<double> scratch_transfer_;
  // With records off, the settled tasks at the front are dropped (reclaim), so a long run holds
  // only the tasks not yet settled (and the rest of their chunk). A dropped task that failed is
  // remembered (dependants, write_back and failures() need it).
  TaskTable tasks_;
  std::vector<TaskFailure> forgotten_failures_;  // of dropped tasks, in id order
  TaskId records_from_ = 0;                      // reset_records moves this
  std::deque<HandleState> handles_;
  std::deque<TaskId> shared_queue_;  // policies with one (eager)
  std::vector<TaskId> parked_;       // no eligible device now (all drained)
  std::unordered_map<const Codelet*, CodeletInfo> codelets_;
  // The last codelet and model slots looked up: streams of one kind of task skip the hash
  // lookups (map nodes never move; codelets are kept alive by their CodeletInfo).
  const CodeletInfo* last_codelet_ = nullptr;
  mutable std::uint64_t last_slots_key_ = ~std::uint64_t{0};
  mutable std::vector<ModelSlot>* last_slots_ = nullptr;
  std::size_t unfinished_ = 0;
  std::vector<TaskFailure> failures_;
  std::vector<TransferRecord> transfers_;
  std::map<std::pair<NodeId, NodeId>, LinkRecord> links_;
  std::uint64_t use_tick_ = 0;
  std::chrono::nanoseconds first_submit_{-1};
  std::chrono::nanoseconds last_finish_{0};
};

inline bool RuntimeCore::eligible(int device, const TaskState& task) const {
  const DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  return !d.failed && !d.drained && d.accepting && task.bytes <= d.memory.budget &&
         task.info->impl[static_cast<std::size_t>(device)] >= 0;
}

inline std::optional<Prediction> RuntimeCore::predict(int device, const TaskState& task) const {
  const ModelSlot& slot = model_slot(device, task);
  if (cached_prediction_serves(slot, task)) {
    return slot.cached;
  }
  return predict_uncached(device, task);
}

}  // namespace acco::sched::detail
