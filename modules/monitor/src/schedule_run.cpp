#include "acco/monitor/schedule_run.hpp"

#include <utility>

#include <nlohmann/json.hpp>

#include "acco/sched/experiment_report.hpp"

namespace acco::monitor {

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

nlohmann::ordered_json to_json(const ScheduleRun& run) {
  return run.thermal ? to_json(*run.thermal) : sched::to_json(*run.plain);
}

report::Document schedule_report(const ScheduleRun& run) {
  return run.thermal ? thermal_experiment_report(*run.thermal)
                     : sched::experiment_report(*run.plain);
}

}  // namespace acco::monitor
