// `acco schedule --distributed`: the workload over the devices of every rank of an MPI job
// (mpirun, srun), rank 0 coordinating (cluster::run_distributed), once per --dispatch policy; rank
// 0 prints the report, the other ranks nothing.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "acco/cli/app.hpp"
#include "acco/cluster/distributed_schedule.hpp"
#include "acco/core/result.hpp"
#include "acco/sched/experiment.hpp"

namespace acco::cli {

struct ScheduleOptions;

struct DistributedFlags {
  bool on = false;
  cluster::DistributedRequest request;
};

void add_distributed_flags(CLI::App& cmd, DistributedFlags& f);
// nullopt without --distributed; kUsage naming the flag for a bad value, or a flag that needs
// --distributed without it.
[[nodiscard]] Result<std::optional<cluster::DistributedScheduleOptions>> parse_distributed(
    const DistributedFlags& f);

// Every rank runs it (cluster::run_distributed_schedule); rank 0 prints, after `err`.
[[nodiscard]] Result<Output> run_distributed_schedule(const ScheduleOptions& s,
                                                      const Invocation& inv,
                                                      const sched::ExperimentDevices& devices,
                                                      std::string err);

}  // namespace acco::cli
