// `acco power status`: each device's temperature, power, limits, throttle reasons and the state
// the governor's thresholds put it in (monitor::read_power_status). `acco power run`: the governor
// in the foreground (monitor::run_power), for --duration or until SIGTERM/SIGINT, dry-run unless
// --allow-control; limits it changed are restored on the way out. With --fast and only simulated
// devices, rounds run back to back on simulated time.
#include <chrono>
#include <memory>
#include <string>

#include "acco/core/process.hpp"
#include "acco/core/stop.hpp"
#include "acco/monitor/power_run.hpp"
#include "acco/power/report.hpp"
#include "acco/power/status.hpp"
#include "acco/report/document.hpp"

#include "command_spec.hpp"
#include "commands.hpp"
#include "governor_flags.hpp"
#include "monitor_flags.hpp"

namespace acco::cli {
namespace {

// --- status ---------------------------------------------------------------------------------

struct StatusOptions {
  MonitorOptions monitor;
  std::string state_file;
};

class StatusCommand final : public Command {
 public:
  explicit StatusCommand(StatusOptions options) : options_(std::move(options)) {}

  Result<Output> run(const Invocation& inv) const override {
    ACCO_ASSIGN_OR_RETURN(
        const power::PowerStatus status,
        monitor::read_power_status(options_.monitor.sysroot, options_.monitor.sources,
                                   options_.state_file));
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
    out.out = render(inv, status, power::status_report);
    return out;
  }

 private:
  StatusOptions options_;
};

// --- run ------------------------------------------------------------------------------------

class RunCommand final : public Command {
 public:
  explicit RunCommand(monitor::PowerRunOptions options) : options_(std::move(options)) {}

  Result<Output> run(const Invocation& inv) const override {
    const core::SignalScope signals;
    const bool json = inv.format == Format::kJson;
    monitor::PowerRunLog log;
    if (inv.progress) {
      log.started = inv.progress;
      if (!json) {
        log.action = inv.progress;
      }
    }
    core::StopFlag stop;
    const core::StopOnSignal on_signal(signals, stop);
    auto report = monitor::run_power(options_, stop, log);
    if (!report) {
      return tl::unexpected(governor_error(std::move(report.error())));
    }
    Output out;
    for (const std::string& e : report->read_errors) {
      out.err += "acco power run: " + e + "\n";
    }
    out.out = render(inv, *report, power::governor_report);
    return out;
  }

 private:
  monitor::PowerRunOptions options_;
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
  monitor::PowerRunOptions o;
  ACCO_ASSIGN_OR_RETURN(const MonitorOptions monitor, monitor_options(flags.run_monitor, settings));
  o.interval = monitor.interval;
  o.sources = monitor.sources;
  o.sysroot = monitor.sysroot;
  ACCO_ASSIGN_OR_RETURN(o.governor, governor_settings(flags.governor, settings));
  if (!flags.duration.empty()) {
    ACCO_ASSIGN_OR_RETURN(o.duration, duration_flag(flags.duration, "10m"));
  }
  o.fast = flags.fast;
  ACCO_RETURN_IF_ERROR(as_usage(monitor::check_power_run(o)));
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
