// `acco power status`: each device's temperature, power, limits, throttle reasons and the state
// the governor's thresholds put it in. `acco power run`: the governor in the foreground, for
// --duration or until SIGTERM/SIGINT, dry-run unless --allow-control; limits it changed are
// restored on the way out. With --fast and only simulated devices, rounds run back to back on
// simulated time.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/core/units.hpp"
#include "acco/monitor/events.hpp"
#include "acco/monitor/json.hpp"
#include "acco/monitor/sources.hpp"
#include "acco/power/controller.hpp"
#include "acco/power/governor.hpp"
#include "acco/power/rapl.hpp"
#include "acco/power/simulated_device.hpp"
#include "acco/report/table.hpp"

#include "command_spec.hpp"
#include "commands.hpp"
#include "governor_setup.hpp"
#include "monitor_flags.hpp"
#include "process.hpp"

namespace acco::cli {
namespace {

std::int64_t now_unix_nanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The devices to govern: NVML GPUs and simulated devices as the monitoring commands build them,
// and the host's RAPL packages where powercap has any.
struct DeviceSources {
  monitor::Sources sources;
  std::string nvml_note;
};

Result<DeviceSources> device_sources(const MonitorOptions& monitor, bool fast,
                                     const std::function<std::int64_t()>& simulated_clock) {
  DeviceSources d;
  if (fast) {
    d.sources.devices.push_back(std::make_unique<power::SimulatedSource>(
        monitor.sources.simulate, monitor.sources.scenario, simulated_clock));
    d.nvml_note = "off";
    return d;
  }
  monitor::SourceOptions options = monitor.sources;
  options.host = false;
  ACCO_ASSIGN_OR_RETURN(d.sources, monitor::make_sources(monitor.sysroot, options));
  d.nvml_note = d.sources.nvml_note;
  if (d.sources.fs) {
    d.sources.devices.push_back(power::make_rapl_source(*d.sources.fs));
  }
  return d;
}

std::vector<power::DeviceSample> read_all(
    const std::vector<std::unique_ptr<power::SensorSource>>& sources,
    std::vector<std::string>& errors) {
  std::vector<power::DeviceSample> out;
  for (const auto& source : sources) {
    auto samples = source->read();
    if (!samples) {
      errors.push_back(fmt::format("{}: {}", source->name(), samples.error().message));
      continue;
    }
    out.insert(out.end(), samples->begin(), samples->end());
  }
  return out;
}

std::string throttle_names(const power::DeviceSample& s) {
  std::string out;
  for (const auto& [bit, name] : power::clock_event_names()) {
    if ((s.clock_event_reasons.value_or(0) & bit) != 0) {
      out += (out.empty() ? "" : ",") + std::string(name);
    }
  }
  return out.empty() ? "-" : out;
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

  Output run(const Invocation& inv) const override {
    auto built = device_sources(options_.monitor, false, {});
    if (!built) {
      return error_output(built.error());
    }
    std::vector<std::string> errors;
    auto samples = read_all(built->sources.devices, errors);
    // A second read gives what only a difference or a step tells: RAPL's power is an energy
    // difference (a moment apart, so only with RAPL zones), simulated devices report their
    // clock events once their model has stepped.
    const bool rapl = std::any_of(samples.begin(), samples.end(),
                                  [](const power::DeviceSample& s) { return s.source == "rapl"; });
    if (rapl) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    errors.clear();
    samples = read_all(built->sources.devices, errors);
    auto previous = power::read_state_file(options_.state_file);

    nlohmann::ordered_json devices = nlohmann::ordered_json::array();
    std::vector<std::vector<std::string>> rows = {{"DEVICE", "MODEL", "STATE", "TEMP", "POWER",
                                                   "LIMIT", "DEFAULT", "MIN", "MAX", "THROTTLE"}};
    for (const power::DeviceSample& s : samples) {
      const auto state = power::thermal_state(s);
      const std::string state_name = s.lost        ? "lost"
                                     : s.suspended ? "suspended"
                                     : state       ? power::to_string(*state)
                                                   : "-";
      nlohmann::ordered_json j = {{"device", s.device},
                                  {"uuid", s.uuid},
                                  {"model", s.model},
                                  {"source", s.source},
                                  {"state", state_name}};
      if (s.temperature_gpu_celsius) {
        j["temperature_celsius"] = *s.temperature_gpu_celsius;
      }
      if (s.power_watts) {
        j["power_watts"] = *s.power_watts;
      }
      nlohmann::ordered_json limits = nlohmann::ordered_json::object();
      const auto put = [&limits](const char* key, const std::optional<double>& v) {
        if (v) {
          limits[key] = *v;
        }
      };
      put("enforced", s.power_limit_enforced_watts);
      put("default", s.power_limit_default_watts);
      put("min", s.power_limit_min_watts);
      put("max", s.power_limit_max_watts);
      j["power_limit_watts"] = limits;
      nlohmann::ordered_json reasons = nlohmann::ordered_json::array();
      for (const auto& [bit, name] : power::clock_event_names()) {
        if ((s.clock_event_reasons.value_or(0) & bit) != 0) {
          reasons.push_back(name);
        }
      }
      j["throttle_reasons"] = reasons;
      devices.push_back(std::move(j));
      rows.push_back(
          {s.device, s.model, state_name,
           s.temperature_gpu_celsius ? fmt::format("{:.0f} C", *s.temperature_gpu_celsius) : "-",
           watts(s.power_watts), watts(s.power_limit_enforced_watts),
           watts(s.power_limit_default_watts), watts(s.power_limit_min_watts),
           watts(s.power_limit_max_watts), throttle_names(s)});
    }
    Output out;
    for (const std::string& e : errors) {
      out.err += "acco power status: " + e + "\n";
    }
    nlohmann::ordered_json left = nlohmann::ordered_json::array();
    std::string left_text;
    if (previous) {
      for (const power::SavedDevice& d : *previous) {
        left.push_back({{"uuid", d.uuid},
                        {"original_limit_watts", d.original_limit_watts},
                        {"set_limit_watts", d.set_limit_watts},
                        {"clocks_locked", d.clocks_locked}});
        left_text += fmt::format(
            "  {} was set to {:.0f} W by a governor that did not restore it (original {:.0f} W); "
            "the next acco power run --allow-control restores it\n",
            d.uuid, d.set_limit_watts, d.original_limit_watts);
      }
    } else {
      // What a previous governor left is unknown: the report is printed, and the run fails as
      // for any malformed input (an empty `unrestored` would say nothing is left).
      out.err += "acco power status: " + previous.error().message + "\n";
      out.exit_code = exit_code_for(previous.error());
    }
    if (inv.format == Format::kJson) {
      nlohmann::ordered_json doc = {{"schema", "acco.power-status/1"},
                                    {"nvml", built->nvml_note},
                                    {"devices", devices},
                                    {"unrestored", left}};
      if (!previous) {
        doc["unrestored"] = nullptr;
        doc["state_file_error"] = previous.error().message;
      }
      out.out = doc.dump(2) + "\n";
      return out;
    }
    out.out = fmt::format("acco power status: {} device(s) (NVML {})\n", samples.size(),
                          built->nvml_note);
    if (!samples.empty()) {
      out.out += report::render_table(report::plain_table(rows, report::TableStyle::layout(2, 1)));
    }
    out.out += left_text;
    return out;
  }

 private:
  StatusOptions options_;
};

// --- run ------------------------------------------------------------------------------------

struct RunOptions {
  MonitorOptions monitor;
  GovernorSettings governor;
  double duration_seconds = 0;  // 0: until a signal
  bool fast = false;
};

class RunCommand final : public Command {
 public:
  explicit RunCommand(RunOptions options) : options_(std::move(options)) {}

