#include "acco/cluster/distributed_schedule.hpp"

#include <utility>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/core/units.hpp"
#include "acco/report/table.hpp"

namespace acco::cluster {
namespace {

using Json = nlohmann::ordered_json;

Json worker_json(const WorkerStats& w) {
  return {{"rank", w.rank},
          {"tasks", w.tasks},
          {"measured_seconds", w.measured_seconds},
          {"expected_seconds", w.expected_seconds},
          {"slowdown", w.slowdown},
          {"straggler", w.straggler},
          {"lost", w.lost},
          {"bytes_in", w.bytes_in}};
}

}  // namespace

Status parse_slow_rank(std::string_view text, DistributedScheduleOptions& options) {
  const auto invalid = [&] {
    return fail(Errc::kInvalidArgument,
                fmt::format("'{}' is not RANK:FACTOR, a factor from 1 to 100 (2:3)", text));
  };
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return invalid();
  }
  const auto rank = units::parse_int(text.substr(0, colon));
  const auto factor = units::parse_double(text.substr(colon + 1));
  if (!rank || *rank < 0 || *rank > kMaxFaultRank || !factor || !(*factor >= 1) || *factor > 100) {
    return invalid();
  }
  options.slow_rank = static_cast<int>(*rank);
  options.slow_factor = *factor;
  return {};
}

Status check_fault_ranks(const DistributedScheduleOptions& options, int ranks) {
  if (options.hang_rank >= ranks || options.slow_rank >= ranks) {
    return fail(Errc::kInvalidArgument, fmt::format("the job has {} rank(s)", ranks));
  }
  return {};
}

std::vector<sched::DeviceModel> job_device_models(const std::vector<sched::DeviceModel>& local,
                                                  int ranks) {
  std::vector<sched::DeviceModel> models;
  for (int r = 0; r < ranks; ++r) {
    models.insert(models.end(), local.begin(), local.end());
  }
  return models;
}

Result<DistributedSchedule> run_distributed_schedule(Communicator& comm,
                                                     const sched::Workload& workload,
                                                     const sched::ExperimentDevices& devices,
                                                     const DistributedScheduleOptions& o,
                                                     const sched::ProgressLine& progress) {
  const auto ranks = static_cast<std::size_t>(comm.size());
  DistributedSchedule out;
  out.spec = o.spec;
  out.workload = workload.name;
  out.tasks = workload.tasks.size();
  out.devices_per_rank = devices.devices.size();
  out.link = devices.link;
  out.local_policy = o.local_policy;
  out.between_ranks_bytes_per_second = o.between_ranks_bytes_per_second;
  for (std::size_t i = 0; i < o.dispatch.size(); ++i) {
    const char* name = to_string(o.dispatch[i]);
    if (progress && comm.rank() == 0) {
      progress(fmt::format("[{}/{}] {}: {} task(s) over {} rank(s), {} calibration run(s)", i + 1,
                           o.dispatch.size(), name, workload.tasks.size(), ranks,
                           o.calibration_runs));
    }
    sched::RuntimeOptions options;
    options.policy = o.local_policy;
    options.knobs.sorted_decision = o.sorted_decision;
    DistributedOptions run;
    run.dispatch.policy = o.dispatch[i];
    run.dispatch.link_bytes_per_second = o.between_ranks_bytes_per_second;
    run.calibration_runs = o.calibration_runs;
    run.lost_after_seconds = o.lost_after_seconds;
    run.hang_rank = o.hang_rank;
    run.hang_after = o.hang_after;
    if (o.slow_rank == comm.rank()) {
      run.slowdown = o.slow_factor;
    }
    auto outcome =
        run_distributed(comm, workload, std::vector<std::size_t>(ranks, devices.devices.size()),
                        sched::device_specs(devices), options, run);
    if (!outcome) {
      return tl::unexpected(std::move(outcome.error()).with_context(name));
    }
    out.runs.push_back(std::move(*outcome));
  }
  out.ranks = out.runs.empty() ? 1 : out.runs.front().ranks;
  return out;
}

