// The task runtime: register host data, submit tasks that name their implementations per device
// kind and their data accesses, and the runtime infers dependencies, places each ready task with
// the current policy, moves missing inputs through the transfer engine (prefetching for queued
// tasks), keeps each device within its memory budget, learns per-device performance models, and
// records what it did. Devices come from the device layer, so the same code drives emulated host
// devices in CI and GPUs where there are some.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/device/device.hpp"
#include "acco/sched/access.hpp"
#include "acco/sched/perf_model.hpp"
#include "acco/sched/policy.hpp"
#include "acco/sched/record.hpp"
#include "acco/transfer/counters.hpp"
#include "acco/transfer/profile.hpp"

namespace acco::sched {

namespace detail {
class RuntimeCore;
struct AsyncLaunch;
}  // namespace detail

using TaskId = std::size_t;

// Registered host data. Copyable; valid until unregistered or the runtime is destroyed.
struct DataHandle {
  std::size_t id = 0;
  bool operator==(const DataHandle&) const = default;
};

// What an implementation gets: where it runs and its data there, in the order of Task::accesses.
class TaskContext {
 public:
  [[nodiscard]] int device() const { return device_; }
  [[nodiscard]] const std::string& kind() const { return *kind_; }
  [[nodiscard]] device::Device& dev() const { return *dev_; }
  // Device memory (or host memory on the host backend, where device memory is RAM) of access i.
  [[nodiscard]] void* data(std::size_t i) const { return buffers_.at(i).first; }
  [[nodiscard]] std::size_t bytes(std::size_t i) const { return buffers_.at(i).second; }
  [[nodiscard]] std::size_t accesses() const { return buffers_.size(); }
  // The device's in-order queue, for work that runs asynchronously as a GPU's kernels do. An
  // implementation that submits its work here and returns lets the device thread prepare and
  // start the next task while this one runs (StarPU's CUDA pipeline); the task completes, and
  // its run time is measured with the queue's events, when the work submitted here has finished.
  // An exception thrown by a host task submitted here fails the task (a DeviceFailure, the
  // device); an error the queue itself reports fails the device. Submit from the implementation
  // only. Throws DeviceFailure when the device cannot make a queue.
  [[nodiscard]] device::Queue& queue();

