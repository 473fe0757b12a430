// The sources a monitoring command samples, built once from its options: NVML GPUs (when the
// library loads), simulated devices, the host, and RAPL packages for the governor. Shared by
// serve, top, record and power.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "acco/core/fs.hpp"
#include "acco/core/result.hpp"
#include "acco/power/sensor_source.hpp"
#include "acco/power/simulated_device.hpp"

namespace acco::monitor {

struct SourceOptions {
  std::string nvml_mode = "auto";  // auto: use NVML when it loads; on: fail without it; off
  std::string nvml_library = "libnvidia-ml.so.1";
  int simulate = 0;
  power::SimulatedScenario scenario = power::SimulatedScenario::kCycle;
  bool host = true;
  // The host's CPU packages (powercap RAPL zones under the sysroot) as devices too, after the
  // others: what the governor controls besides GPUs.
  bool rapl = false;
};

struct Sources {
  std::unique_ptr<core::Fs> fs;  // what the host and NVML sources read; outlives them
  std::vector<std::unique_ptr<power::SensorSource>> devices;
  std::unique_ptr<power::HostSource> host;
  std::string nvml_note;  // "on", "off" or "unavailable (<why>)"
};

// `sysroot` is where /sys and /proc are read ("/" live). With nvml_mode "on", a library that
// does not load is the error (kUnavailable); with "auto" it is only noted.
[[nodiscard]] Result<Sources> make_sources(const std::string& sysroot,
                                           const SourceOptions& options);

}  // namespace acco::monitor
