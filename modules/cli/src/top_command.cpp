// `acco top`: a live terminal view of the devices and the host. Samples the sources itself
// (NVML, simulated devices, the host) or reads a running `acco serve` with --from, and redraws
// a plain-ANSI frame every interval, so it works over ssh and inside tmux without curses. A
// stdout that is not a terminal, or --once, gets one frame without escape codes. The loop is
// monitor::run_top on monitor::StdioTerminal; this file holds the flags.
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "acco/core/process.hpp"
#include "acco/core/units.hpp"
#include "acco/monitor/client.hpp"
#include "acco/monitor/sources.hpp"
#include "acco/monitor/stdio_terminal.hpp"

#include "command_spec.hpp"
#include "commands.hpp"
#include "monitor_flags.hpp"

namespace acco::cli {
namespace {

struct TopCommandOptions {
  std::optional<monitor::ServerUrl> from;
  std::chrono::milliseconds interval{1000};
  int iterations = 0;  // 0: until a signal (one frame when stdout is not a terminal)
  bool once = false;
  monitor::SourceOptions sources;
  std::string sysroot = "/";
};

class TopCommand final : public Command {
 public:
  explicit TopCommand(TopCommandOptions options) : options_(std::move(options)) {}

  Result<Output> run(const Invocation& /*invocation*/) const override {
    const core::SignalScope signals;
    ACCO_ASSIGN_OR_RETURN(const monitor::TopFeed feed,
                          options_.from
                              ? Result<monitor::TopFeed>(monitor::TopFeed::from_daemon(
                                    *options_.from, options_.interval))
                              : monitor::TopFeed::sample_here(options_.sysroot, options_.sources,
                                                              options_.interval, core::hostname()));
    Output out;
    ACCO_ASSIGN_OR_RETURN(out.out, monitor::top_on_stdio(signals, feed, options_.interval,
                                                         options_.iterations, options_.once));
    return out;
  }

 private:
  TopCommandOptions options_;
};

struct TopFlags {
  std::string from;
  MonitorFlags monitor;
  std::string iterations;
  bool once = false;
};

Result<TopCommandOptions> top_options(const TopFlags& flags, const core::Settings& settings) {
  TopCommandOptions o;
  if (!flags.from.empty()) {
    auto url = monitor::parse_server_url(flags.from);
    if (!url) {
      return bad_value("--from", flags.from, "HOST:PORT or http://HOST:PORT (e.g. 127.0.0.1:9477)");
    }
    o.from = *url;
    if (flags.monitor.simulate != 0) {
      return usage("--simulate: not used with --from (the daemon samples its own devices)");
    }
  }
  ACCO_ASSIGN_OR_RETURN(auto monitor, monitor_options(flags.monitor, settings));
  o.interval = monitor.interval;
  o.sources = monitor.sources;
  o.sysroot = monitor.sysroot;
  if (!flags.iterations.empty()) {
    const auto n = units::parse_int(flags.iterations);
    if (!n || *n < 1 || *n > 1'000'000'000) {
      return bad_value("--iterations", flags.iterations, "a frame count of 1 or more");
    }
    o.iterations = static_cast<int>(*n);
  }
  o.once = flags.once;
  return o;
}

}  // namespace

CommandSpec top_command() {
  return command_with_flags<TopFlags>(
      "top", "live terminal view of devices and host (sampled here or read from acco serve)",
      [](CLI::App& sub, SharedFlags& shared, TopFlags& flags) {
        sub.add_option(
               "--from", flags.from,
               "read a running acco serve instead of sampling here: HOST:PORT or http://HOST:PORT")
            ->type_name("ADDRESS");
        add_monitor_flags(sub, shared, flags.monitor, "refresh period (default 1s)");
        sub.add_option("--iterations", flags.iterations, "stop after N frames")->type_name("N");
        sub.add_flag("--once", flags.once, "print one frame without escape codes and exit");
      },
      [](const TopFlags& flags,
         const core::Settings& settings) -> Result<std::unique_ptr<Command>> {
        return command_from<TopCommand>(top_options(flags, settings));
      });
}

}  // namespace acco::cli
