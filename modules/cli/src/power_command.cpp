// `acco power status`: each device's temperature, power, limits, throttle reasons and the state
// the governor's thresholds put it in (power::read_power_status). `acco power run`: the governor
// in the foreground (power::GovernorLoop), for --duration or until SIGTERM/SIGINT, dry-run unless
// --allow-control; limits it changed are restored on the way out. With --fast and only simulated
// devices, rounds run back to back on simulated time.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "acco/analyze/events.hpp"
#include "acco/core/clock.hpp"
#include "acco/core/stop.hpp"
#include "acco/core/units.hpp"
#include "acco/monitor/sources.hpp"
#include "acco/power/governor_loop.hpp"
#include "acco/power/report.hpp"
#include "acco/power/simulated_device.hpp"
#include "acco/power/status.hpp"
#include "acco/report/document.hpp"

#include "command_spec.hpp"
#include "commands.hpp"
#include "governor_flags.hpp"
#include "monitor_flags.hpp"
#include "process.hpp"

namespace acco::cli {
namespace {

// The devices to govern: NVML GPUs and simulated devices as the monitoring commands build them,
// and the host's RAPL packages where powercap has any; on simulated time (`clock`), simulated
// devices alone.
struct DeviceSources {
  monitor::Sources sources;
  std::string nvml_note;
};

Result<DeviceSources> device_sources(const MonitorOptions& monitor,
                                     const power::SimulatedClock* clock) {
  DeviceSources d;
  if (clock != nullptr) {
    d.sources.devices.push_back(std::make_unique<power::SimulatedSource>(
        monitor.sources.simulate, monitor.sources.scenario, clock->clock()));
    d.nvml_note = "off";
    return d;
  }
  monitor::SourceOptions options = monitor.sources;
  options.host = false;
  options.rapl = true;
  ACCO_ASSIGN_OR_RETURN(d.sources, monitor::make_sources(monitor.sysroot, options));
  d.nvml_note = d.sources.nvml_note;
  return d;
}

// --- status ---------------------------------------------------------------------------------

struct StatusOptions {
  MonitorOptions monitor;
  std::string state_file;
};

class StatusCommand final : public Command {
 public:
  explicit StatusCommand(StatusOptions options) : options_(std::move(options)) {}

  Result<Output> run(const Invocation& inv) const override {
    auto built = device_sources(options_.monitor, nullptr);
    if (!built) {
      return tl::unexpected(built.error());
    }
    const power::PowerStatus status =
        power::read_power_status(built->sources.devices, options_.state_file, built->nvml_note);
    Output out;
    for (const std::string& e : status.read_errors) {
      out.err += "acco power status: " + e + "\n";
    }
    if (!status.unrestored) {
      // What a previous governor left is unknown: the report is printed, and the run fails as
      // for any malformed input (an empty `unrestored` would say nothing is left).
      out.err += "acco power status: " + status.unrestored.error().message + "\n";
      out.exit_code = exit_code_for(status.unrestored.error());
    }
    if (inv.format == Format::kJson) {
      out.out = power::to_json(status).dump(2) + "\n";
      return out;
    }
    out.out = report::render_text(power::status_report(status));
    return out;
  }

 private:
  StatusOptions options_;
};

// --- run ------------------------------------------------------------------------------------

struct PowerRunOptions {
  MonitorOptions monitor;
  power::GovernorSettings governor;
  std::chrono::duration<double> duration{0};  // 0: until a signal
  bool fast = false;
};

class RunCommand final : public Command {
 public:
  explicit RunCommand(PowerRunOptions options) : options_(std::move(options)) {}

