// The runtime's shared state and the two halves that work on it: the submitting side
// (runtime.cpp: dependencies, placement, completion) and each device's thread
// (device_worker.cpp: taking tasks, moving data, running, evicting). Where a task goes is the
// current Policy's (policy.hpp, policies/). One mutex guards it all; data moves and
// implementations run with it released.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/sched/runtime.hpp"
#include "acco/xfer/engine.hpp"

namespace acco::sched::detail {

struct Replica {
  std::unique_ptr<dev::Buffer> buffer;  // null until first needed there
  bool valid = false;
  int pins = 0;           // running task, in-flight copy into or out of it, prefetch
  bool fetching = false;  // a prefetch into it is in flight
  std::uint64_t last_use = 0;
};

struct HandleState {
  void* host = nullptr;
  std::size_t bytes = 0;
  bool registered = false;
  bool host_valid = true;
  std::string lost;           // why no valid copy exists any more
  std::uint64_t version = 0;  // bumped by every completed write
  // A copy into host memory is in flight. Only one at a time: a stale write-back finishing after
  // a newer one would otherwise overwrite host memory already marked valid.
  bool host_writing = false;
  std::vector<Replica> replicas;  // one per device
  std::optional<TaskId> last_writer;
  std::vector<TaskId> readers_since;  // readers after last_writer
};

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

struct CodeletInfo;

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

// Tasks by id, from `base()` (the oldest still held) to `end()` (the next id), in chunks of
// kChunk that never move, so a TaskState& stays valid while the lock is released. Chunks of
// dropped tasks are kept for reuse and a reused TaskState is reset in place, keeping its vectors'
// capacity: a steady stream of tasks allocates nothing per task (one malloc and free per task
// and per vector was a fifth of an empty task's cost, and freeing 200k tasks in wait_all a tenth).
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

// One copy into a device replica: pointers captured under the lock, moved without it.
struct InflightCopy {
  std::size_t handle = 0;
  int source = -1;  // device whose replica is read, -1 for host
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t bytes = 0;
  xfer::Transfer transfer;
  bool issued = false;
  std::chrono::nanoseconds start{0};
};

// Assumed per-direction link rate when the device does not know its link's: a PCIe 4.0 x16
// link's usual achieved rate (../shared/reference/transfer.md).
constexpr double kDefaultLinkBytesPerSecond = 24e9;

// What the work a task submitted through TaskContext::queue() threw, kept for that task: the
// queue's own error would stick and fail every task launched behind it.
struct AsyncErrors {
  std::mutex mu;
  std::string error;         // a host task threw
  std::string device_error;  // a host task threw DeviceFailure
};

// The queue an implementation sees: forwards to the device's compute queue, wrapping host tasks
// so that what they throw goes to the task's AsyncErrors.
class TaskQueue final : public dev::Queue {
 public:
  Status copy(void* dst, const void* src, std::size_t bytes) override;
  Status host_task(std::function<void()> task) override;
  Result<std::shared_ptr<dev::Event>> record() override { return inner->record(); }
  Status wait(std::shared_ptr<dev::Event> event) override { return inner->wait(std::move(event)); }
  Status synchronize() override { return inner->synchronize(); }