 private:
  friend class detail::RuntimeCore;
  detail::AsyncLaunch* async_ = nullptr;  // the device's, owned by the runtime
  int device_ = -1;
  const std::string* kind_ = nullptr;
  device::Device* dev_ = nullptr;
  std::vector<std::pair<void*, std::size_t>> buffers_;
};

using Implementation = std::function<void(TaskContext&)>;

// Thrown by an implementation to say the *device* failed (lost, ECC error), not the task: the
// runtime retires the device and runs the task and the device's queue elsewhere.
class DeviceFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a kind of task is, shared by many tasks (StarPU's codelet): its type name for the
// performance models and its implementations per device kind ("cpu", "gpu", "host", "cuda").
struct Codelet {
  std::string type;
  std::vector<std::pair<std::string, Implementation>> implementations;
};

// How a task ended, for Task::on_done.
struct TaskEnd {
  TaskId task = 0;
  int device = -1;     // where it ran; -1 when it never started
  double seconds = 0;  // from its start (inputs in place) to its end
  std::string error;   // empty when it finished
};

struct Task {
  std::shared_ptr<const Codelet> codelet;
  std::string name;  // for traces; the type when empty
  std::vector<std::pair<DataHandle, Access>> accesses;
  std::vector<TaskId> depends_on;  // tasks already submitted
  std::vector<std::size_t> after;  // submit_graph only: indices of tasks of the same graph
  int priority = 0;                // higher runs first among ready tasks of one queue
  CostHint cost;                   // for the prior before the model is calibrated
  // Called once when the task has finished or failed, as StarPU's callback_func: on a device
  // thread or the submitting thread, with the runtime's lock held, so it must not call the
  // runtime and should only hand the news on (a queue, a flag).
  std::function<void(const TaskEnd&)> on_done;
};

struct DeviceSpec {
  device::Device* device = nullptr;       // must outlive the runtime
  std::string kind;                       // implementation key; the backend's name when empty
  DevicePeak peak;                        // for the prior
  std::uint64_t memory_budget_bytes = 0;  // 0: the device's memory
  // This device's engine profile (acco tune's choice); unset: RuntimeOptions::transfer_profile.
  std::optional<transfer::Profile> transfer_profile;
};

struct RuntimeOptions {
  PolicyKind policy = PolicyKind::kDmda;
  PolicyKnobs knobs;
  transfer::Profile transfer_profile;
  ModelOptions models;
  std::optional<std::filesystem::path> model_file;  // loaded at create, written by save_models
  int prefetch_depth = 2;  // queued tasks per device whose inputs are fetched ahead
  // Per device, the bytes of dropped replica buffers (evicted, unregistered) kept for reuse by
  // tasks needing a buffer of the same size, within the device's memory budget: allocating
  // costs a page-aligned malloc and page faults on the host backend, a cudaMalloc on a GPU
  // (and cudaFree synchronises the device). 0 frees them at once.
  std::uint64_t buffer_cache_bytes = std::uint64_t{256} << 20;
  // Data ids in records, so traces and statistics join names; false keeps memory flat for
  // millions of tasks (records() then has no per-task entries).
  bool keep_task_records = true;
};

struct TaskFailure {
  TaskId task = 0;
  std::string name;
  std::string error;
  bool operator==(const TaskFailure&) const = default;
};

// What one device of the runtime is doing now and has done since the runtime started (not reset
// by reset_records), for monitoring: rate() of the totals gives throughput, utilisation
// (task_seconds) and mean queue wait (queue_wait_seconds over started).
struct RuntimeDeviceCounters {
  int device = 0;
  std::string name;  // as in DeviceRecord: "host:0 (gpu x8)"
  std::string kind;
  std::size_t queued = 0;   // placed on this device and not yet started
  std::size_t running = 0;  // started (inputs being fetched, running, or launched) and not ended
  // Tasks started here; each ends finished, failed, or moved to another device when this one
  // failed under it (started - finished - failed - running of them).
  std::uint64_t started = 0;
  std::uint64_t finished = 0;  // implementation returned (or its queued work ended) without error
  std::uint64_t failed = 0;    // threw, or lost its data, here
  double task_seconds = 0;     // inside implementations, over every ended task
  // From ready (every dependency done) to the implementation's start, input copies included,
  // over every ended task.
  double queue_wait_seconds = 0;
  // The device's transfer engine: inputs and prefetches into the device, evictions out of it
  // (write_back and unregister copy with the device itself, outside the engine).
  transfer::EngineCounters transfers;
  bool operator==(const RuntimeDeviceCounters&) const = default;
};

struct RuntimeCounters {
  std::vector<RuntimeDeviceCounters> devices;  // in device order
  bool operator==(const RuntimeCounters&) const = default;
};

// Thread-safe: every method may be called from any thread.
class Runtime {
 public:
  // kInvalidArgument for no devices, a null device or a bad option; errors of the model file
  // (see PerfModels::load); kDeviceError when a transfer engine cannot start.
  [[nodiscard]] static Result<std::unique_ptr<Runtime>> create(std::vector<DeviceSpec> devices,
                                                               RuntimeOptions options = {});
  // Waits for every task, then stops the devices' threads and frees device memory. Data still
  // registered is not written back: call write_back or unregister first.
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // The memory must stay valid and untouched by the caller until write_back/unregister.
  // kInvalidArgument for a null pointer, 0 bytes or overlap with registered data.
  [[nodiscard]] Result<DataHandle> register_data(void* host_ptr, std::size_t bytes);
  // Waits for the tasks submitted so far that write it, then makes the host copy valid.
  // kInvalidArgument for an unknown handle; kDeviceError when the data was lost with a device
  // or its writer failed (the host copy is then left as it was).
  [[nodiscard]] Status write_back(DataHandle handle);
  // write_back, then frees its device replicas and forgets it.
  [[nodiscard]] Status unregister(DataHandle handle);

  // Errors, all one line naming the task: kInvalidArgument for no codelet, an unknown handle,
  // a dependency on an unknown task or itself, a data set larger than every device able to run
  // it; kUnsupported when no available device has an implementation of its kind.
  [[nodiscard]] Result<TaskId> submit(Task task);
  // A whole graph at once: `after` may point forward; ids are consecutive in vector order.
  // kInvalidArgument naming a task on a cycle. Under kHeft the graph is planned with HEFT on the
  // current models and links and each task runs where the plan puts it; under the other
  // policies tasks without a priority get their upward rank as priority.
  [[nodiscard]] Result<std::vector<TaskId>> submit_graph(std::vector<Task> tasks);

  // Blocks until every task submitted so far has finished or failed. Ok when none failed since
  // the last wait_all; otherwise kInternal listing each failure (failures() has them as values).
  [[nodiscard]] Status wait_all();
  // Every task that failed since create, reported by wait_all or not.
  [[nodiscard]] std::vector<TaskFailure> failures() const;

  // Takes effect for the next placement.
  void set_policy(PolicyKind kind);
  [[nodiscard]] PolicyKind policy() const;
  void set_knobs(const PolicyKnobs& knobs);
  // Governor inputs. weight in (0, 1] (kInvalidArgument otherwise): predicted run times there
  // are divided by it. A drained device gets no new tasks and its queued ones move elsewhere
  // (they stay if no other device can run them). kInvalidArgument for an unknown device.
  [[nodiscard]] Status set_weight(int device, double weight);
  [[nodiscard]] Status set_drained(int device, bool drained);
  // Thermal headroom in (0, 1]: placement divides predicted run times by weight x headroom, so
  // a warm device gets less new work, but measured times are not scaled by it (it is a
  // preference, not a speed). kInvalidArgument outside (0, 1] or for an unknown device.
  [[nodiscard]] Status set_headroom(int device, double headroom);
  // false: no new task is placed on the device (nor taken by it from a shared queue or by
  // stealing); its queued tasks stay and run. true again places the tasks that waited for a
  // device. kInvalidArgument for an unknown device.
  [[nodiscard]] Status set_accepting(int device, bool accepting);

  [[nodiscard]] int devices() const;
  // Live counters of every device, read under the runtime's lock and each engine's (a copy being
  // issued delays the read by as long). Cheap enough to poll every few hundred milliseconds.
  [[nodiscard]] RuntimeCounters counters() const;
  // Everything recorded since create (or since the last reset_records).
  [[nodiscard]] RunRecord records() const;
  void reset_records();
  // The placement reason of a task ("dmda: dev2 ends at ..."); kNotFound for an unknown id.
  [[nodiscard]] Result<std::string> explain(TaskId task) const;
  [[nodiscard]] PerfModels models() const;
  // Writes the models to RuntimeOptions::model_file (or `path`). kInvalidArgument when neither.
  [[nodiscard]] Status save_models(const std::optional<std::filesystem::path>& path = {}) const;

 private:
  explicit Runtime(std::unique_ptr<detail::RuntimeCore> core);
  std::unique_ptr<detail::RuntimeCore> core_;
};

}  // namespace acco::sched