  Output run(const Invocation& inv) const override {
    const SignalScope signals;
    std::int64_t simulated_now = now_unix_nanos();
    const std::int64_t start_ns = simulated_now;
    auto built =
        device_sources(options_.monitor, options_.fast, [&simulated_now] { return simulated_now; });
    if (!built) {
      return error_output(built.error());
    }
    std::vector<power::SensorSource*> raw;
    for (const auto& s : built->sources.devices) {
      raw.push_back(s.get());
    }
    std::vector<power::Action> actions;
    const bool json = inv.format == Format::kJson;
    const Progress& progress = inv.progress;
    auto clock_ns = [&] { return options_.fast ? simulated_now : now_unix_nanos(); };
    auto governing = make_governing(
        options_.governor, raw, options_.monitor.sources.nvml_library, options_.monitor.sysroot,
        [&](const power::Action& a) {
          actions.push_back(a);
          if (progress && !json) {
            const monitor::Event e = monitor::governor_event(a, clock_ns());
            progress(fmt::format("{} {} {}: {}", e.level, e.device.empty() ? "-" : e.device,
                                 e.event, e.message));
          }
        });
    if (!governing) {
      return error_output(governing.error());
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
    const auto seconds_since_start = [&] {
      return static_cast<double>(clock_ns() - start_ns) / 1e9;
    };
    std::vector<std::string> errors;
    auto samples = read_all(built->sources.devices, errors);
    governing->actuator->learn(samples);
    auto started = governing->run->start(samples, 0);
    if (!started) {
      return error_output(started.error());
    }
    const auto interval_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(options_.monitor.interval).count();
    std::string why = "the end of --duration";
    std::uint64_t rounds = 1;
    for (;;) {
      if (options_.fast) {
        simulated_now += interval_ns;
      } else if (const int sig = signals.wait(options_.monitor.interval); sig != 0) {
        why = sig == SIGTERM ? "SIGTERM" : "SIGINT";
        break;
      }
      if (options_.duration_seconds > 0 && seconds_since_start() >= options_.duration_seconds) {
        break;
      }
      samples = read_all(built->sources.devices, errors);
      (void)governing->tick(samples, seconds_since_start());
      ++rounds;
    }
    samples = read_all(built->sources.devices, errors);  // what the devices have now
    governing->actuator->learn(samples);
    (void)governing->run->finish(samples, seconds_since_start());
    const power::GovernorStatus status = governing->run->status();

    Output out;
    for (const std::string& e : errors) {
      out.err += "acco power run: " + e + "\n";
    }
    std::size_t applied = 0;
    for (const auto& a : actions) {
      applied += a.applied ? 1 : 0;
    }
    if (json) {
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const auto& a : actions) {
        list.push_back(monitor::to_json(a));
      }
      nlohmann::ordered_json doc = {{"schema", "acco.power-run/1"},
                                    {"mode", status.mode},
                                    {"allow_control", status.allow_control},
                                    {"simulated_time", options_.fast},
                                    {"duration_seconds", seconds_since_start()},
                                    {"rounds", rounds},
                                    {"stopped_by", why},
                                    {"status", monitor::to_json(status)},
                                    {"actions", list}};
      out.out = doc.dump(2) + "\n";
      return out;
    }
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
    out.out = fmt::format(
        "acco power run: {} round(s) over {} (stopped by {}); {} action(s), {} applied{}\n", rounds,
        units::format_seconds(seconds_since_start()), why, actions.size(), applied,
        status.allow_control ? "" : " (dry-run: give --allow-control to apply)");
    out.out += report::render_table(report::plain_table(rows, report::TableStyle::layout(2, 1)));
    return out;
  }

 private:
  RunOptions options_;
};

// --- flags ----------------------------------------------------------------------------------

struct PowerFlags {
  CLI::App* status = nullptr;
  CLI::App* run = nullptr;
  MonitorFlags status_monitor;
  std::string status_state_file = kDefaultStateFile;
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
  RunOptions o;
  ACCO_ASSIGN_OR_RETURN(o.monitor, monitor_options(flags.run_monitor, settings));
  ACCO_ASSIGN_OR_RETURN(o.governor, governor_settings(flags.governor));
  if (!flags.duration.empty()) {
    const auto d = units::parse_duration(flags.duration);
    if (!d || *d <= 0) {
      return bad_value("--duration", flags.duration, "a positive duration (e.g. 10m)");
    }
    o.duration_seconds = *d;
  }
  o.fast = flags.fast;
  if (o.fast && (o.monitor.sources.simulate == 0 || o.duration_seconds == 0)) {
    return usage(
        "--fast runs simulated devices on simulated time: give --simulate N and "
        "--duration D");
  }
  constexpr double kMaxFastRounds = 1e6;
  if (o.fast && o.duration_seconds / std::chrono::duration<double>(o.monitor.interval).count() >
                    kMaxFastRounds) {
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