  Result<Output> run(const Invocation& inv) const override {
    const SignalScope signals;
    std::optional<power::SimulatedClock> clock;
    if (options_.fast) {
      clock.emplace(core::now_unix_nanos());
    }
    auto built = device_sources(options_.monitor, clock ? &*clock : nullptr);
    if (!built) {
      return tl::unexpected(built.error());
    }
    std::vector<power::SensorSource*> raw;
    for (const auto& s : built->sources.devices) {
      raw.push_back(s.get());
    }
    const bool json = inv.format == Format::kJson;
    const Progress& progress = inv.progress;
    auto loop = power::GovernorLoop::create(options_.governor, raw, [&](const power::Action& a) {
      if (progress && !json) {
        // The time on the governor's clock (seconds since the run started, simulated with
        // --fast), then what the event log would say.
        const analyze::Event e = analyze::governor_event(a, 0);
        progress(fmt::format("{:>8.1f} s  {} {} {}: {}", a.time_seconds, e.level,
                             e.device.empty() ? "-" : e.device, e.event, e.message));
      }
    });
    if (!loop) {
      return tl::unexpected(governor_error(loop.error()));
    }
    power::GovernorLoopOptions loop_options;
    loop_options.interval = options_.monitor.interval;
    loop_options.duration = options_.duration;
    loop_options.simulated_clock = clock ? &*clock : nullptr;
    loop_options.started = [&] {
      if (!progress) {
        return;
      }
      progress(fmt::format(
          "acco power run: mode {}, {}, every {}{} (NVML {})",
          power::mode_string(options_.governor.options),
          options_.governor.allow_control ? "applying actions"
                                          : "dry-run (--allow-control applies)",
          units::format_seconds(std::chrono::duration<double>(options_.monitor.interval).count()),
          options_.fast ? " on simulated time" : "", built->nvml_note));
    };
    core::StopFlag stop;
    const StopOnSignal on_signal(signals, stop);
    const auto report = loop->run(built->sources.devices, loop_options, stop);
    if (!report) {
      Error e = governor_error(report.error());
      if (e.message.starts_with(power::kNoDeviceToGovern)) {  // what was looked at, how to try
        e.message +=
            fmt::format(" (NVML {}; --simulate N governs simulated devices)", built->nvml_note);
      }
      return tl::unexpected(std::move(e));
    }
    Output out;
    for (const std::string& e : report->read_errors) {
      out.err += "acco power run: " + e + "\n";
    }
    out.out = json ? power::to_json(*report).dump(2) + "\n"
                   : report::render_text(power::governor_report(*report));
    return out;
  }

 private:
  PowerRunOptions options_;
};

// --- flags ----------------------------------------------------------------------------------

struct PowerFlags {
  CLI::App* status = nullptr;
  CLI::App* run = nullptr;
  MonitorFlags status_monitor;
  MonitorFlags run_monitor;
  GovernorFlags governor;
  std::string duration;
  bool fast = false;
};

Result<std::unique_ptr<Command>> build(const PowerFlags& flags, const core::Settings& settings) {
  if (flags.status->parsed()) {
    StatusOptions o;
    ACCO_ASSIGN_OR_RETURN(o.monitor, monitor_options(flags.status_monitor, settings));
    o.state_file = settings.get("state-file");
    if (o.state_file.empty()) {  // as power run refuses it
      return bad_setting(settings, "state-file", "a file path");
    }
    return std::make_unique<StatusCommand>(std::move(o));
  }
  PowerRunOptions o;
  ACCO_ASSIGN_OR_RETURN(o.monitor, monitor_options(flags.run_monitor, settings));
  ACCO_ASSIGN_OR_RETURN(o.governor, governor_settings(flags.governor, settings));
  o.governor.nvml_library = o.monitor.sources.nvml_library;
  o.governor.sysroot = o.monitor.sysroot;
  if (!flags.duration.empty()) {
    ACCO_ASSIGN_OR_RETURN(o.duration, duration_flag(flags.duration, "10m"));
  }
  o.fast = flags.fast;
  if (o.fast && (o.monitor.sources.simulate == 0 || o.duration.count() == 0)) {
    return usage(
        "--fast runs simulated devices on simulated time: give --simulate N and "
        "--duration D");
  }
  constexpr double kMaxFastRounds = 1e6;
  if (o.fast && o.duration / o.monitor.interval > kMaxFastRounds) {
    return usage("--fast: --duration / --interval is more than a million rounds");
  }
  return std::make_unique<RunCommand>(std::move(o));
}

}  // namespace

CommandSpec power_command() {
  return command_with_flags<PowerFlags>(
      "power", "the power and thermal governor: status of every device, or run it",
      [](CLI::App& sub, SharedFlags& shared, PowerFlags& flags) {
        sub.require_subcommand(1);
        flags.status = sub.add_subcommand(
            "status", "temperature, power, limits, throttle reasons and governor state");
        add_monitor_flags(*flags.status, shared, flags.status_monitor,
                          "unused by status (one reading)");
        add_setting_flag(*flags.status, shared, "state-file",
                         "the governor's state file, to report limits left changed (env "
                         "ACCO_STATE_FILE)",
                         "FILE");
        add_json_flag(*flags.status, shared, "print JSON (acco.power-status/1)");
        flags.run = sub.add_subcommand("run",
                                       "the governor in the foreground (dry-run unless "
                                       "--allow-control)");
        add_monitor_flags(*flags.run, shared, flags.run_monitor, "control period (default 1s)");
        add_governor_flags(*flags.run, shared, flags.governor);
        flags.run
            ->add_option("--duration", flags.duration,
                         "stop after this long (default: at "
                         "SIGTERM or SIGINT)")
            ->type_name("DURATION");
        flags.run->add_flag("--fast", flags.fast,
                            "simulated devices only: run the rounds back to back on simulated "
                            "time");
        add_json_flag(*flags.run, shared, "print JSON (acco.power-run/1) with every action");
      },
      build);
}

}  // namespace acco::cli
