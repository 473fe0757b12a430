// Runs a Workload on the runtime with emulated kernels: each task holds its device for the
// workload's cost there (the way StarPU's SimGrid mode replaces kernels by their modelled time)
// and touches its data, so placement, transfers, eviction and models are the real ones while
// compute is not. What `acco schedule` and the scheduler benchmarks measure.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/sched/record.hpp"
#include "acco/sched/runtime.hpp"
#include "acco/sched/schedule_math.hpp"
#include "acco/sched/workload.hpp"

namespace acco::sched {

// The explicit DAG of a workload: cost[i][d] = task i's seconds on device d; edge costs are the
// bytes read over `link_bytes_per_second` (0: free communication, as the bounds assume).
[[nodiscard]] Dag workload_dag(const Workload& workload, double link_bytes_per_second = 0);

struct DeviceOutcome {
  int device = 0;
  std::string name;
  std::string kind;
  double busy_ratio = 0;  // busy time / makespan
  std::size_t tasks = 0;
  bool operator==(const DeviceOutcome&) const = default;
};

struct WorkloadOutcome {
  std::string policy;
  double makespan_seconds = 0;  // first submit to last completion of the measured run
  Bounds bounds;                // from the workload's nominal costs
  double efficiency = 0;        // bounds.best() / makespan
  std::size_t tasks = 0;
  std::size_t failed = 0;
  std::uint64_t bytes_transferred = 0;  // every copy between memory nodes, evictions included
  std::vector<DeviceOutcome> devices;
  RunRecord record;
  PerfModels models;  // what the runtime had learnt at the end (for --models)
};

using KernelHook = std::function<void(int device, double seconds)>;

// The workload's tasks as runtime tasks with emulated kernels: each holds its device for its cost
// there (seconds[device index in the runtime]) and touches its data; one codelet per (type,
// costs). What run_workload submits; the distributed runtime (dist) submits them one by one as
// they are dispatched to its node. `workload` must outlive this. Devices other than "cpu" run
// the kernel on their queue with `async`; `kernel` replaces the hold when set.
class EmulatedTasks {
 public:
  EmulatedTasks(const Workload& workload, const std::vector<std::string>& kinds, bool async,
                const KernelHook& kernel);
  // Task `index` of the workload, its accesses on handles[datum]. Throws std::out_of_range for an
  // index or datum beyond them.
  [[nodiscard]] Task make(std::size_t index, const std::vector<DataHandle>& handles) const;

 private:
  const Workload* workload_;
  std::vector<std::shared_ptr<const Codelet>> codelet_of_;
};

// The implementation kinds of `devices` (DeviceSpec::kind, the backend's name when empty), each
// once, in device order: the kinds EmulatedTasks needs for them.
[[nodiscard]] std::vector<std::string> implementation_kinds(const std::vector<DeviceSpec>& devices);

struct WorkloadRunOptions {
  int calibration_runs = 1;  // unmeasured runs first, so the models are calibrated
  bool as_graph = true;      // submit_graph (HEFT plan, upward-rank priorities) vs task by task
  // Kernels of devices other than `cpu` submitted to the device's queue (TaskContext::queue),
  // as a GPU kernel launch is, so each is launched while the one before runs; off: run by the
  // device thread itself. Off by default: see docs/scheduler.md, "Asynchronous implementations".
  bool async_kernels = false;
  // Called with the runtime once it is created and with null just before it is destroyed (on
  // every path out of run_workload), so a monitor can poll Runtime::counters meanwhile. Called
  // on the thread that runs the workload.
  std::function<void(Runtime*)> observe;
  // Replaces the emulated kernel: called with the device index and the task's cost there (its
  // seconds at full speed), on the thread that runs the kernel, for as long as the kernel runs
  // (simulated devices whose speed follows their clocks). May throw DeviceFailure.
  KernelHook kernel;
};

// Creates the runtime on `devices` (their kinds must be the workload's DeviceModel kinds, in the
// same order), registers the data in fresh host memory, runs, and reports. kInvalidArgument
// when the device count differs from the workload's; runtime errors as they come; a run with
// failed tasks is reported (failed > 0), not an error.
[[nodiscard]] Result<WorkloadOutcome> run_workload(const Workload& workload,
                                                   std::vector<DeviceSpec> devices,
                                                   RuntimeOptions options,
                                                   const WorkloadRunOptions& run = {});

}  // namespace acco::sched