  dev::Queue* inner = nullptr;
  std::shared_ptr<AsyncErrors> errors;
};

// A device's compute queue for asynchronous implementations, made on first use by its thread,
// and the launch in progress (what TaskContext::queue() started for the current task).
struct AsyncLaunch {
  dev::Device* device = nullptr;
  std::chrono::steady_clock::time_point origin;  // the runtime's clock
  std::unique_ptr<dev::Queue> queue;
  // Device-clock times are placed on the runtime's clock through an event completed at a known
  // time (within half the round trip that waited for it).
  std::shared_ptr<dev::Event> reference;
  std::chrono::nanoseconds reference_at{0};
  TaskQueue facade;
  std::shared_ptr<dev::Event> start;  // of the current task; null until queue() is called
  Status ensure();                    // makes the queue and the reference event
};

// What running one implementation gave: times, and an error or a device failure.
struct Outcome {
  std::chrono::nanoseconds started{0}, finished{0};
  std::string error;
  std::string device_error;
  // Set when the implementation submitted work to TaskContext::queue(): the task was launched
  // and completes when `end` does (RuntimeCore::settle fills the rest then).
  std::shared_ptr<dev::Event> start, end;
  std::shared_ptr<AsyncErrors> errors;
};

// An asynchronous task between its launch and its completion.
struct Launched {
  TaskId id = 0;
  double weight = 1;  // the device's when it was launched
  Outcome outcome;
};

struct DeviceState {
  DeviceSpec spec;
  std::string kind;
  std::string instance;  // model key: "host:0", "cuda:0000:18:00.0"
  std::string name;
  std::uint64_t budget = 0;
  std::uint64_t used = 0;  // by replicas (the buffer cache is counted apart)
  // Buffers of dropped replicas, by size, for reuse (RuntimeOptions::buffer_cache_bytes); with
  // `used`, within the budget.
  std::multimap<std::size_t, std::unique_ptr<dev::Buffer>> spare;
  std::uint64_t spare_bytes = 0;
  std::size_t buffers_allocated = 0;
  std::size_t buffers_reused = 0;
  double link_bytes_per_second = 0;  // modelled, per direction
  double latency_s = 0;
  double link_rate() const {
    return link_bytes_per_second > 0 ? link_bytes_per_second : kDefaultLinkBytesPerSecond;
  }
  // A demand copy of b bytes into it is expected to take copy_fixed_s + b * seconds_per_byte
  // (kept so that placement, which estimates it for every device and task, needs no division):
  // 1 / link_rate() per byte, and latency_s plus what copies were measured to take beyond the
  // link's figures (issuing them, the copy thread's wake-up, a slower link than modelled), the
  // median of the last kCopySamples (note_copies), so that one copy that waited behind others
  // or for a CPU does not set it.
  double copy_fixed_s = 0;
  double seconds_per_byte = 1 / kDefaultLinkBytesPerSecond;
  static constexpr std::size_t kCopySamples = 15;
  std::array<double, kCopySamples> copy_samples{};
  std::size_t copies_noted = 0;
  double relative_speed = 1;
  std::deque<TaskId> queue;  // priority order, FIFO among equals
  double queued_s = 0;       // predicted run time of the queue, dispatch overhead included
  double running_end_s = 0;  // expected end of the running task
  // The runtime's own cost, measured on this device (EWMA), so that expected completion times
  // include it: `overhead_s` is the gap between one task's end and the start of the next when
  // the next was already waiting (bookkeeping, lock hand-offs, context switches; transfers
  // excluded); the start latencies the delay between a push to an idle device thread (polling,
  // or asleep) and the moment it takes the task. Where threads are scarce (more devices than CPUs)
  // both are large and dmda keeps short tasks on devices already awake.
  double overhead_s = 1e-6;
  double poll_latency_s = 5e-6;   // start latency while its thread polls
  double wake_latency_s = 20e-6;  // ... and once it sleeps (a futex wake and a context switch)
  bool active = true;             // its thread will look at its queue again without being woken
  std::chrono::nanoseconds idle_push{-1};     // first push since it went idle
  bool idle_push_woke = false;                // that push found the thread asleep
  std::chrono::nanoseconds previous_end{-1};  // last task's end, when the next one was waiting
  double weight = 1;
  bool drained = false;
  bool failed = false;
  bool sleeping = false;
  std::atomic<std::uint64_t> epoch{0};  // bumped when work is pushed to this device
  std::condition_variable cv;
  // Copies into or out of this device are issued through its engine by any thread: its own
  // (inputs of the task it starts, evictions) and whichever thread pushed a task to it
  // (prefetch at push time). `engine_mu` serialises them; `engine` is null once the device's
  // thread has stopped. Transfers are waited on without it.
  std::mutex engine_mu;
  std::unique_ptr<xfer::Engine> engine;
  std::vector<InflightCopy> inflight;  // prefetches in flight into this device (under mu_)
  bool prefetch_wanted = false;        // a task was pushed since its last prefetch pass
  std::chrono::nanoseconds busy{0};
  std::size_t tasks_run = 0;
  std::size_t tasks_batched = 0;
  // The contexts handed to implementations: reused by this device's thread, one per task of a
  // batch (at least one).
  std::vector<TaskContext> contexts = std::vector<TaskContext>(1);
  AsyncLaunch async;
  // Asynchronous tasks launched and not completed yet, oldest first (at most kPipelineDepth):
  // pinned, not in the queue; `running_end_s` is the expected end of the last one.
  std::deque<Launched> launched;
  std::thread thread;
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

// Takes `lock`'s mutex, spinning briefly before blocking: the runtime's critical sections last
// well under a microsecond, so a waiter that sleeps in the kernel (futex wait, then a wake-up
// and a context switch for the holder's unlock) pays tens of times more than the wait itself.
// Never blocking at all was tried: with several threads per CPU, spinners then starve a
// preempted holder (eager went from 1.3 to 2-16 us per task).
void spin_lock(std::unique_lock<std::mutex>& lock);

class RuntimeCore {
 public:
  RuntimeCore(std::vector<DeviceSpec> specs, RuntimeOptions options, PerfModels models);
  ~RuntimeCore();
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
  int devices() const { return static_cast<int>(devices_.size()); }
  RunRecord records() const;
  void reset_records();
  Result<std::string> explain(TaskId task) const;
  PerfModels models() const;
  Status save_models(const std::optional<std::filesystem::path>& path) const;

