#include "acco/monitor/schedule_run.hpp"

#include <utility>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/core/file.hpp"
#include "acco/core/option_check.hpp"
#include "acco/monitor/server.hpp"
#include "acco/monitor/sources.hpp"
#include "acco/sched/experiment_report.hpp"
#include "acco/sched/perf_model.hpp"
#include "acco/sched/policy.hpp"
#include "acco/sched/record.hpp"

namespace acco::monitor {

Result<ScheduleSetup> schedule_setup(const ScheduleRequest& request) {
  constexpr int kMaxCalibrate = 100;
  ScheduleSetup s;
  sched::ExperimentOptions& e = s.experiment;
  ACCO_ASSIGN_OR_RETURN(s.devices, sched::device_setup(request.devices));
  ACCO_ASSIGN_OR_RETURN(e.spec, sched::workload_spec(request.workload));
  ACCO_ASSIGN_OR_RETURN(e.policies, sched::parse_policies(request.policy), "--policy");
  ACCO_RETURN_IF_ERROR(
      core::check_range("--calibrate", request.calibrate, 0, kMaxCalibrate, "between 0 and 100"));
  e.calibration_runs = request.calibrate;
  e.sorted_decision = request.sorted_decision;
  e.models = request.models;
  s.trace = request.trace;
  ACCO_ASSIGN_OR_RETURN(const auto interval,
                        sampling_interval("--serve-interval", request.serve_interval, 10));
  if (!request.serve.empty()) {
    auto listen = parse_listen(request.serve);
    if (!listen) {
      return core::bad_option("--serve", request.serve,
                              "HOST:PORT (e.g. 127.0.0.1:9477 or 0.0.0.0:9477)");
    }
    s.serve = RuntimeServerOptions{.server = *listen, .interval = interval};
  }
  if (request.simulate_thermal) {
    ACCO_ASSIGN_OR_RETURN(s.thermal, thermal_options(request.thermal, s.devices));
  }
  return s;
}

Result<ScheduleRun> run_schedule(const sched::Workload& workload,
                                 const sched::ExperimentDevices& devices,
                                 const ScheduleRunOptions& options, RuntimeServer* server,
                                 const sched::ProgressLine& progress) {
  sched::ExperimentOptions experiment = options.experiment;
  if (server != nullptr) {
    experiment.observe = [server](sched::Runtime* runtime) { server->observe(runtime); };
  }
  ScheduleRun run;
  if (options.thermal) {
    ThermalExperimentOptions thermal = *options.thermal;
    thermal.experiment = std::move(experiment);
    ACCO_ASSIGN_OR_RETURN(run.thermal,
                          run_thermal_experiment(workload, devices, thermal, progress));
  } else {
    ACCO_ASSIGN_OR_RETURN(run.plain,
                          sched::run_experiment(workload, devices, experiment, progress));
  }
  return run;
}

Status check_schedule_files(const ScheduleSetup& setup) {
  if (!setup.experiment.models.empty()) {
    ACCO_RETURN_IF_ERROR(sched::PerfModels::load(setup.experiment.models), "--models");
    ACCO_RETURN_IF_ERROR(core::check_output_directory(setup.experiment.models), "--models");
  }
  if (!setup.trace.empty()) {
    ACCO_RETURN_IF_ERROR(core::check_output_directory(setup.trace), "--trace");
  }
  return {};
}

Result<std::string> write_schedule_trace(const ScheduleRun& run, const std::string& path) {
  const auto& first = run.experiment().runs.front();  // an experiment runs one policy or more
  ACCO_ASSIGN_OR_RETURN(auto line, sched::write_chrome_trace(first.record, first.policy, path),
                        "--trace");
  return line;
}

std::string failure_lines(const ScheduleRun& run) {
  std::string lines;
  for (const auto& r : run.experiment().runs) {
    if (r.failed > 0) {
      lines += fmt::format("acco: {}\n", sched::failure_summary(r));
    }
  }
  return lines;
}

nlohmann::ordered_json to_json(const ScheduleRun& run) {
  return run.thermal ? to_json(*run.thermal) : sched::to_json(*run.plain);
}

report::Document schedule_report(const ScheduleRun& run) {
  return run.thermal ? thermal_experiment_report(*run.thermal)
                     : sched::experiment_report(*run.plain);
}

}  // namespace acco::monitor
