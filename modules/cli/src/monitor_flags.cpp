#include "monitor_flags.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "acco/core/units.hpp"
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

Result<std::chrono::milliseconds> sampling_interval(std::string_view flag, const std::string& text,
                                                    int min_milliseconds) {
  const auto interval = units::parse_duration(text);
  if (!interval || *interval * 1000 < min_milliseconds || *interval > 3600) {
    return bad_value(std::string(flag), text,
                     fmt::format("a duration from {}ms to 1h (e.g. 1s)", min_milliseconds));
  }
  return std::chrono::milliseconds(static_cast<long long>(*interval * 1000));
}

Result<monitor::ServerOptions> listen_address(std::string_view flag, const std::string& text) {
  auto listen = monitor::parse_listen(text);
  if (!listen) {
    return bad_value(std::string(flag), text, "HOST:PORT (e.g. 127.0.0.1:9477 or 0.0.0.0:9477)");
  }
  return *listen;
}

Result<MonitorOptions> monitor_options(const MonitorFlags& flags, const core::Settings& settings) {
  MonitorOptions o;
  ACCO_ASSIGN_OR_RETURN(o.interval, sampling_interval("--interval", flags.interval, 100));
  if (flags.simulate < 0 || flags.simulate > kMaxSimulated) {
    return bad_value("--simulate", std::to_string(flags.simulate),
                     fmt::format("a device count from 0 to {}", kMaxSimulated));
  }
  o.sources.simulate = flags.simulate;
  const auto scenario = power::parse_simulated_scenario(flags.scenario);
  if (!scenario) {
    return bad_value("--scenario", flags.scenario,
                     "one of cycle, idle, compute, transfer-bound, thermal-throttle, power-capped");
  }
  o.sources.scenario = *scenario;
  o.sources.nvml_mode = settings.get("nvml");
  o.sources.nvml_library = settings.get("nvml-library");
  o.sysroot = settings.get("sysroot");
  return o;
}

}  // namespace acco::cli
