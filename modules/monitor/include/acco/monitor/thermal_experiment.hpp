// A scheduling experiment on the thermal rig (`acco schedule --simulate-thermal`): every policy
// once per governor setting, each on a fresh rig (the same start temperatures), and the result
// as the acco.schedule/1 document with its "thermal" section. Here rather than in sched because
// the rig and the governor are power's, which sits beside sched; run_thermal_workload is here.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "acco/core/result.hpp"
#include "acco/monitor/thermal_run.hpp"
#include "acco/power/governor.hpp"
#include "acco/report/document.hpp"
#include "acco/sched/experiment.hpp"
#include "acco/sched/experiment_setup.hpp"
#include "acco/sched/workload.hpp"

namespace acco::monitor {

// Governor settings by name, in order: "off" (firmware only, nullopt), "thermal", "energy",
// "cap:W".
using GovernorSettings = std::vector<std::pair<std::string, std::optional<power::GovernorOptions>>>;

struct ThermalExperimentOptions {
  // Policies, calibration runs, sorted decision, observe; `models` is not used (the rig's
  // kernels take the devices' clocks, which models calibrated elsewhere do not know).
  sched::ExperimentOptions experiment;
  double time_scale = 60;       // simulated seconds per wall second
  std::vector<double> cooling;  // heatsink-to-air resistance factor per device, or one for all
  // Each setting's name ("off", "thermal", "cap:300") and the governor (nullopt: firmware only).
  GovernorSettings governors;
};

// "1,2": cooling factors (heatsink-to-air resistance, 2 is a device with poor cooling) from 0.1
// to 100. kInvalidArgument "'LIST' is not factors from 0.1 to 100, one per device or one for
// all" otherwise. How many there are against the devices: sched::check_per_device.
[[nodiscard]] Result<std::vector<double>> parse_cooling(std::string_view list);
// "off,thermal,cap:300": each setting once (kInvalidArgument "'NAME' is given twice (each setting
// runs once)"), each off or what power::parse_governor_mode takes (its message then, with " or
// off" after it).
[[nodiscard]] Result<GovernorSettings> parse_governor_settings(std::string_view list);

// `acco schedule --simulate-thermal`'s flags in their text forms, with their defaults.
struct ThermalRequest {
  double scale = 60;                     // --thermal-scale: 1-10000
  std::string cooling = "1";             // --cooling: parse_cooling
  std::string governor = "off,thermal";  // --governor: parse_governor_settings
};

// `request` checked for the devices of `devices` (simulated: host devices only; one cooling
// factor, or one per device); the experiment is the caller's to fill in. Errors name the flag
// ("--cooling: ...", kInvalidArgument).
[[nodiscard]] Result<ThermalExperimentOptions> thermal_options(const ThermalRequest& request,
                                                               const sched::DeviceSetup& devices);

struct ThermalExperiment {
  sched::Experiment experiment;  // its runs named "<policy>/<setting>", policy by policy
  double time_scale = 0;
  std::vector<ThermalOutcome> runs;  // in the order of experiment.runs
};

// One run's throughput and energy over every run of the workload, calibration included (the
// devices heat up through all of them), on the rig's simulated clock.
struct ThermalSummary {
  double tasks_per_second = 0;
  double joules = 0;
  double joules_per_task = 0;
};
[[nodiscard]] ThermalSummary summarize(const ThermalOutcome& run);

// Every policy of options.experiment under every governor setting, a progress line before each.
// Errors: run_thermal_workload's, with the run's name ("dmda/thermal") in front.
[[nodiscard]] Result<ThermalExperiment> run_thermal_experiment(
    const sched::Workload& workload, const sched::ExperimentDevices& devices,
    const ThermalExperimentOptions& options, const sched::ProgressLine& progress = {});

// The acco.schedule/1 document (sched::to_json) with "thermal": the time scale and per run the
// simulated throughput, energy and what the firmware and the governor did.
[[nodiscard]] nlohmann::ordered_json to_json(const ThermalExperiment& experiment);

// The text: sched::experiment_report, then per run the simulated throughput, energy, hottest
// temperature, time under thermal slowdown and the governor's actions.
[[nodiscard]] report::Document thermal_experiment_report(const ThermalExperiment& experiment);

}  // namespace acco::monitor
