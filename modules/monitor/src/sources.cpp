#include "acco/monitor/sources.hpp"

#include "acco/power/host_source.hpp"
#include "acco/power/nvml_sensor.hpp"
#include "acco/power/rapl.hpp"

namespace acco::monitor {

Result<Sources> make_sources(const std::string& sysroot, const SourceOptions& options) {
  Sources s;
  auto fs = core::make_disk_fs(sysroot);
  if (!fs) {
    return tl::unexpected(std::move(fs).error());
  }
  s.fs = std::move(*fs);
  s.nvml_note = "off";
  if (options.nvml_mode != "off") {
    auto nvml = power::make_nvml_source(*s.fs, options.nvml_library);
    if (nvml) {
      s.devices.push_back(std::move(*nvml));
      s.nvml_note = "on";
    } else if (options.nvml_mode == "on") {
      return tl::unexpected(std::move(nvml).error());
    } else {
      s.nvml_note = "unavailable (" + nvml.error().message + ")";
    }
  }
  if (options.simulate > 0) {
    s.devices.push_back(
        std::make_unique<power::SimulatedSource>(options.simulate, options.scenario));
  }
  if (options.rapl) {
    s.devices.push_back(power::make_rapl_source(*s.fs));
  }
  if (options.host) {
    s.host = power::make_host_source(
        *s.fs, {.ticks_per_second = power::clock_ticks_per_second(), .clock = {}});
  }
  return s;
}

}  // namespace acco::monitor