Result<std::optional<DistributedSchedule>> run_distributed_job(
    Communicator& comm, const sched::ExperimentDevices& devices,
    const DistributedScheduleOptions& options, const sched::ProgressLine& progress) {
  ACCO_RETURN_IF_ERROR(check_fault_ranks(options, comm.size()), kFaultRanksContext);
  ACCO_ASSIGN_OR_RETURN(
      const auto workload,
      sched::make_workload(options.spec, job_device_models(devices.models, comm.size())),
      kSpecContext);
  ACCO_ASSIGN_OR_RETURN(auto schedule,
                        run_distributed_schedule(comm, workload, devices, options, progress));
  if (comm.rank() != 0) {
    return std::nullopt;  // rank 0 reports for the job
  }
  return std::optional<DistributedSchedule>(std::move(schedule));
}

Result<std::optional<DistributedSchedule>> run_distributed_job(
    const sched::ExperimentDevices& devices, const DistributedScheduleOptions& options,
    const sched::ProgressLine& progress) {
  ACCO_ASSIGN_OR_RETURN(auto comm, open_job_communicator());
  return run_distributed_job(*comm, devices, options, progress);
}

nlohmann::ordered_json to_json(const DistributedSchedule& s) {
  Json out = {{"schema", kDistributedScheduleSchema},
              {"workload", {{"name", s.workload}, {"tasks", s.tasks}}}};
  if (s.spec.kind == sched::WorkloadKind::kCholesky || s.spec.kind == sched::WorkloadKind::kLu) {
    out["workload"]["tiles"] = s.spec.tiles;
  }
  out["workload"]["time_scale"] = s.spec.time_scale;
  out["ranks"] = s.ranks;
  out["devices_per_rank"] = s.devices_per_rank;
  out["link"] = s.link;
  out["local_policy"] = sched::to_string(s.local_policy);
  out["between_ranks_bytes_per_second"] = s.between_ranks_bytes_per_second;
  Json list = Json::array();
  for (const DistributedOutcome& r : s.runs) {
    Json workers = Json::array();
    for (const WorkerStats& ws : r.workers) {
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
  return out;
}

report::Document distributed_report(const DistributedSchedule& s) {
  const std::vector<DistributedOutcome>& runs = s.runs;
  report::Document doc;
  doc.add(report::Preformatted{fmt::format(
      "distributed schedule: {} ({} tasks) over {} rank(s) x {} device(s) ({}), local policy {}",
      s.workload, s.tasks, s.ranks, s.devices_per_rank, s.link.empty() ? "cuda" : s.link,
      sched::to_string(s.local_policy))});
  std::vector<std::vector<std::string>> table = {
      {"dispatch", "makespan", "bound", "efficiency", "between ranks", "reruns"}};
  for (const DistributedOutcome& r : runs) {
    table.push_back({r.policy, units::format_seconds(r.makespan_seconds),
                     units::format_seconds(r.bounds.best()),
                     fmt::format("{:.1f} %", 100 * r.efficiency),
                     units::format_bytes(r.bytes_between_ranks), std::to_string(r.reruns)});
  }
  doc.add(report::plain_table(table));
  for (const DistributedOutcome& r : runs) {
    doc.add(report::Heading{fmt::format("{}: per rank", r.policy)});
    std::vector<std::vector<std::string>> per = {
        {"rank", "tasks", "slowdown", "inputs in", "state"}};
    for (const WorkerStats& ws : r.workers) {
      per.push_back({std::to_string(ws.rank), std::to_string(ws.tasks),
                     fmt::format("{:.2f}x", ws.slowdown), units::format_bytes(ws.bytes_in),
                     ws.lost ? "lost" : (ws.straggler ? "straggler" : "ok")});
    }
    doc.add(report::plain_table(per));
  }
  return doc;
}

}  // namespace acco::cluster
