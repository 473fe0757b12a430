#include "schedule_distributed.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/cluster/communicator.hpp"
#include "acco/cluster/distributed.hpp"
#include "acco/cluster/launcher.hpp"
#include "acco/core/units.hpp"
#include "acco/device/host_backend.hpp"

#include "command_spec.hpp"
#include "process.hpp"
#include "schedule_command.hpp"
#include "schedule_report.hpp"
#include "text_report.hpp"

namespace acco::cli {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kMaxRank = 1 << 20;
constexpr int kMaxHangAfter = 1'000'000;

Result<std::vector<cluster::DispatchPolicy>> parse_dispatch(const std::string& text) {
  std::vector<cluster::DispatchPolicy> out;
  std::size_t from = 0;
  while (from <= text.size()) {
    const std::size_t comma = std::min(text.find(',', from), text.size());
    const std::string name = text.substr(from, comma - from);
    const auto policy = cluster::parse_dispatch_policy(name);
    if (!policy) {
      return bad_value("--dispatch", name, "locality or round-robin, comma-separated");
    }
    if (std::find(out.begin(), out.end(), *policy) != out.end()) {
      return usage(fmt::format("--dispatch: '{}' named twice", name));
    }
    out.push_back(*policy);
    from = comma + 1;
  }
  return out;
}

// "R:F": rank R's kernels take F (> 1, at most 100) times their cost.
Status parse_slow_rank(const std::string& text, DistributedSchedule& d) {
  constexpr std::string_view kExpected = "RANK:FACTOR, a factor from 1 to 100 (2:3)";
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos) {
    return bad_value("--slow-rank", text, kExpected);
  }
  const auto rank = units::parse_int(std::string_view(text).substr(0, colon));
  const auto factor = units::parse_double(std::string_view(text).substr(colon + 1));
  if (!rank || *rank < 0 || *rank > kMaxRank || !factor || !(*factor >= 1) || *factor > 100) {
    return bad_value("--slow-rank", text, kExpected);
  }
  d.slow_rank = static_cast<int>(*rank);
  d.slow_factor = *factor;
  return {};
}

Json worker_json(const cluster::WorkerStats& w) {
  return {{"rank", w.rank},
          {"tasks", w.tasks},
          {"measured_seconds", w.measured_seconds},
          {"expected_seconds", w.expected_seconds},
          {"slowdown", w.slowdown},
          {"straggler", w.straggler},
          {"lost", w.lost},
          {"bytes_in", w.bytes_in}};
}

std::string report_json(const ScheduleOptions& s, const sched::Workload& w,
                        const ScheduleDevices& d,
                        const std::vector<cluster::DistributedOutcome>& runs) {
  Json out = {{"schema", "acco.schedule.distributed/1"},
              {"workload", {{"name", w.name}, {"tasks", w.tasks.size()}}}};
  if (s.workload.kind == sched::WorkloadKind::kCholesky ||
      s.workload.kind == sched::WorkloadKind::kLu) {
    out["workload"]["tiles"] = s.workload.tiles;
  }
  out["workload"]["time_scale"] = s.workload.time_scale;
  out["ranks"] = runs.empty() ? 1 : runs.front().ranks;
  out["devices_per_rank"] = d.devices.size();
  out["link"] = d.link;
  out["local_policy"] = sched::to_string(s.policies.front());
  out["between_ranks_bytes_per_second"] = s.distributed->between_ranks_bytes_per_second;
  Json list = Json::array();
  for (const cluster::DistributedOutcome& r : runs) {
    Json workers = Json::array();
    for (const cluster::WorkerStats& ws : r.workers) {
      workers.push_back(worker_json(ws));
    }
    list.push_back({{"dispatch", r.policy},
                    {"makespan_seconds", r.makespan_seconds},
                    {"bound_seconds", r.bounds.best()},
                    {"critical_path_seconds", r.bounds.critical_path},
                    {"area_seconds", r.bounds.area},
                    {"efficiency", r.efficiency},
                    {"reruns", r.reruns},
                    {"bytes_between_ranks", r.bytes_between_ranks},
                    {"workers", std::move(workers)}});
  }
  out["runs"] = std::move(list);
  return out.dump(2) + "\n";
}

std::string report_text(const ScheduleOptions& s, const sched::Workload& w,
                        const ScheduleDevices& d,
                        const std::vector<cluster::DistributedOutcome>& runs) {
  const int ranks = runs.empty() ? 1 : runs.front().ranks;
  std::string out = fmt::format(
      "distributed schedule: {} ({} tasks) over {} rank(s) x {} device(s) ({}), local policy {}\n",
      w.name, w.tasks.size(), ranks, d.devices.size(), d.link.empty() ? "cuda" : d.link,
      sched::to_string(s.policies.front()));
  std::vector<std::vector<std::string>> table = {
      {"dispatch", "makespan", "bound", "efficiency", "between ranks", "reruns"}};
  for (const cluster::DistributedOutcome& r : runs) {
    table.push_back({r.policy, units::format_seconds(r.makespan_seconds),
                     units::format_seconds(r.bounds.best()),
                     fmt::format("{:.1f} %", 100 * r.efficiency),
                     units::format_bytes(r.bytes_between_ranks), std::to_string(r.reruns)});
  }
  out += aligned_table(table);
  for (const cluster::DistributedOutcome& r : runs) {
    out += fmt::format("\n{}: per rank\n", r.policy);
    std::vector<std::vector<std::string>> per = {
        {"rank", "tasks", "slowdown", "inputs in", "state"}};
    for (const cluster::WorkerStats& ws : r.workers) {
      per.push_back({std::to_string(ws.rank), std::to_string(ws.tasks),
                     fmt::format("{:.2f}x", ws.slowdown), units::format_bytes(ws.bytes_in),
                     ws.lost ? "lost" : (ws.straggler ? "straggler" : "ok")});
    }
    out += aligned_table(per);
  }
  return out;
}

}  // namespace

