#include "schedule_distributed.hpp"

#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "acco/cluster/dispatch.hpp"
#include "acco/report/document.hpp"

#include "command_spec.hpp"
#include "schedule_command.hpp"

namespace acco::cli {

namespace {

// run_distributed_job's error about an option as the flags that set it: the fault ranks as
// --hang-rank/--slow-rank, the workload as the workload's flags (its message names the value).
Error distributed_error(Error error) {
  const std::string fault = std::string(cluster::kFaultRanksContext) + ": ";
  const std::string spec = std::string(cluster::kSpecContext) + ": ";
  if (error.message.starts_with(fault)) {
    error.message = "--hang-rank/--slow-rank: " + error.message.substr(fault.size());
    return as_usage(std::move(error));
  }
  if (error.message.starts_with(spec)) {
    error.message.erase(0, spec.size());
    return as_usage(std::move(error));
  }
  return error;
}

}  // namespace

void add_distributed_flags(CLI::App& cmd, DistributedFlags& f) {
  CLI::Option* distributed =
      cmd.add_flag("--distributed", f.on,
                   "run over every rank of the MPI job (mpirun, srun), rank 0 coordinating");
  offer_values(cmd.add_option("--dispatch", f.request.dispatch,
                              "--distributed: locality (default), round-robin, or both "
                              "comma-separated")
                   ->type_name("LIST")
                   ->needs(distributed),
               {cluster::to_string(cluster::DispatchPolicy::kLocality),
                cluster::to_string(cluster::DispatchPolicy::kRoundRobin)});
  cmd.add_option("--between-ranks", f.request.between_ranks,
                 "--distributed: rate the coordinator assumes between ranks (default 10GB/s)")
      ->type_name("RATE")
      ->needs(distributed);
  cmd.add_option("--lost-after", f.request.lost_after,
                 "--distributed: a silent worker with tasks is lost after this (default 5s)")
      ->type_name("DURATION")
      ->needs(distributed);
  CLI::Option* hang_rank =
      cmd.add_option("--hang-rank", f.request.hang_rank,
                     "--distributed: fault injection, this rank stops answering (not 0)")
          ->type_name("RANK")
          ->needs(distributed);
  cmd.add_option("--hang-after", f.request.hang_after,
                 "--hang-rank: after this many tasks (default 0)")
      ->type_name("N")
      ->needs(hang_rank);
  cmd.add_option("--slow-rank", f.request.slow_rank,
                 "--distributed: RANK:FACTOR, that rank's kernels take FACTOR times their cost")
      ->type_name("R:F")
      ->needs(distributed);
}

Result<std::optional<cluster::DistributedScheduleOptions>> parse_distributed(
    const DistributedFlags& f) {
  if (!f.on) {  // the flags below need --distributed (add_distributed_flags)
    return std::optional<cluster::DistributedScheduleOptions>{};
  }
  ACCO_ASSIGN_OR_RETURN(auto d, as_usage(cluster::distributed_options(f.request)));
  return std::optional<cluster::DistributedScheduleOptions>{d};
}

Result<Output> run_distributed_schedule(const ScheduleOptions& s, const Invocation& inv,
                                        const sched::ExperimentDevices& devices, std::string err) {
  auto run = cluster::run_distributed_job(devices, *s.distributed, inv.progress);
  if (!run) {
    return error_output(distributed_error(std::move(run.error())), err);
  }
  Output out;
  if (!*run) {
    return out;  // rank 0 reports for the job
  }
  out.err = std::move(err);
  out.out = render(inv, **run, cluster::distributed_report);
  return out;
}

}  // namespace acco::cli
