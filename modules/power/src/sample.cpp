#include "acco/power/sample.hpp"

namespace acco::power {

const std::vector<ClockEventName>& clock_event_names() {
  static const std::vector<ClockEventName> names = {
      {clock_event::kGpuIdle, "gpu_idle"},
      {clock_event::kApplicationsClocksSetting, "clocks_setting"},
      {clock_event::kSwPowerCap, "sw_power_cap"},
      {clock_event::kHwSlowdown, "hw_slowdown"},
      {clock_event::kSyncBoost, "sync_boost"},
      {clock_event::kSwThermalSlowdown, "sw_thermal"},
      {clock_event::kHwThermalSlowdown, "hw_thermal"},
      {clock_event::kHwPowerBrakeSlowdown, "hw_power_brake"},
      {clock_event::kDisplayClockSetting, "display_clocks"},
  };
  return names;
}

}  // namespace acco::power
