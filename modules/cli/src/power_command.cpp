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
#include "acco/power/simulated_device.hpp"
#include "acco/power/status.hpp"
#include "acco/report/table.hpp"

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

std::string watts(const std::optional<double>& w) {
  return w ? fmt::format("{:.0f} W", *w) : "-";
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
    out.out = fmt::format("acco power status: {} device(s) (NVML {})\n", status.samples.size(),
                          status.nvml);
    if (!status.samples.empty()) {
      std::vector<std::vector<std::string>> rows = {{"DEVICE", "MODEL", "STATE", "TEMP", "POWER",
                                                     "LIMIT", "DEFAULT", "MIN", "MAX", "THROTTLE"}};
      for (const power::DeviceSample& s : status.samples) {
        std::string throttle;
        for (const std::string& name : power::clock_event_reasons(s)) {
          throttle += (throttle.empty() ? "" : ",") + name;
        }
        rows.push_back(
            {s.device, s.model, power::status_state(s),
             s.temperature_gpu_celsius ? fmt::format("{:.0f} C", *s.temperature_gpu_celsius) : "-",
             watts(s.power_watts), watts(s.power_limit_enforced_watts),
             watts(s.power_limit_default_watts), watts(s.power_limit_min_watts),
             watts(s.power_limit_max_watts), throttle.empty() ? "-" : throttle});
      }
      out.out += report::render_table(report::plain_table(rows, report::TableStyle::layout(2, 1)));
    }
    if (status.unrestored) {
      for (const power::SavedDevice& d : *status.unrestored) {
        out.out += fmt::format(
            "  {} was set to {:.0f} W by a governor that did not restore it (original {:.0f} W); "
            "the next acco power run --allow-control restores it\n",
            d.uuid, d.set_limit_watts, d.original_limit_watts);
      }
    }
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

std::string run_text(const power::GovernorReport& report) {
  std::size_t applied = 0;
  for (const auto& a : report.actions) {
    applied += a.applied ? 1 : 0;
  }
  const power::GovernorStatus& status = report.status;
  std::vector<std::vector<std::string>> rows = {{"DEVICE", "STATE", "LIMIT", "WEIGHT", "NOTE"}};
  for (const power::GovernorDevice& d : status.devices) {
    const auto off = status.hands_off.find(d.uuid);
    rows.push_back({d.device, power::to_string(d.state),
                    d.limit_watts ? watts(d.limit_watts) : "as found",
                    fmt::format("{:.2f}", d.weight),
                    d.lost                          ? "lost"
                    : off != status.hands_off.end() ? "left alone: " + off->second
                    : d.energy_cap_watts ? fmt::format("energy cap {:.0f} W", *d.energy_cap_watts)
                                         : ""});
  }
  return fmt::format(
             "acco power run: {} round(s) over {} (stopped by {}); {} action(s), {} applied{}\n",
             report.rounds, units::format_seconds(report.duration_seconds), report.stopped_by,
             report.actions.size(), applied,
             status.allow_control ? "" : " (dry-run: give --allow-control to apply)") +
         report::render_table(report::plain_table(rows, report::TableStyle::layout(2, 1)));
}

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
    std::vector<power::DeviceSample> first;  // for --mode cap:W against the devices' ranges
    for (const auto& s : built->sources.devices) {
      raw.push_back(s.get());
      if (auto read = s->read(); read) {
        first.insert(first.end(), read->begin(), read->end());
      }
    }
    if (auto cap = power::check_cap(options_.governor.options, first); !cap) {
      return tl::unexpected(as_usage(std::move(cap.error()).with_context("--mode")));
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
    if (progress) {
      progress(fmt::format(
          "acco power run: mode {}, {}, every {}{} (NVML {})",
          power::mode_string(options_.governor.options),
          options_.governor.allow_control ? "applying actions"
                                          : "dry-run (--allow-control applies)",
          units::format_seconds(std::chrono::duration<double>(options_.monitor.interval).count()),
          options_.fast ? " on simulated time" : "", built->nvml_note));
    }
    power::GovernorLoopOptions loop_options;
    loop_options.interval = options_.monitor.interval;
    loop_options.duration = options_.duration;
    loop_options.simulated_clock = clock ? &*clock : nullptr;
    core::StopFlag stop;
    const StopOnSignal on_signal(signals, stop);
    const auto report = loop->run(built->sources.devices, loop_options, stop);
    if (!report) {
      Error e = report.error();
      if (e.code == Errc::kUnavailable) {  // no device: what was looked at, and the way to try
        e.message +=
            fmt::format(" (NVML {}; --simulate N governs simulated devices)", built->nvml_note);
      }
      return tl::unexpected(e);
    }
    Output out;
    for (const std::string& e : report->read_errors) {
      out.err += "acco power run: " + e + "\n";
    }
    out.out = json ? power::to_json(*report).dump(2) + "\n" : run_text(*report);
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
  std::string status_state_file = power::kDefaultStateFile;
  MonitorFlags run_monitor;
  GovernorFlags governor;
  std::string duration;
  bool fast = false;
};

Result<std::unique_ptr<Command>> build(const PowerFlags& flags, const core::Settings& settings) {
  if (flags.status->parsed()) {
    StatusOptions o;
    ACCO_ASSIGN_OR_RETURN(o.monitor, monitor_options(flags.status_monitor, settings));
    o.state_file = flags.status_state_file;
    return std::make_unique<StatusCommand>(std::move(o));
  }
  PowerRunOptions o;
  ACCO_ASSIGN_OR_RETURN(o.monitor, monitor_options(flags.run_monitor, settings));
  ACCO_ASSIGN_OR_RETURN(o.governor, governor_settings(flags.governor));
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
        flags.status
            ->add_option("--state-file", flags.status_state_file,
                         "the governor's state file, to report limits left changed")
            ->type_name("FILE");
        add_json_flag(*flags.status, shared, "print JSON (acco.power-status/1)");
        flags.run = sub.add_subcommand("run",
                                       "the governor in the foreground (dry-run unless "
                                       "--allow-control)");
        add_monitor_flags(*flags.run, shared, flags.run_monitor, "control period (default 1s)");
        add_governor_flags(*flags.run, flags.governor);
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
