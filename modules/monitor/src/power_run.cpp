#include "acco/monitor/power_run.hpp"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "acco/analyze/events.hpp"
#include "acco/core/clock.hpp"
#include "acco/core/units.hpp"

namespace acco::monitor {

Result<Sources> governed_sources(const std::string& sysroot, const SourceOptions& options,
                                 const power::SimulatedClock* clock) {
  if (clock != nullptr) {
    Sources sources;
    sources.devices.push_back(std::make_unique<power::SimulatedSource>(
        options.simulate, options.scenario, clock->clock()));
    sources.nvml_note = "off";
    return sources;
  }
  SourceOptions governed = options;
  governed.host = false;
  governed.rapl = true;
  return make_sources(sysroot, governed);
}

Result<power::PowerStatus> read_power_status(const std::string& sysroot,
                                             const SourceOptions& sources,
                                             const std::string& state_file) {
  ACCO_ASSIGN_OR_RETURN(const Sources built, governed_sources(sysroot, sources));
  return power::read_power_status(built.devices, state_file, built.nvml_note);
}

Status check_power_run(const PowerRunOptions& options) {
  if (!options.fast) {
    return {};
  }
  if (options.sources.simulate == 0 || options.duration.count() == 0) {
    return fail(Errc::kInvalidArgument,
                "--fast runs simulated devices on simulated time: give --simulate N and "
                "--duration D");
  }
  constexpr double kMaxFastRounds = 1e6;
  if (options.duration / options.interval > kMaxFastRounds) {
    return fail(Errc::kInvalidArgument,
                "--fast: --duration / --interval is more than a million rounds");
  }
  return {};
}

Result<power::GovernorReport> run_power(const PowerRunOptions& options, const core::StopFlag& stop,
                                        const PowerRunLog& log) {
  ACCO_RETURN_IF_ERROR(check_power_run(options));
  std::optional<power::SimulatedClock> clock;
  if (options.fast) {
    clock.emplace(core::now_unix_nanos());
  }
  ACCO_ASSIGN_OR_RETURN(const Sources built, governed_sources(options.sysroot, options.sources,
                                                              clock ? &*clock : nullptr));
  std::vector<power::SensorSource*> raw;
  for (const auto& s : built.devices) {
    raw.push_back(s.get());
  }
  power::GovernorSettings settings = options.governor;
  settings.nvml_library = options.sources.nvml_library;
  settings.sysroot = options.sysroot;
  ACCO_ASSIGN_OR_RETURN(
      auto loop, power::GovernorLoop::create(settings, raw, [&](const power::Action& a) {
        if (log.action) {
          // The time on the governor's clock (seconds since the run started,
          // simulated when fast), then what the event log would say.
          const analyze::Event e = analyze::governor_event(a, 0);
          log.action(fmt::format("{:>8.1f} s  {} {} {}: {}", a.time_seconds, e.level,
                                 e.device.empty() ? "-" : e.device, e.event, e.message));
        }
      }));
  power::GovernorLoopOptions loop_options;
  loop_options.interval = options.interval;
  loop_options.duration = options.duration;
  loop_options.simulated_clock = clock ? &*clock : nullptr;
  loop_options.started = [&] {
    if (!log.started) {
      return;
    }
    log.started(fmt::format(
        "acco power run: mode {}, {}, every {}{} (NVML {})", power::mode_string(settings.options),
        settings.allow_control ? "applying actions" : "dry-run (--allow-control applies)",
        units::format_seconds(std::chrono::duration<double>(options.interval).count()),
        options.fast ? " on simulated time" : "", built.nvml_note));
  };
  auto report = loop.run(built.devices, loop_options, stop);
  if (!report && report.error().message.starts_with(power::kNoDeviceToGovern)) {
    // What was looked at, and how to try.
    report.error().message +=
        fmt::format(" (NVML {}; --simulate N governs simulated devices)", built.nvml_note);
  }
  return report;
}

}  // namespace acco::monitor
