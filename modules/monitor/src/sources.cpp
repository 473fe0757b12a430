#include "acco/monitor/sources.hpp"

#include <fmt/format.h>

#include "acco/core/option_check.hpp"
#include "acco/core/units.hpp"
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

Result<std::chrono::milliseconds> sampling_interval(std::string_view flag, const std::string& text,
                                                    int min_milliseconds) {
  const auto interval = units::parse_duration(text);
  if (!interval || *interval * 1000 < min_milliseconds || *interval > 3600) {
    return core::bad_option(flag, text,
                            fmt::format("a duration from {}ms to 1h (e.g. 1s)", min_milliseconds));
  }
  return std::chrono::milliseconds(static_cast<long long>(*interval * 1000));
}

Result<Sampling> sampling(const SamplingRequest& r) {
  Sampling s;
  ACCO_ASSIGN_OR_RETURN(s.interval, sampling_interval("--interval", r.interval, 100));
  ACCO_RETURN_IF_ERROR(
      core::check_range("--simulate", r.simulate, 0, kMaxSimulated,
                        fmt::format("a device count from 0 to {}", kMaxSimulated)));
  s.simulate = r.simulate;
  const auto scenario = power::parse_simulated_scenario(r.scenario);
  if (!scenario) {
    return core::bad_option("--scenario", r.scenario,
                            "one of cycle, idle, compute, transfer-bound, thermal-throttle, "
                            "power-capped");
  }
  s.scenario = *scenario;
  return s;
}

}  // namespace acco::monitor
