// `acco schedule --distributed`: the workload over the devices of every rank of an MPI job
// (mpirun, srun), rank 0 coordinating (cluster::run_distributed), once per --dispatch policy; rank
// 0 prints the report, the other ranks nothing.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "acco/cli/app.hpp"
#include "acco/cluster/dispatch.hpp"
#include "acco/core/result.hpp"

namespace acco::cli {

struct ScheduleOptions;
struct ScheduleDevices;

struct DistributedSchedule {
  std::vector<cluster::DispatchPolicy> dispatch = {cluster::DispatchPolicy::kLocality};
  double between_ranks_bytes_per_second = 10e9;  // the coordinator's cost of moving an input
  double lost_after_seconds = 5;
  int hang_rank = -1;  // fault injection: stops answering after hang_after tasks
  std::size_t hang_after = 0;
  int slow_rank = -1;  // emulated straggler: its kernels take slow_factor times their cost
  double slow_factor = 1;
};

struct DistributedFlags {
  bool on = false;
  std::string dispatch = "locality";
  std::string between_ranks = "10GB/s";
  std::string lost_after = "5s";
  int hang_rank = -1;
  int hang_after = 0;
  std::string slow_rank;
};

void add_distributed_flags(CLI::App& cmd, DistributedFlags& f);
// nullopt without --distributed; kUsage naming the flag for a bad value, or a flag that needs
// --distributed without it.
[[nodiscard]] Result<std::optional<DistributedSchedule>> parse_distributed(
    const DistributedFlags& f);

[[nodiscard]] Output run_distributed_schedule(const ScheduleOptions& s, const Invocation& inv,
                                              const ScheduleDevices& devices, std::string err);

}  // namespace acco::cli
