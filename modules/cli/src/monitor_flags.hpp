// The flags the monitoring commands (serve, top, record) share: the sampling period, the
// simulated devices and their scenario, and where the sensors read (sysroot, NVML), checked once
// into the sources' options.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "acco/core/result.hpp"
#include "acco/core/settings.hpp"
#include "acco/monitor/server.hpp"
#include "acco/monitor/sources.hpp"

#include "command_spec.hpp"

namespace acco::cli {

using MonitorFlags = monitor::SamplingRequest;

struct MonitorOptions {
  std::chrono::milliseconds interval{1000};
  monitor::SourceOptions sources;
  std::string sysroot = "/";
};

// Declares --interval (with `interval_help`), --simulate, --scenario, --sysroot, --nvml,
// --nvml-library and --config.
void add_monitor_flags(CLI::App& sub, SharedFlags& shared, MonitorFlags& flags,
                       std::string_view interval_help);
// kUsage naming the flag (monitor::sampling): an interval outside 100 ms..1 h, a device count
// outside 0..64, an unknown scenario.
[[nodiscard]] Result<MonitorOptions> monitor_options(const MonitorFlags& flags,
                                                     const core::Settings& settings);

}  // namespace acco::cli