 private:
  using Lock = std::unique_lock<std::mutex>;

  // runtime.cpp
  TaskId next_id() const { return tasks_.end(); }
  TaskState& state(TaskId id) {
    ACCO_CHECK(id >= tasks_.base());
    return tasks_[id];
  }
  const TaskState& state(TaskId id) const {
    ACCO_CHECK(id >= tasks_.base());
    return tasks_[id];
  }
  // Its placement reason, formatted now (see TaskState::placement).
  std::string reason_of(const TaskState& t) const;
  Policy* policy_of(PolicyKind kind) const;
  bool settled(TaskId id) const;      // done or failed (every dropped task is)
  bool failed_task(TaskId id) const;  // failed, dropped or not
  // Drops the settled prefix (records off): in wait_all, and when a submit starts a new chunk of
  // the task table, so a stream of tasks without any wait_all stays bounded too. Dropped tasks'
  // chunks are recycled, not freed (freeing them per submit made an RW chain 30-100 % slower).
  void reclaim();
  // Appends `n` tasks to the table (reclaiming first when a chunk starts).
  void grow_tasks(std::size_t n);
  std::chrono::nanoseconds now() const;
  double now_s() const;
  // The latest clock reading of any thread (now() keeps it): as old as the last event the
  // runtime timed. For estimates that tolerate that (a device's expected end), not measurements.
  std::chrono::nanoseconds recent() const {
    return std::chrono::nanoseconds(clock_ns_.load(std::memory_order_relaxed));
  }
  const CodeletInfo& codelet_info(const std::shared_ptr<const Codelet>& codelet);
  // Also fills the codelet cache (codelet_info) for the task's codelet.
  Status validate(const Task& task, std::size_t id, std::size_t graph_end);
  Lock acquire() const {
    Lock lock(mu_, std::defer_lock);
    spin_lock(lock);
    return lock;
  }
  void add_task(TaskId id, Task task);
  void add_edge(TaskId from, TaskId to, bool inherits_failure = true);
  // `at`: the time now, if the caller has just read the clock (a clock read costs 25-40 ns,
  // several times a task).
  void make_ready(TaskId id, int releasing_device,
                  std::chrono::nanoseconds at = std::chrono::nanoseconds(-1));
  void place(TaskId id, int releasing_device,
             std::chrono::nanoseconds at = std::chrono::nanoseconds(-1));
  // Inserts `id` after every task of higher or equal priority (FIFO among equals); returns its
  // position.
  std::size_t insert_by_priority(std::deque<TaskId>& queue, TaskId id) const;
  void enqueue(int device, TaskId id);
  // `t` reads data not valid on `device` and not being fetched there.
  bool missing_input(int device, const TaskState& t) const;
  // The per-device steps of a placement are forced inline: called once per device per task,
  // their calls cost as much as their bodies (callgrind).
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
  ModelSlot& model_slot(int device, const TaskState& task) const {
    return (*task.slots)[static_cast<std::size_t>(device)];
  }
  std::vector<ModelSlot>& model_slots(const TaskState& task) const;
  void flush(ModelSlot& slot) const;
  void learn(int device, const TaskState& task, std::chrono::nanoseconds time);
  // `at`: when it finished, if the caller already read the clock.
  void finish(TaskId id, std::string error, int releasing_device,
              std::chrono::nanoseconds at = std::chrono::nanoseconds(-1));
  void fail_device(int device, const std::string& why, Lock& lock);
  void requeue_from(int device);
  void plan_graph(TaskId first, TaskId end);

