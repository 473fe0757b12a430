// The sources a monitoring command samples, built once from its options: NVML GPUs (when the
// library loads), simulated devices, the host, and RAPL packages for the governor. Shared by
// serve, top, record and power.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
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

// The most simulated devices a command line adds.
inline constexpr int kMaxSimulated = 64;

// The sampling flags of `acco serve`, `top`, `record` and `power`, in their text forms.
struct SamplingRequest {
  std::string interval = "1s";     // 100ms-1h
  int simulate = 0;                // simulated devices: 0-kMaxSimulated
  std::string scenario = "cycle";  // power::parse_simulated_scenario
};

struct Sampling {
  std::chrono::milliseconds interval{1000};
  int simulate = 0;
  power::SimulatedScenario scenario = power::SimulatedScenario::kCycle;
};

// `request` checked; errors name the flag ("--simulate: '65' is not a device count from 0 to
// 64", kInvalidArgument).
[[nodiscard]] Result<Sampling> sampling(const SamplingRequest& request);
// A sampling period from `min_milliseconds` to 1 h ("200ms", "1s"); errors name `flag`.
[[nodiscard]] Result<std::chrono::milliseconds> sampling_interval(std::string_view flag,
                                                                  const std::string& text,
                                                                  int min_milliseconds);

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
