#include "acco/monitor/thermal_experiment.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/core/units.hpp"

namespace acco::monitor {

Result<std::vector<double>> parse_cooling(std::string_view list) {
  std::vector<double> cooling;
  for (const std::string& item : units::split(list, ',')) {
    const double factor = units::parse_double(item).value_or(-1);
    if (!(factor >= 0.1 && factor <= 100)) {
      return fail(
          Errc::kInvalidArgument,
          fmt::format("'{}' is not factors from 0.1 to 100, one per device or one for all", list));
    }
    cooling.push_back(factor);
  }
  return cooling;
}

Result<GovernorSettings> parse_governor_settings(std::string_view list) {
  GovernorSettings settings;
  for (const std::string& item : units::split(list, ',')) {
    const bool again = std::any_of(settings.begin(), settings.end(),
                                   [&](const auto& g) { return g.first == item; });
    if (again) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("'{}' is given twice (each setting runs once)", item));
    }
    if (item == "off") {
      settings.emplace_back(item, std::nullopt);
      continue;
    }
    power::GovernorOptions g;
    if (Status parsed = power::parse_governor_mode(item, g); !parsed) {
      return fail(Errc::kInvalidArgument, parsed.error().message + " or off");
    }
    settings.emplace_back(item, g);
  }
  return settings;
}

namespace {

using Json = nlohmann::ordered_json;

Json thermal_json(const ThermalOutcome& t) {
  const ThermalSummary sum = summarize(t);
  Json devices = Json::array();
  for (std::size_t i = 0; i < t.devices.size(); ++i) {
    const auto& d = t.devices[i];
    devices.push_back({{"device", i},
                       {"energy_joules", d.energy_joules},
                       {"max_temperature_celsius", d.max_temperature_celsius},
                       {"sw_thermal_seconds", d.sw_thermal_seconds},
                       {"hw_thermal_seconds", d.hw_thermal_seconds},
                       {"busy_seconds", d.busy_seconds},
                       {"lost", d.lost}});
  }
  Json j = {{"policy", t.outcome.policy},
            {"simulated_seconds", t.simulated_seconds},
            {"wall_seconds", t.wall_seconds},
            {"tasks_run", t.tasks_run},
            {"tasks_per_simulated_second", sum.tasks_per_second},
            {"energy_joules", sum.joules},
            {"energy_per_task_joules", sum.joules_per_task},
            {"devices", devices}};
  if (t.governor) {
    Json actions = Json::object();
    for (const auto& [kind, n] : t.governor->actions_total) {
      actions[kind] = n;
    }
    j["governor"] = {{"mode", t.governor->mode}, {"actions_total", actions}};
  }
  return j;
}

}  // namespace

ThermalSummary summarize(const ThermalOutcome& run) {
  ThermalSummary s;
  for (const auto& d : run.devices) {
    s.joules += d.energy_joules;
  }
  // Simulated time: the rig's clock, which the energy is integrated on.
  s.tasks_per_second =
      run.simulated_seconds > 0 ? static_cast<double>(run.tasks_run) / run.simulated_seconds : 0;
  s.joules_per_task = run.tasks_run > 0 ? s.joules / static_cast<double>(run.tasks_run) : 0;
  return s;
}

Result<ThermalExperiment> run_thermal_experiment(const sched::Workload& workload,
                                                 const sched::ExperimentDevices& devices,
                                                 const ThermalExperimentOptions& o,
                                                 const sched::ProgressLine& progress) {
  ThermalExperiment out;
  out.experiment = sched::describe_experiment(workload, devices, o.experiment);
  out.time_scale = o.time_scale;
  const auto& policies = o.experiment.policies;
  const std::size_t total = policies.size() * o.governors.size();
  for (const auto kind : policies) {
    for (const auto& [name, governor] : o.governors) {
      const std::string label = fmt::format("{}/{}", sched::to_string(kind), name);
      if (progress) {
        progress(fmt::format("[{}/{}] {}: {} task(s), {} calibration run(s), thermal x{:g}",
                             out.runs.size() + 1, total, label, workload.tasks.size(),
                             o.experiment.calibration_runs, o.time_scale));
      }
      sched::RuntimeOptions options;
      options.policy = kind;
      options.knobs.sorted_decision = o.experiment.sorted_decision;
      sched::WorkloadRunOptions run;
      run.calibration_runs = o.experiment.calibration_runs;
      run.observe = o.experiment.observe;
      ThermalRunOptions thermal;
      thermal.rig.time_scale = o.time_scale;
      thermal.rig.cooling_factors = o.cooling.size() == 1
                                        ? std::vector<double>(devices.devices.size(), o.cooling[0])
                                        : o.cooling;
      thermal.governor = governor;
      auto outcome =
          run_thermal_workload(workload, sched::device_specs(devices), options, run, thermal);
      if (!outcome) {
        return tl::unexpected(std::move(outcome.error()).with_context(label));
      }
      outcome->outcome.policy = label;
      out.experiment.runs.push_back(outcome->outcome);
      out.runs.push_back(std::move(*outcome));
    }
  }
  return out;
}

nlohmann::ordered_json to_json(const ThermalExperiment& t) {
  Json j = sched::to_json(t.experiment);
  if (!t.runs.empty()) {
    Json list = Json::array();
    for (const auto& run : t.runs) {
      list.push_back(thermal_json(run));
    }
    j["thermal"] = {{"time_scale", t.time_scale}, {"runs", list}};
  }
  return j;
}

}  // namespace acco::monitor
