// The distributed runtime: one workload over the devices of several ranks, as one MPI job. Rank
// 0 runs the Coordinator (dispatch.hpp) besides its own worker; every rank's worker owns its
// devices through a local sched::Runtime (placement among them, host <-> device copies, models)
// and runs the tasks it is given with emulated kernels (sched::EmulatedTasks). Inputs move
// between ranks as Communicator messages, from the rank that holds the version a task reads.
//
// Messages, all through Communicator::post/poll (one tag each way keeps them in order):
//   tag 1, coordinator -> worker: assign(task, fetches), send(datum, version, to),
//          init(datum) (the initial value, made locally), finish(error)
//   tag 2, worker -> coordinator: done(task, device, seconds), failed(task, error), alive
//   tag 3, worker -> worker: data(run, datum, version), the bytes as its payload
//          (post_payload: sent from and received into the datum's host copy, no copy of ours)
// A worker that sends nothing (no result, no `alive` every heartbeat) for lost_after_seconds
// while it has tasks is lost: Open MPI 4.1 ends the whole job when a rank's process dies, so what
// this handles is a node that hangs or loses its devices; --hang-rank emulates one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "acco/cluster/communicator.hpp"
#include "acco/cluster/dispatch.hpp"
#include "acco/core/result.hpp"
#include "acco/sched/runtime.hpp"
#include "acco/sched/schedule_math.hpp"
#include "acco/sched/workload.hpp"

namespace acco::cluster {

struct DistributedOptions {
  DispatchOptions dispatch;
  int calibration_runs = 1;  // unmeasured runs first (the local models learn), as run_workload
  bool async_kernels = false;
  double heartbeat_seconds = 0.1;
  double lost_after_seconds = 5;
  // Fault injection: rank `hang_rank` stops answering after finishing `hang_after` tasks of the
  // measured run (-1: no rank does).
  int hang_rank = -1;
  std::size_t hang_after = 0;
  // This rank's kernels take this many times their cost, while the coordinator expects the
  // workload's: a node whose devices run slower than their model (a straggler).
  double slowdown = 1;
};

struct DistributedOutcome {
  bool coordinator = false;  // rank 0: the fields below describe the whole run
  std::string policy;
  int ranks = 1;
  std::size_t devices = 0;
  double makespan_seconds = 0;  // first dispatch to the last task's report
  sched::Bounds bounds;         // from the workload's nominal costs on all devices
  double efficiency = 0;        // bounds.best() / makespan
  std::size_t tasks = 0;        // of the workload
  std::size_t reruns = 0;       // tasks run again because a lost worker held their output
  std::uint64_t bytes_between_ranks = 0;
  std::vector<WorkerStats> workers;
  std::size_t local_tasks = 0;  // this rank's, every rank
};

// Every rank calls it with the same workload, built for all ranks' devices in rank order
// (devices_per_rank[r] of them for rank r), and its own `local` devices (as many as
// devices_per_rank[comm.rank()], kinds as the workload's). kInvalidArgument for sizes that do
// not match; the runtime's errors; kInternal naming the rank and task when a task fails, or
// when every worker was lost. A rank that stops because another failed returns that error.
[[nodiscard]] Result<DistributedOutcome> run_distributed(
    Communicator& comm, const sched::Workload& workload,
    const std::vector<std::size_t>& devices_per_rank, std::vector<sched::DeviceSpec> local,
    sched::RuntimeOptions options, const DistributedOptions& run);

}  // namespace acco::cluster
