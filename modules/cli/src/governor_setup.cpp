#include "governor_setup.hpp"

#include <fmt/format.h>

#include "acco/power/rapl.hpp"
#include "acco/power/simulated_device.hpp"
#include "acco/power/thermal_rig.hpp"

#include "command_spec.hpp"

namespace acco::cli {

void add_governor_flags(CLI::App& sub, GovernorFlags& flags, CLI::Option* governor) {
  const std::vector<CLI::Option*> declared = {
      sub.add_option("--mode", flags.mode,
                     "thermal (default: thermal rules, load-following caps), energy (the cap "
                     "with the least energy per unit of work), cap:W (a fixed cap)")
          ->type_name("MODE"),
      sub.add_flag("--allow-control", flags.allow_control,
                   "apply the actions (power limits, clocks; needs root for GPUs and RAPL); "
                   "without it the governor only logs them"),
      sub.add_option("--state-file", flags.state_file,
                     std::string("where original limits are kept while acco has changed them "
                                 "(default ") +
                         kDefaultStateFile + ")")
          ->type_name("FILE")};
  if (governor != nullptr) {
    for (CLI::Option* option : declared) {
      option->needs(governor);
    }
  }
}

Result<GovernorSettings> governor_settings(const GovernorFlags& flags) {
  GovernorSettings s;
  if (Status mode = power::parse_governor_mode(flags.mode, s.options); !mode) {
    return usage("--mode: " + mode.error().message);
  }
  if (flags.state_file.empty()) {
    return bad_value("--state-file", flags.state_file, "a file path");
  }
  s.allow_control = flags.allow_control;
  s.state_file = flags.state_file;
  return s;
}

void RoutedActuator::add(const std::string& source, std::unique_ptr<power::Actuator> actuator) {
  by_source_[source] = std::move(actuator);
}

void RoutedActuator::learn(const std::vector<power::DeviceSample>& samples) {
  for (const power::DeviceSample& s : samples) {
    source_of_[s.uuid] = s.source;
  }
}

Result<power::Actuator*> RoutedActuator::route(const std::string& uuid) const {
  const auto source = source_of_.find(uuid);
  if (source == source_of_.end()) {
    return fail(Errc::kNotFound, fmt::format("{}: no such device", uuid));
  }
  const auto actuator = by_source_.find(source->second);
  if (actuator == by_source_.end()) {
    return fail(Errc::kUnsupported,
                fmt::format("{}: {} devices cannot be controlled here", uuid, source->second));
  }
  return actuator->second.get();
}

Status RoutedActuator::set_power_limit(const std::string& uuid, double watts) {
  ACCO_ASSIGN_OR_RETURN(auto* a, route(uuid));
  return a->set_power_limit(uuid, watts);
}

Status RoutedActuator::lock_sm_clocks(const std::string& uuid, double min_hertz, double max_hertz) {
  ACCO_ASSIGN_OR_RETURN(auto* a, route(uuid));
  return a->lock_sm_clocks(uuid, min_hertz, max_hertz);
}

Status RoutedActuator::unlock_sm_clocks(const std::string& uuid) {
  ACCO_ASSIGN_OR_RETURN(auto* a, route(uuid));
  return a->unlock_sm_clocks(uuid);
}

std::vector<power::Action> Governing::tick(const std::vector<power::DeviceSample>& samples,
                                           double now) const {
  actuator->learn(samples);
  return run->tick(samples, now);
}

Result<Governing> make_governing(const GovernorSettings& settings,
                                 const std::vector<power::SensorSource*>& sources,
                                 const std::string& nvml_library, const std::string& sysroot,
                                 power::GovernorRun::Log log) {
  Governing g;
  g.actuator = std::make_unique<RoutedActuator>();
  for (power::SensorSource* source : sources) {
    if (auto* simulated = dynamic_cast<power::SimulatedSource*>(source)) {
      g.actuator->add(
          "simulated",
          power::make_simulated_actuator(
              [simulated](int i, const std::function<void(power::SimulatedDevice&)>& fn) {
                return simulated->with_device(i, fn);
              },
              simulated->size()));
    } else if (auto* rig = dynamic_cast<power::ThermalRig*>(source)) {
      g.actuator->add("simulated", rig->actuator());
    } else if (source->name() == "rapl") {
      g.actuator->add("rapl", power::make_rapl_actuator(sysroot));
      g.uses_state_file = settings.allow_control;
    } else if (source->name() == "nvml" && settings.allow_control) {
      auto nvml = power::make_nvml_actuator(nvml_library);
      if (!nvml) {
        return fail(Errc::kUnavailable, fmt::format("--allow-control: {}", nvml.error().message));
      }
      g.actuator->add("nvml", std::move(*nvml));
      g.uses_state_file = true;
    }
  }
  power::ControllerOptions controller;
  controller.allow_control = settings.allow_control;
  if (g.uses_state_file) {
    controller.state_file = settings.state_file;
  }
  g.run = std::make_unique<power::GovernorRun>(power::Governor(settings.options),
                                               power::Controller(g.actuator.get(), controller),
                                               std::move(log));
  return g;
}

}  // namespace acco::cli
