#include "schedule_command.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "acco/core/process.hpp"
#include "acco/monitor/schedule_run.hpp"
#include "acco/report/document.hpp"
#include "acco/sched/experiment_request.hpp"
#include "acco/sched/policy.hpp"
#include "acco/sched/workload.hpp"

#include "bench_command.hpp"
#include "command_spec.hpp"
#include "commands.hpp"
#include "monitor_flags.hpp"
#include "profile_flags.hpp"
#include "schedule_distributed.hpp"

namespace acco::cli {
namespace {

// `acco schedule` flags as CLI11 reads them: numbers typed, lists, names and sizes as text.
struct ScheduleFlags {
  monitor::ScheduleRequest request;
  tune::ProfileChoice profile;
  DistributedFlags distributed;
};

void add_schedule_flags(CLI::App& cmd, SharedFlags& shared, ScheduleFlags& flags) {
  monitor::ScheduleRequest& f = flags.request;
  auto& w = f.workload.spec;
  std::vector<std::string> workloads;
  for (const auto kind :
       {sched::WorkloadKind::kCholesky, sched::WorkloadKind::kLu, sched::WorkloadKind::kIndependent,
        sched::WorkloadKind::kChain, sched::WorkloadKind::kRandom}) {
    workloads.emplace_back(sched::to_string(kind));
  }
  offer_values(cmd.add_option("--workload", f.workload.kind,
                              "cholesky (default), lu, independent, chain, random (layered random "
                              "DAG)")
                   ->type_name("NAME"),
               workloads);
  cmd.add_option("--tiles", w.tiles, "cholesky, lu: t x t tiles (default 8)")->type_name("N");
  cmd.add_option("--tasks", w.tasks, "independent, chain, random: number of tasks (default 1000)")
      ->type_name("N");
  cmd.add_option("--seed", w.seed, "independent, random: random seed (default 1)")->type_name("N");
  cmd.add_option("--skew", w.skew, "independent: costs log-uniform in [1, X] x base (default 4)")
      ->type_name("X");
  cmd.add_option("--ccr", w.ccr, "random: communication-to-computation ratio (default 1)")
      ->type_name("X");
  cmd.add_option("--alpha", w.alpha, "random: DAG shape, wider for larger X (default 1)")
      ->type_name("X");
  cmd.add_option("--out-degree", w.out_degree, "random: most predecessors per task (default 3)")
      ->type_name("N");
  cmd.add_option("--beta", w.beta, "random: cost heterogeneity between devices, [0, 2) (0.5)")
      ->type_name("X");
  offer_values(cmd.add_option("--kernels", w.kernels,
                              "cholesky, lu: kernel times sirocco (default), mirage, uniform")
                   ->type_name("NAME"),
               {"sirocco", "mirage", "uniform"});
  cmd.add_option("--time-scale", w.time_scale, "multiply every task's cost by X (default 1)")
      ->type_name("X");
  cmd.add_option("--devices", f.devices.devices,
                 "host:N emulated devices (default host:4), or cuda")
      ->type_name("SPEC");
  offer_values(cmd.add_option("--kinds", f.devices.kinds,
                              "per device, or one for all: cpu or gpu timing column (default gpu)")
                   ->type_name("LIST"),
               {"cpu", "gpu"});
  cmd.add_option("--speeds", f.devices.speeds,
                 "per device, or one for all: speed factor (default 1)")
      ->type_name("LIST");
  cmd.add_option("--link", f.devices.link, "host devices: emulated link (default pcie3x16)")
      ->type_name("SPEC");
  add_profile_flags(cmd, flags.profile);
  add_distributed_flags(cmd, flags.distributed);
  cmd.add_option("--tile-bytes", f.workload.tile_bytes,
                 "cholesky, lu: bytes per tile (default b x b floats of the kernel table)")
      ->type_name("SIZE");
  cmd.add_option("--task-bytes", f.workload.task_bytes,
                 "independent, chain: bytes of each task's data (default 1MiB)")
      ->type_name("SIZE");
  cmd.add_option("--memory", f.devices.memory, "per-device memory budget (default the device's)")
      ->type_name("SIZE");
  cmd.add_option("--inject-fault", f.devices.faults,
                 "make device DEV fail: copy-fails:N, lost-after:N (copies), alloc-fails:N, "
                 "stall:DURATION[/N], comma-joined; repeatable (e.g. 0:copy-fails:3)")
      ->type_name("DEV:FAULTS");
  std::vector<std::string> policies;
  for (const sched::PolicyKind kind : sched::all_policies()) {
    policies.emplace_back(sched::to_string(kind));
  }
  policies.emplace_back("all");
  offer_values(cmd.add_option("--policy", f.policy,
                              "dmda (default), eager, round-robin, least-loaded, ws, heft; a "
                              "list, or all")
                   ->type_name("NAMES"),
               policies);
  cmd.add_flag("--sorted-decision", f.sorted_decision,
               "dmda, ws: a device is free once its queued tasks of higher or equal priority have "
               "run (StarPU's dmdasd), not its whole queue");
  cmd.add_option("--calibrate", f.calibrate,
                 "unmeasured runs before the measured one, per policy (default 1)")
      ->type_name("N");
  cmd.add_option("--models", f.models, "load performance models from FILE and save them after")
      ->type_name("FILE");
  cmd.add_option("--trace", f.trace, "write the first policy's run as a Chrome trace to FILE")
      ->type_name("FILE");
  CLI::Option* serve =
      cmd.add_option("--serve", f.serve,
                     "while the runs last, serve /metrics and the API (the runtime's queues and "
                     "tasks, the transfer engines' bytes) on this address")
          ->type_name("HOST:PORT");
  cmd.add_option("--serve-interval", f.serve_interval, "--serve: sampling period (default 200ms)")
      ->type_name("DURATION")
      ->needs(serve);
  CLI::Option* thermal =
      cmd.add_flag("--simulate-thermal", f.simulate_thermal,
                   "run every kernel on simulated accelerators whose clocks follow a thermal and "
                   "power model (firmware throttling included), once per --governor setting");
  cmd.add_option("--thermal-scale", f.thermal.scale,
                 "--simulate-thermal: simulated seconds per wall second (default 60)")
      ->type_name("X")
      ->needs(thermal);
  cmd.add_option("--cooling", f.thermal.cooling,
                 "--simulate-thermal: heatsink-to-air resistance factor per device, or one for "
                 "all (default 1; 2 is a device with poor cooling)")
      ->type_name("LIST")
      ->needs(thermal);
  offer_values(cmd.add_option("--governor", f.thermal.governor,
                              "--simulate-thermal: governor settings to compare: off (firmware "
                              "only), thermal, energy, cap:W (default off,thermal)")
                   ->type_name("LIST")
                   ->needs(thermal),
               {"off", "thermal", "energy"});
  add_json_flag(cmd, shared, "print JSON (schema acco.schedule/1)");
}

Result<ScheduleOptions> schedule_options(const ScheduleFlags& f) {
  ACCO_ASSIGN_OR_RETURN(auto setup, as_usage(monitor::schedule_setup(f.request)));
  ScheduleOptions s{std::move(setup)};
  const sched::ExperimentOptions& e = s.experiment;
  ACCO_RETURN_IF_ERROR(check_profile_flags(f.profile));
  s.profile = f.profile;
  ACCO_ASSIGN_OR_RETURN(s.distributed, parse_distributed(f.distributed));
  if (s.distributed) {
    s.distributed->spec = e.spec;
    s.distributed->local_policy = e.policies.front();
    s.distributed->sorted_decision = e.sorted_decision;
    s.distributed->calibration_runs = e.calibration_runs;
    for (const auto& [given, flag] :
         {std::pair{s.serve.has_value(), "--serve"},
          std::pair{s.thermal.has_value(), "--simulate-thermal"},
          std::pair{!s.trace.empty(), "--trace"}, std::pair{!e.models.empty(), "--models"},
          std::pair{e.policies.size() > 1, "several --policy"}}) {
      if (given) {
        return usage(fmt::format("--distributed: {} is for one-node runs", flag));
      }
    }
  }
  return s;
}

// What the runs need, checked before minutes of them: the budget against the largest task, the
// models file, the output directories (the writes themselves are atomic and may still fail).
Status check_before_runs(const ScheduleOptions& s, const sched::Workload& workload) {
  ACCO_RETURN_IF_ERROR(
      for_flag("--memory", sched::check_memory_budget(s.devices.memory_bytes, workload)));
  return monitor::check_schedule_files(s);
}

// acco tune's engine settings for each device; the machine probed only when a profile is saved.
Status load_transfer_profiles(tune::ProfileChoice choice, const core::Settings& settings,
                              sched::ExperimentDevices& d, std::string& note) {
  choice.directory = settings.get("tune-dir");
  ACCO_ASSIGN_OR_RETURN(
      const auto loaded,
      tune::load_profile_probing(choice, [&] { return probe_machine(settings, note); }),
      "--profile");
  note += tune::profile_note(loaded);
  sched::apply_transfer_profiles(loaded.engines, d);
  return {};
}

// --serve: the runtime's counters served while the runs last; null without it.
Result<std::unique_ptr<monitor::RuntimeServer>> start_server(const ScheduleOptions& s,
                                                             const Invocation& inv) {
  if (!s.serve) {
    return nullptr;
  }
  monitor::RuntimeServerOptions serve = *s.serve;
  serve.metrics = {.version = ACCO_VERSION, .hostname = core::hostname()};
  ACCO_ASSIGN_OR_RETURN(auto server, monitor::RuntimeServer::start(serve), "--serve");
  if (inv.progress) {
    inv.progress(monitor::serving_line(serve, server->port(), server->nvml_note()));
  }
  return server;
}

}  // namespace

Result<Output> ScheduleCommand::run(const Invocation& inv) const {
  const ScheduleOptions& s = options_;
  ACCO_ASSIGN_OR_RETURN(auto devices, as_usage(sched::open_devices(s.devices)));
  std::string profile_note;
  if (auto loaded = load_transfer_profiles(s.profile, inv.settings, devices, profile_note);
      !loaded) {
    return error_output(loaded.error(), profile_note);
  }
  ACCO_ASSIGN_OR_RETURN(const auto workload,
                        as_usage(sched::make_workload(s.experiment.spec, devices.models)));
  ACCO_RETURN_IF_ERROR(check_before_runs(s, workload));
  if (s.distributed) {
    return run_distributed_schedule(s, inv, devices, profile_note);
  }
  ACCO_ASSIGN_OR_RETURN(auto server, start_server(s, inv));
  auto ran = monitor::run_schedule(workload, devices, {s.experiment, s.thermal}, server.get(),
                                   inv.progress);
  server.reset();  // the runs are over: so is serving them
  if (!ran) {
    // kCannotWrite: the models file, saved after a run.
    return tl::unexpected(!s.thermal && ran.error().code == Errc::kCannotWrite
                              ? std::move(ran.error()).with_context("--models")
                              : as_usage(std::move(ran.error())));
  }
  Output out{render(inv, *ran, monitor::schedule_report), profile_note, kExitOk};
  if (!s.trace.empty()) {
    ACCO_ASSIGN_OR_RETURN(const auto written, monitor::write_schedule_trace(*ran, s.trace));
    out.err += written;
  }
  const std::string failed = monitor::failure_lines(*ran);
  if (!failed.empty()) {
    out.err += failed;
    out.exit_code = kExitTasksFailed;
  }
  return out;
}

CommandSpec schedule_command() {
  return command_with_flags<ScheduleFlags>(
      "schedule", "run a named task graph on several devices under scheduling policies",
      add_schedule_flags, [](const ScheduleFlags& flags, const core::Settings&) {
        return command_from<ScheduleCommand>(schedule_options(flags));
      });
}

}  // namespace acco::cli
