// A scheduling experiment over every rank of a job (`acco schedule --distributed`): one workload
// over the devices of all ranks, rank 0 coordinating (run_distributed), once per dispatch policy,
// and the result as a value with its JSON document (schema acco.schedule.distributed/1,
// docs/schemas/schedule-distributed.schema.json).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "acco/cluster/communicator.hpp"
#include "acco/cluster/dispatch.hpp"
#include "acco/cluster/distributed.hpp"
#include "acco/core/result.hpp"
#include "acco/report/document.hpp"
#include "acco/sched/experiment.hpp"
#include "acco/sched/policy.hpp"
#include "acco/sched/workload.hpp"

namespace acco::cluster {

inline constexpr const char* kDistributedScheduleSchema = "acco.schedule.distributed/1";

struct DistributedScheduleOptions {
  sched::WorkloadSpec spec;  // what the workload was made from, for the report
  sched::PolicyKind local_policy = sched::PolicyKind::kDmda;  // each rank's own runtime
  bool sorted_decision = false;
  int calibration_runs = 1;
  std::vector<DispatchPolicy> dispatch = {DispatchPolicy::kLocality};  // one run each, in order
  double between_ranks_bytes_per_second = 10e9;  // the coordinator's cost of moving an input
  double lost_after_seconds = 5;
  int hang_rank = -1;  // fault injection: stops answering after hang_after tasks (-1: none)
  std::size_t hang_after = 0;
  int slow_rank = -1;  // an emulated straggler: its kernels take slow_factor times their cost
  double slow_factor = 1;
};

// The highest rank fault injection may name.
inline constexpr int kMaxFaultRank = 1 << 20;

// "R:F": rank R's kernels take F (from 1 to 100) times their cost, into options.slow_rank and
// slow_factor. kInvalidArgument "'TEXT' is not RANK:FACTOR, a factor from 1 to 100 (2:3)".
[[nodiscard]] Status parse_slow_rank(std::string_view text, DistributedScheduleOptions& options);
// The hanging and the slow rank of `options` are ranks of a job of `ranks`: kInvalidArgument "the
// job has N rank(s)" otherwise.
[[nodiscard]] Status check_fault_ranks(const DistributedScheduleOptions& options, int ranks);

// `acco schedule --distributed`'s own flags in their text forms, with their defaults.
struct DistributedRequest {
  std::string dispatch = "locality";     // parse_dispatch_policies
  std::string between_ranks = "10GB/s";  // a rate (device::parse_link)
  std::string lost_after = "5s";         // 10ms-1h
  int hang_rank = -1;                    // -1: none; else 1 to kMaxFaultRank
  int hang_after = 0;                    // 0-1000000
  std::string slow_rank;                 // parse_slow_rank; empty: none
};

// `request` checked into the options (the workload, policy and calibration are the caller's to
// fill in); errors name the flag ("--lost-after: '0s' is not a duration from 10ms to 1h",
// kInvalidArgument).
[[nodiscard]] Result<DistributedScheduleOptions> distributed_options(
    const DistributedRequest& request);

struct DistributedSchedule {
  sched::WorkloadSpec spec;
  std::string workload;  // Workload::name
  std::size_t tasks = 0;
  int ranks = 1;
  std::size_t devices_per_rank = 0;
  std::string link;  // the emulated link of host devices; empty: GPUs
  sched::PolicyKind local_policy = sched::PolicyKind::kDmda;
  double between_ranks_bytes_per_second = 0;
  std::vector<DistributedOutcome> runs;  // one per dispatch policy; complete on rank 0
};

// This rank's devices once per rank of the job, in rank order: the device models a distributed
// workload is made for (every rank has the devices this one has).
[[nodiscard]] std::vector<sched::DeviceModel> job_device_models(
    const std::vector<sched::DeviceModel>& local, int ranks);

// Every rank calls it with the same workload (made for job_device_models) and options, and its
// own devices; rank 0 writes a progress line before each run. Errors: run_distributed's, with the
// dispatch policy's name in front.
[[nodiscard]] Result<DistributedSchedule> run_distributed_schedule(
    Communicator& comm, const sched::Workload& workload, const sched::ExperimentDevices& devices,
    const DistributedScheduleOptions& options, const sched::ProgressLine& progress = {});

// How run_distributed_job's errors start when an option is at fault, so a caller can name the
// flag or argument that set it.
inline constexpr std::string_view kFaultRanksContext = "hang_rank/slow_rank";
inline constexpr std::string_view kSpecContext = "spec";

// The whole experiment on `comm`: the fault ranks checked against the job's size
// (check_fault_ranks' error with "hang_rank/slow_rank: " in front), the workload made from
// options.spec for every rank's devices (make_workload's errors with "spec: " in front), then
// run_distributed_schedule. Every rank calls it; rank 0's schedule, nullopt on the other ranks.
[[nodiscard]] Result<std::optional<DistributedSchedule>> run_distributed_job(
    Communicator& comm, const sched::ExperimentDevices& devices,
    const DistributedScheduleOptions& options, const sched::ProgressLine& progress = {});
// The same on the job that started this process (open_job_communicator: one rank without a
// launcher); its errors too.
[[nodiscard]] Result<std::optional<DistributedSchedule>> run_distributed_job(
    const sched::ExperimentDevices& devices, const DistributedScheduleOptions& options,
    const sched::ProgressLine& progress = {});

[[nodiscard]] nlohmann::ordered_json to_json(const DistributedSchedule& schedule);
// The text: the run, one row per dispatch policy, then each policy's ranks.
[[nodiscard]] report::Document distributed_report(const DistributedSchedule& schedule);

}  // namespace acco::cluster
