// `acco schedule`'s runs on one node as one call: the experiment on the devices as they are
// (sched::run_experiment), or on the thermal rig once per governor setting
// (run_thermal_experiment), every run observed by a served runtime when one is given; the result
// as one value with its acco.schedule/1 document and its text.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "acco/core/result.hpp"
#include "acco/monitor/runtime_server.hpp"
#include "acco/monitor/thermal_experiment.hpp"
#include "acco/report/document.hpp"
#include "acco/sched/experiment.hpp"
#include "acco/sched/experiment_request.hpp"
#include "acco/sched/experiment_setup.hpp"
#include "acco/sched/workload.hpp"

namespace acco::monitor {

struct ScheduleRunOptions {
  sched::ExperimentOptions experiment;
  // On the thermal rig, its `experiment` replaced by the one above; nullopt: the devices as they
  // are.
  std::optional<ThermalExperimentOptions> thermal;
};

// `acco schedule`'s one-node flags, in their text forms and with their defaults.
struct ScheduleRequest {
  sched::WorkloadRequest workload;
  sched::DeviceRequest devices;
  std::string policy = "dmda";  // sched::parse_policies: a list, or all
  bool sorted_decision = false;
  int calibrate = 1;                     // unmeasured runs per policy: 0-100
  std::string models;                    // performance models loaded, and saved after
  std::string trace;                     // the first policy's run as a Chrome trace
  std::string serve;                     // HOST:PORT (parse_listen); empty: not served
  std::string serve_interval = "200ms";  // 10ms or more
  bool simulate_thermal = false;         // on the thermal rig, as `thermal` says
  ThermalRequest thermal;
};

// The request checked.
struct ScheduleSetup {
  sched::ExperimentOptions experiment;  // the workload, policies, calibration, models
  sched::DeviceSetup devices;
  std::string trace;
  std::optional<RuntimeServerOptions> serve;        // its metrics' version and host unset
  std::optional<ThermalExperimentOptions> thermal;  // simulate_thermal
};

// `request` checked; errors name the flag ("--calibrate: '101' is not between 0 and 100",
// kInvalidArgument).
[[nodiscard]] Result<ScheduleSetup> schedule_setup(const ScheduleRequest& request);

// One of the two is set: `thermal` for a run on the rig.
struct ScheduleRun {
  std::optional<sched::Experiment> plain;
  std::optional<ThermalExperiment> thermal;
  [[nodiscard]] const sched::Experiment& experiment() const {
    return thermal ? thermal->experiment : *plain;
  }
};

// Runs `workload` (made for devices.models) on `devices` as `options` say; `server`, when not
// null, observes every run (options.experiment.observe is then replaced). Errors:
// run_experiment's (kCannotWrite when the models file cannot be saved) or
// run_thermal_experiment's.
[[nodiscard]] Result<ScheduleRun> run_schedule(const sched::Workload& workload,
                                               const sched::ExperimentDevices& devices,
                                               const ScheduleRunOptions& options,
                                               RuntimeServer* server = nullptr,
                                               const sched::ProgressLine& progress = {});

// Before the runs: the models file loads (its error with "--models" in front: kInvalidArgument
// for a malformed file) and the directories of --models and --trace exist (kCannotWrite).
[[nodiscard]] Status check_schedule_files(const ScheduleSetup& setup);
// --trace: the first policy's measured run as a Chrome trace at `path`, and the line a person is
// told. kCannotWrite with "--trace" in front.
[[nodiscard]] Result<std::string> write_schedule_trace(const ScheduleRun& run,
                                                       const std::string& path);
// A line ("acco: <sched::failure_summary>") for each measured run whose tasks failed; empty when
// none did.
[[nodiscard]] std::string failure_lines(const ScheduleRun& run);

// The acco.schedule/1 document (sched::to_json, with the thermal section on the rig).
[[nodiscard]] nlohmann::ordered_json to_json(const ScheduleRun& run);
// The text: sched::experiment_report, or thermal_experiment_report on the rig.
[[nodiscard]] report::Document schedule_report(const ScheduleRun& run);

}  // namespace acco::monitor