  // device_worker.cpp
  void worker(int device);
  bool next_task(int device, TaskId& out, Lock& lock);
  // Releases the lock and polls work_epoch_ and the device's epoch briefly; true when work
  // may have appeared for it.
  bool poll_for_work(int device, Lock& lock);
  bool try_steal(int device, TaskId& out);
  // Asynchronous tasks in flight per device: the one running and the next, submitted behind it
  // so that the device goes from one to the next without waiting for its thread.
  static constexpr std::size_t kPipelineDepth = 2;
  // Runs the task, or launches it (complete_launched completes it).
  void run_task(int device, TaskId id, Lock& lock);
  // The task at the front of the queue can be launched behind the ones in flight without
  // waiting for them: its codelet ran asynchronously here, and its data need no eviction (which
  // could wait for their pins).
  bool front_launchable(int device) const;
  // How long to wait before launching the front task behind the running one: until kLaunchLead
  // plus the front task's transfer estimate before the running work's expected end (then a task
  // of higher priority pushed meanwhile is launched instead), in slices of at most
  // kLaunchWaitSlice; 0 to launch now. Launching at once made a critical-path-bound Cholesky
  // 111-115 ms instead of 101-104 ms: a critical task waited behind two launched ones.
  double launch_wait(int device) const;
  // The last launched task is the last dependency of a task of higher priority than the front
  // one: launching the front task behind it would make that task, released when it completes,
  // wait for the front one's whole run (the device thread places a completed task's dependants
  // before it takes its next task); so the front one waits for that completion instead.
  bool releases_higher_priority(int device) const;
  static constexpr double kLaunchLead = 200e-6;
  static constexpr double kLaunchWaitSlice = 200e-6;
  void take_front(int device, TaskId& out);
  // Waits for the oldest launched task (without the lock) and completes it.
  void complete_launched(int device, Lock& lock);
  // Without the lock: waits for an asynchronous outcome's end and fills its times and errors.
  void settle(DeviceState& d, Outcome& out) const;
  // A short task whose data is valid here (no copy, no allocation): batched with its
  // successors in the queue. take_batch fills `batch` (first included) and says whether there
  // is more than `first`; false leaves the queue as it was.
  bool batchable(int device, const TaskState& t) const;
  bool take_batch(int device, TaskId first, std::vector<TaskId>& batch);
  // `t` left `d`'s queue (already removed): its predicted cost leaves the queue's load.
  static void unqueued(DeviceState& d, const TaskState& t);
  void run_batch(int device, const std::vector<TaskId>& batch, Lock& lock);
  // Fills `context` (a buffer of the device's `contexts`, reused: no allocation per task).
  void fill_context(int device, const TaskState& t, TaskContext& context);
  Outcome execute(const TaskState& t, int device, TaskContext& context);
  void unpin(int device, const TaskState& t);
  // Publishes an outcome under the lock; false when the device failed (the task was re-placed).
  bool complete(int device, TaskId id, Outcome outcome, double weight, Lock& lock);
  static void note_overhead(DeviceState& d, std::chrono::nanoseconds gap, std::size_t tasks);
  // `copies` demand copies of `bytes` in all into `d`, issued together, took `took`.
  static void note_copies(DeviceState& d, std::size_t copies, std::uint64_t bytes,
                          std::chrono::nanoseconds took);
  // Pins the task's replicas on `device`, copying what is not valid there; `moved_at` is set to
  // when it first had to copy, wait for or allocate anything (the lock was released), and left
  // as it was otherwise.
  Status acquire_data(int device, TaskId id, Lock& lock, std::chrono::nanoseconds& moved_at);
  void prefetch(int device, Lock& lock);
  // Prefetches for the devices that were pushed tasks (StarPU prefetches at push time): called
  // where the pushing thread may release the lock, after a completion and after a submit.
  void prefetch_pushed(Lock& lock);
  Result<xfer::Transfer> issue(DeviceState& d, const InflightCopy& copy);
  Status wait_inflight(int device, std::size_t handle, Lock& lock);
  void drain_inflight(int device, Lock& lock);
  Status make_room(int device, std::uint64_t bytes, Lock& lock);
  Status allocate_replica(int device, std::size_t handle, Lock& lock);
  // A buffer for a replica of `bytes` on `d` (the caller checked used + bytes against the
  // budget): a cached one of that size, else a new one, after freeing cached buffers as needed
  // to keep used + cached within the budget. Counted in `used`.
  Result<std::unique_ptr<dev::Buffer>> take_buffer(DeviceState& d, std::size_t bytes);
  // A replica's buffer is no longer needed: kept for reuse within the cache's limit, or freed.
  void drop_buffer(DeviceState& d, std::unique_ptr<dev::Buffer> buffer);
  // A device holding a valid replica (>= 0), -1 for host memory (only when allow_host), -2 none.
  int pick_source(std::size_t handle, int device, bool allow_host) const;
  void note_transfer(NodeId from, NodeId to, const InflightCopy& copy, bool prefetch,
                     bool eviction);

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
  std::deque<TaskId> shared_queue_;  // eager
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
  return !d.failed && !d.drained && task.bytes <= d.budget &&
         task.info->impl[static_cast<std::size_t>(device)] >= 0;
}

}  // namespace acco::sched::detail
