// `acco record`: the daemon's samples written to a file instead of served, one Snapshot per
// line (JSON Lines, the format `acco analyze` reads), for --duration or until SIGTERM/SIGINT.
// With --fast and only simulated devices, rounds run back to back on simulated time.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "acco/core/units.hpp"
#include "acco/monitor/json.hpp"
#include "acco/monitor/sampler.hpp"
#include "acco/monitor/sources.hpp"
#include "acco/power/simulated_device.hpp"

#include "command_spec.hpp"
#include "commands.hpp"
#include "monitor_flags.hpp"

namespace acco::cli {
namespace {

struct RecordOptions {
  std::string out;
  double duration_seconds = 0;
  std::chrono::milliseconds interval{1000};
  monitor::SourceOptions sources;
  bool fast = false;
  std::string sysroot;
};

std::int64_t now_unix_nanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class RecordCommand final : public Command {
 public:
  explicit RecordCommand(RecordOptions options) : options_(std::move(options)) {}

  Output run(const Invocation& inv) const override {
    sigset_t set;
    sigset_t old;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    Output out = record(inv, set);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return out;
  }

 private:
  Output record(const Invocation& inv, const sigset_t& signals) const {
    // Simulated time: the devices and the rounds share one clock that each round moves on.
    std::int64_t simulated_now = now_unix_nanos();
    const auto interval_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(options_.interval).count();
    std::vector<std::unique_ptr<power::SensorSource>> devices;
    std::unique_ptr<power::HostSource> host;
    std::unique_ptr<core::Fs> fs;
    std::string nvml_note = "off";
    if (options_.fast) {
      devices.push_back(std::make_unique<power::SimulatedSource>(
          options_.sources.simulate, options_.sources.scenario,
          [&simulated_now] { return simulated_now; }));
    } else {
      auto sources = monitor::make_sources(options_.sysroot, options_.sources);
      if (!sources) {
        return error_output(sources.error());
      }
      devices = std::move(sources->devices);
      host = std::move(sources->host);
      fs = std::move(sources->fs);
      nvml_note = sources->nvml_note;
    }
    // Written beside the target and renamed at the end, so FILE is either the whole recording
    // or absent; an interrupted run leaves FILE.partial with every round taken so far.
    const std::string partial = options_.out + ".partial";
    std::ofstream file(partial, std::ios::trunc);
    if (!file) {
      return error_output(
          Error{Errc::kCannotWrite, fmt::format("cannot write the recording {}", options_.out)});
    }
    monitor::SamplerOptions sampler_options;
    sampler_options.interval = options_.interval;
    sampler_options.history_rounds = 1;
    if (options_.fast) {
      sampler_options.clock = [&simulated_now] { return simulated_now; };
    }
    monitor::Sampler sampler(std::move(devices), std::move(host), sampler_options);
    std::size_t rounds = 0;
    bool write_failed = false;
    sampler.add_observer([&](const monitor::Published& p) {
      file << monitor::to_json(p.snapshot).dump() << '\n';
      file.flush();
      write_failed = write_failed || !file;
      ++rounds;
    });
    if (inv.progress) {
      inv.progress(fmt::format(
          "acco record: {} every {} for {} into {} (NVML {}{})",
          options_.fast ? "simulated devices on simulated time" : "sampling",
          units::format_seconds(std::chrono::duration<double>(options_.interval).count()),
          units::format_seconds(options_.duration_seconds), options_.out, nvml_note,
          options_.sources.simulate > 0 ? fmt::format(", {} simulated", options_.sources.simulate)
                                        : std::string()));
    }
    std::string why = "the end of --duration";
    if (options_.fast) {
      const auto total = static_cast<std::size_t>(
          std::llround(options_.duration_seconds * 1e9 / static_cast<double>(interval_ns)));
      for (std::size_t i = 0; i < total && !write_failed; ++i) {
        sampler.round();
        simulated_now += interval_ns;
      }
    } else {
      sampler.start();
      const auto begin = std::chrono::steady_clock::now();
      while (!write_failed) {
        const timespec tick{0, 100'000'000};
        const int sig = sigtimedwait(&signals, nullptr, &tick);
        if (sig == SIGTERM || sig == SIGINT) {
          why = sig == SIGTERM ? "SIGTERM" : "SIGINT";
          break;
        }
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count() >=
            options_.duration_seconds) {
          break;
        }
      }
      sampler.stop();
    }
    file.close();
    if (write_failed || !file) {
      return error_output(
          Error{Errc::kCannotWrite, fmt::format("writing the recording {} failed after {} round(s) "
                                                "(disk full?); what was written is in {}",
                                                options_.out, rounds, partial)});
    }
    std::error_code ec;
    std::filesystem::rename(partial, options_.out, ec);
    if (ec) {
      return error_output(Error{Errc::kCannotWrite, fmt::format("cannot write the recording {}: {}",
                                                                options_.out, ec.message())});
    }
    Output out;
    out.out = fmt::format("acco record: {} round(s) written to {} (stopped by {})\n", rounds,
                          options_.out, why);
    return out;
  }

  RecordOptions options_;
};

struct RecordFlags {
  std::string out;
  std::string duration;
  MonitorFlags monitor;
  bool fast = false;
};

Result<RecordOptions> record_options(const RecordFlags& flags, const core::Settings& settings) {
  RecordOptions o;
  if (flags.out.empty()) {
    return usage("--out: the file to record into is required");
  }
  o.out = flags.out;
  const auto duration = units::parse_duration(flags.duration);
  if (flags.duration.empty() || !duration || *duration <= 0) {
    return bad_value("--duration", flags.duration, "a positive duration (e.g. 2m)");
  }
  o.duration_seconds = *duration;
  ACCO_ASSIGN_OR_RETURN(auto monitor, monitor_options(flags.monitor, settings));
  o.interval = monitor.interval;
  o.sources = monitor.sources;
  o.sysroot = monitor.sysroot;
  o.fast = flags.fast;
  if (o.fast && o.sources.simulate == 0) {
    return usage("--fast runs simulated devices on simulated time: give --simulate N");
  }
  // A round is a line of about 2 KiB per device: a million rounds is already gigabytes.
  constexpr double kMaxFastRounds = 1e6;
  if (o.fast &&
      o.duration_seconds / std::chrono::duration<double>(o.interval).count() > kMaxFastRounds) {
    return usage("--fast: --duration / --interval is more than a million rounds");
  }
  return o;
}

}  // namespace

CommandSpec record_command() {
  return command_with_flags<RecordFlags>(
      "record", "sample devices and host into a file (JSON Lines) for acco analyze",
      [](CLI::App& sub, SharedFlags& shared, RecordFlags& flags) {
        sub.add_option("--out", flags.out, "the recording to write (JSON Lines)")
            ->type_name("FILE");
        sub.add_option("--duration", flags.duration, "how long to record")->type_name("DURATION");
        add_monitor_flags(sub, shared, flags.monitor, "sampling period (default 1s)");
        sub.add_flag("--fast", flags.fast,
                     "simulated devices only: take the rounds back to back on simulated time");
      },
      [](const RecordFlags& flags,
         const core::Settings& settings) -> Result<std::unique_ptr<Command>> {
        return command_from<RecordCommand>(record_options(flags, settings));
      });
}

}  // namespace acco::cli
