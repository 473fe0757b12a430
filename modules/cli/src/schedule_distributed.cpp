#include "schedule_distributed.hpp"

#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "acco/cluster/dispatch.hpp"
#include "acco/core/units.hpp"
#include "acco/device/host_backend.hpp"
#include "acco/report/document.hpp"

#include "command_spec.hpp"
#include "schedule_command.hpp"

namespace acco::cli {

namespace {

constexpr int kMaxHangAfter = 1'000'000;

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
  offer_values(cmd.add_option("--dispatch", f.dispatch,
                              "--distributed: locality (default), round-robin, or both "
                              "comma-separated")
                   ->type_name("LIST")
                   ->needs(distributed),
               {cluster::to_string(cluster::DispatchPolicy::kLocality),
                cluster::to_string(cluster::DispatchPolicy::kRoundRobin)});
  cmd.add_option("--between-ranks", f.between_ranks,
                 "--distributed: rate the coordinator assumes between ranks (default 10GB/s)")
      ->type_name("RATE")
      ->needs(distributed);
  cmd.add_option("--lost-after", f.lost_after,
                 "--distributed: a silent worker with tasks is lost after this (default 5s)")
      ->type_name("DURATION")
      ->needs(distributed);
  CLI::Option* hang_rank =
      cmd.add_option("--hang-rank", f.hang_rank,
                     "--distributed: fault injection, this rank stops answering (not 0)")
          ->type_name("RANK")
          ->needs(distributed);
  cmd.add_option("--hang-after", f.hang_after, "--hang-rank: after this many tasks (default 0)")
      ->type_name("N")
      ->needs(hang_rank);
  cmd.add_option("--slow-rank", f.slow_rank,
                 "--distributed: RANK:FACTOR, that rank's kernels take FACTOR times their cost")
      ->type_name("R:F")
      ->needs(distributed);
}

Result<std::optional<cluster::DistributedScheduleOptions>> parse_distributed(
    const DistributedFlags& f) {
  if (!f.on) {  // the flags below need --distributed (add_distributed_flags)
    return std::optional<cluster::DistributedScheduleOptions>{};
  }
  cluster::DistributedScheduleOptions d;
  ACCO_ASSIGN_OR_RETURN(d.dispatch,
                        for_flag("--dispatch", cluster::parse_dispatch_policies(f.dispatch)));
  auto rate = device::parse_link(f.between_ranks);
  if (!rate || rate->bytes_per_second <= 0) {
    return bad_value("--between-ranks", f.between_ranks, "a rate such as 10GB/s or pcie4x16");
  }
  d.between_ranks_bytes_per_second = rate->bytes_per_second;
  auto lost = units::parse_duration(f.lost_after);
  if (!lost || *lost < 0.01 || *lost > 3600) {
    return bad_value("--lost-after", f.lost_after, "a duration from 10ms to 1h");
  }
  d.lost_after_seconds = *lost;
  if (f.hang_rank == 0 || f.hang_rank < -1 || f.hang_rank > cluster::kMaxFaultRank) {
    return bad_value("--hang-rank", std::to_string(f.hang_rank),
                     "a worker's rank, 1 or more (rank 0 coordinates)");
  }
  if (f.hang_after < 0 || f.hang_after > kMaxHangAfter) {
    return bad_value("--hang-after", std::to_string(f.hang_after), "between 0 and 1000000");
  }
  d.hang_rank = f.hang_rank;
  d.hang_after = static_cast<std::size_t>(f.hang_after);
  if (!f.slow_rank.empty()) {
    ACCO_RETURN_IF_ERROR(for_flag("--slow-rank", cluster::parse_slow_rank(f.slow_rank, d)));
  }
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
  out.out = inv.format == Format::kJson ? cluster::to_json(**run).dump(2) + "\n"
                                        : report::render_text(cluster::distributed_report(**run));
  return out;
}

}  // namespace acco::cli
