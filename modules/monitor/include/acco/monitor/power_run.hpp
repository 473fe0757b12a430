// `acco power status` and `acco power run` as library calls: the devices the governor sees (NVML
// GPUs, simulated devices and the host's RAPL packages, built as the monitoring commands build
// them), read once for the status, or governed by power::GovernorLoop until a stop or a duration.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "acco/core/result.hpp"
#include "acco/core/stop.hpp"
#include "acco/monitor/sources.hpp"
#include "acco/power/governor_loop.hpp"
#include "acco/power/simulated_device.hpp"
#include "acco/power/status.hpp"

namespace acco::monitor {

// The devices to govern: `options` without the host and with RAPL; on simulated time (`clock`),
// `options.simulate` simulated devices reading that clock alone (NVML "off"). Errors:
// make_sources'.
[[nodiscard]] Result<Sources> governed_sources(const std::string& sysroot,
                                               const SourceOptions& options,
                                               const power::SimulatedClock* clock = nullptr);

// Each governed device's reading and state, and what a previous governor left changed (from
// `state_file`). Errors: governed_sources'.
[[nodiscard]] Result<power::PowerStatus> read_power_status(const std::string& sysroot,
                                                           const SourceOptions& sources,
                                                           const std::string& state_file);

struct PowerRunOptions {
  // The governor's mode, control and state file; its NVML library and sysroot are the sources'.
  power::GovernorSettings governor;
  std::string sysroot = "/";
  SourceOptions sources;
  std::chrono::milliseconds interval{1000};   // one round per interval
  std::chrono::duration<double> duration{0};  // 0: until `stop`
  // Simulated devices only, rounds back to back on simulated time (needs sources.simulate > 0
  // and a duration).
  bool fast = false;
};

// `fast` needs simulated devices and a duration, of at most a million rounds: kInvalidArgument
// naming the flags ("--fast runs simulated devices on simulated time: ...") otherwise.
[[nodiscard]] Status check_power_run(const PowerRunOptions& options);

// Lines for a person while the run goes on; either may be empty.
struct PowerRunLog {
  // The run's first line once the devices were read: mode, control, period, NVML.
  std::function<void(const std::string&)> started;
  // A line per action as it is taken ("    12.0 s  warning 0 governor_cap: ..."), time on the
  // governor's clock.
  std::function<void(const std::string&)> action;
};

// Governs the devices until `stop` or the duration, and restores the limits it changed. Errors:
// check_power_run's, governed_sources', GovernorLoop::create's and run's; "no device to govern"
// says what NVML was and how to govern simulated devices. Runs on the caller's thread.
[[nodiscard]] Result<power::GovernorReport> run_power(const PowerRunOptions& options,
                                                      const core::StopFlag& stop,
                                                      const PowerRunLog& log = {});

}  // namespace acco::monitor