void add_distributed_flags(CLI::App& cmd, DistributedFlags& f) {
  CLI::Option* distributed =
      cmd.add_flag("--distributed", f.on,
                   "run over every rank of the MPI job (mpirun, srun), rank 0 coordinating");
  cmd.add_option("--dispatch", f.dispatch,
                 "--distributed: locality (default), round-robin, or both comma-separated")
      ->type_name("LIST")
      ->needs(distributed);
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

Result<std::optional<DistributedSchedule>> parse_distributed(const DistributedFlags& f) {
  if (!f.on) {  // the flags below need --distributed (add_distributed_flags)
    return std::optional<DistributedSchedule>{};
  }
  DistributedSchedule d;
  ACCO_ASSIGN_OR_RETURN(d.dispatch, parse_dispatch(f.dispatch));
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
  if (f.hang_rank == 0 || f.hang_rank < -1 || f.hang_rank > kMaxRank) {
    return bad_value("--hang-rank", std::to_string(f.hang_rank),
                     "a worker's rank, 1 or more (rank 0 coordinates)");
  }
  if (f.hang_after < 0 || f.hang_after > kMaxHangAfter) {
    return bad_value("--hang-after", std::to_string(f.hang_after), "between 0 and 1000000");
  }
  d.hang_rank = f.hang_rank;
  d.hang_after = static_cast<std::size_t>(f.hang_after);
  if (!f.slow_rank.empty()) {
    ACCO_RETURN_IF_ERROR(parse_slow_rank(f.slow_rank, d));
  }
  return std::optional<DistributedSchedule>{d};
}

Output run_distributed_schedule(const ScheduleOptions& s, const Invocation& inv,
                                const ScheduleDevices& devices, std::string err) {
  const DistributedSchedule& d = *s.distributed;
  auto launch = cluster::detect_launcher(cluster::process_environment());
  if (!launch) {
    return error_output(std::move(launch.error()).with_context("launcher environment"), err);
  }
  auto opened = cluster::open_communicator(*launch);
  if (!opened) {
    return error_output(opened.error(), err);
  }
  cluster::Communicator& comm = **opened;
  const auto ranks = static_cast<std::size_t>(comm.size());
  if (d.hang_rank >= comm.size() || d.slow_rank >= comm.size()) {
    return error_output(
        usage(fmt::format("--hang-rank/--slow-rank: the job has {} rank(s)", comm.size())).value(),
        err);
  }
  // Every rank has the devices this one has (the same command line on each).
  std::vector<sched::DeviceModel> models;
  for (std::size_t r = 0; r < ranks; ++r) {
    models.insert(models.end(), devices.models.begin(), devices.models.end());
  }
  auto workload = sched::make_workload(s.workload, models);
  if (!workload) {
    return error_output(as_usage(std::move(workload.error())), err);
  }
  std::vector<cluster::DistributedOutcome> runs;
  for (std::size_t i = 0; i < d.dispatch.size(); ++i) {
    const char* name = cluster::to_string(d.dispatch[i]);
    if (inv.progress && comm.rank() == 0) {
      inv.progress(fmt::format("[{}/{}] {}: {} task(s) over {} rank(s), {} calibration run(s)",
                               i + 1, d.dispatch.size(), name, workload->tasks.size(), ranks,
                               s.calibrate));
    }
    sched::RuntimeOptions options;
    options.policy = s.policies.front();
    options.knobs.sorted_decision = s.sorted_decision;
    cluster::DistributedOptions run;
    run.dispatch.policy = d.dispatch[i];
    run.dispatch.link_bytes_per_second = d.between_ranks_bytes_per_second;
    run.calibration_runs = s.calibrate;
    run.lost_after_seconds = d.lost_after_seconds;
    run.hang_rank = d.hang_rank;
    run.hang_after = d.hang_after;
    if (d.slow_rank == comm.rank()) {
      run.slowdown = d.slow_factor;
    }
    auto outcome = cluster::run_distributed(comm, *workload,
                                            std::vector<std::size_t>(ranks, devices.devices.size()),
                                            device_specs(devices, s), options, run);
    if (!outcome) {
      return error_output(std::move(outcome.error()).with_context(name), err);
    }
    runs.push_back(std::move(*outcome));
  }
  Output out;
  if (comm.rank() != 0) {
    return out;  // rank 0 reports for the job
  }
  out.err = std::move(err);
  out.out = inv.format == Format::kJson ? report_json(s, *workload, devices, runs)
                                        : report_text(s, *workload, devices, runs);
  return out;
}

}  // namespace acco::cli
