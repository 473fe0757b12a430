#include "monitor_flags.hpp"

#include <string>
#include <vector>

#include "acco/power/simulated_device.hpp"

namespace acco::cli {

void add_monitor_flags(CLI::App& sub, SharedFlags& shared, MonitorFlags& flags,
                       std::string_view interval_help) {
  sub.add_option("--interval", flags.interval, std::string(interval_help))->type_name("DURATION");
  sub.add_option("--simulate", flags.simulate,
                 "add N simulated accelerators (thermal and power model)")
      ->type_name("N");
  std::vector<std::string> scenarios;
  for (const auto scenario :
       {power::SimulatedScenario::kCycle, power::SimulatedScenario::kIdle,
        power::SimulatedScenario::kCompute, power::SimulatedScenario::kTransferBound,
        power::SimulatedScenario::kThermalThrottle, power::SimulatedScenario::kPowerCapped}) {
    scenarios.emplace_back(power::to_string(scenario));
  }
  offer_values(sub.add_option("--scenario", flags.scenario,
                              "what the simulated devices run: cycle (default), idle, compute, "
                              "transfer-bound, thermal-throttle, power-capped")
                   ->type_name("NAME"),
               scenarios);
  add_setting_flag(sub, shared, "sysroot",
                   "read DIR/sys and DIR/proc for the host sensors (env ACCO_SYSROOT)", "DIR");
  add_setting_flag(sub, shared, "nvml", "NVML GPUs: auto, on, off (env ACCO_NVML)", "MODE");
  add_setting_flag(sub, shared, "nvml-library", "NVML library to load (env ACCO_NVML_LIBRARY)",
                   "LIB");
  add_config_flag(sub, shared);
}

Result<MonitorOptions> monitor_options(const MonitorFlags& flags, const core::Settings& settings) {
  MonitorOptions o;
  ACCO_ASSIGN_OR_RETURN(const auto sampling, as_usage(monitor::sampling(flags)));
  o.interval = sampling.interval;
  o.sources.simulate = sampling.simulate;
  o.sources.scenario = sampling.scenario;
  o.sources.nvml_mode = settings.get("nvml");
  o.sources.nvml_library = settings.get("nvml-library");
  o.sysroot = settings.get("sysroot");
  return o;
}

}  // namespace acco::cli
