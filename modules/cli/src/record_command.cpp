// `acco record`: monitor::Recorder from its flags, the daemon's samples written to a file instead
// of served (JSON Lines, the format `acco analyze` reads), for --duration or until SIGTERM/SIGINT.
// With --fast and only simulated devices, rounds run back to back on simulated time.
#include <memory>
#include <string>

#include "acco/core/process.hpp"
#include "acco/core/stop.hpp"
#include "acco/monitor/recorder.hpp"
#include "acco/report/document.hpp"

#include "command_spec.hpp"
#include "commands.hpp"
#include "monitor_flags.hpp"

namespace acco::cli {
namespace {

class RecordCommand final : public Command {
 public:
  explicit RecordCommand(monitor::RecordOptions options) : options_(std::move(options)) {}

  Result<Output> run(const Invocation& inv) const override {
    const core::SignalScope signals;  // before the sampler's thread, which inherits its mask
    ACCO_ASSIGN_OR_RETURN(auto recorder, monitor::Recorder::create(options_));
    if (inv.progress) {
      inv.progress(monitor::started_line(options_, recorder.nvml_note()));
    }
    core::StopFlag stop;
    const core::StopOnSignal on_signal(signals, stop);
    ACCO_ASSIGN_OR_RETURN(const auto summary, recorder.run(stop));
    return Output{report::render_text(monitor::record_report(options_, summary)), "", kExitOk};
  }

 private:
  monitor::RecordOptions options_;
};

struct RecordFlags {
  std::string out;
  std::string duration;
  MonitorFlags monitor;
  bool fast = false;
};

Result<monitor::RecordOptions> record_options(const RecordFlags& flags,
                                              const core::Settings& settings) {
  monitor::RecordOptions o;
  if (flags.out.empty()) {
    return usage("--out: the file to record into is required");
  }
  o.out = flags.out;
  ACCO_ASSIGN_OR_RETURN(o.duration, duration_flag(flags.duration, "2m"));
  ACCO_ASSIGN_OR_RETURN(auto monitor, monitor_options(flags.monitor, settings));
  o.interval = monitor.interval;
  o.sources = monitor.sources;
  o.sysroot = monitor.sysroot;
  o.simulated_time = flags.fast;
  if (o.simulated_time && o.sources.simulate == 0) {
    return usage("--fast runs simulated devices on simulated time: give --simulate N");
  }
  // A round is a line of about 2 KiB per device: a million rounds is already gigabytes.
  constexpr double kMaxFastRounds = 1e6;
  if (o.simulated_time && o.duration / o.interval > kMaxFastRounds) {
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
