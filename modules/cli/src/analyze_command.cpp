// `acco analyze FILE`: bottleneck verdicts per device and window from a recording, each citing
// the numbers it used, and the events worth a look; text or --json (acco.analyze/1).
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "acco/analyze/analyze.hpp"
#include "acco/analyze/recording.hpp"
#include "acco/analyze/trace_analysis.hpp"
#include "acco/core/json.hpp"
#include "acco/core/units.hpp"
#include "acco/report/document.hpp"

#include "command_spec.hpp"
#include "commands.hpp"

namespace acco::cli {
namespace {

struct AnalyzeCommandOptions {
  std::string input;
  analyze::AnalyzeOptions analyze;
  analyze::RecordingOptions recording;
  std::vector<std::string> recording_flags;  // given flags that only a recording has a use for
};

class AnalyzeCommand final : public Command {
 public:
  explicit AnalyzeCommand(AnalyzeCommandOptions options) : options_(std::move(options)) {}

  Result<Output> run(const Invocation& inv) const override {
    ACCO_ASSIGN_OR_RETURN(const auto recording,
                          analyze::read_recording(options_.input, options_.recording));
    if (recording.trace) {
      if (!options_.recording_flags.empty()) {  // a trace has no devices by index, no clock
        return tl::unexpected(
            usage(fmt::format("{}: {} apply to recordings; this file is a Chrome trace",
                              options_.input, fmt::join(options_.recording_flags, ", ")))
                .value());
      }
      ACCO_ASSIGN_OR_RETURN(const auto trace,
                            analyze::analyze_trace(*recording.trace, options_.input));
      Output out;
      out.out = inv.format == Format::kJson
                    ? core::dump_replacing_invalid_utf8(analyze::to_json(trace), 2) + "\n"
                    : report::render_text(analyze::trace_report(trace));
      return out;
    }
    const auto analysis = analyze::analyze_recording(recording, options_.analyze, options_.input);
    Output out;
    out.out = inv.format == Format::kJson
                  ? core::dump_replacing_invalid_utf8(analyze::to_json(analysis), 2) + "\n"
                  : report::render_text(analyze::analyze_report(analysis));
    return out;
  }

 private:
  AnalyzeCommandOptions options_;
};

struct AnalyzeFlags {
  std::string input;
  std::string since;
  std::string until;
  std::string device;
  std::string window;    // empty: 30s
  std::string interval;  // empty: from the file
};

Result<AnalyzeCommandOptions> analyze_options(const AnalyzeFlags& flags) {
  AnalyzeCommandOptions o;
  o.input = flags.input;
  if (!flags.since.empty()) {
    const auto t = analyze::parse_time(flags.since);
    if (!t) {
      return bad_value("--since", flags.since, "a time (RFC 3339 such as 2026-12-01T16:25:24Z)");
    }
    o.analyze.since_unix_nanos = *t;
  }
  if (!flags.until.empty()) {
    const auto t = analyze::parse_time(flags.until);
    if (!t) {
      return bad_value("--until", flags.until, "a time (RFC 3339 such as 2026-12-01T16:25:24Z)");
    }
    o.analyze.until_unix_nanos = *t;
  }
  if (o.analyze.since_unix_nanos && o.analyze.until_unix_nanos &&
      *o.analyze.until_unix_nanos < *o.analyze.since_unix_nanos) {
    return usage("--until is before --since");
  }
  const std::string window_text = flags.window.empty() ? "30s" : flags.window;
  const auto window = units::parse_duration(window_text);
  if (!window || *window < 1 || *window > 86400) {
    return bad_value("--window", flags.window, "a duration from 1s to 1d (e.g. 30s)");
  }
  o.analyze.window_seconds = *window;
  if (!flags.interval.empty()) {
    const auto interval = units::parse_duration(flags.interval);
    if (!interval || *interval <= 0 || *interval > 86400) {
      return bad_value("--interval", flags.interval, "a duration up to 1d (e.g. 1s, 100ms)");
    }
    o.recording.interval_seconds = *interval;
  }
  o.analyze.device = flags.device;
  for (const auto& [flag, value] : {std::pair{"--since", &flags.since},
                                    {"--until", &flags.until},
                                    {"--device", &flags.device},
                                    {"--window", &flags.window},
                                    {"--interval", &flags.interval}}) {
    if (!value->empty()) {
      o.recording_flags.emplace_back(flag);
    }
  }
  return o;
}

}  // namespace

CommandSpec analyze_command() {
  return command_with_flags<AnalyzeFlags>(
      "analyze", "say why a job was slow: bottleneck verdicts from a recording",
      [](CLI::App& sub, SharedFlags& shared, AnalyzeFlags& flags) {
        sub.add_option("input", flags.input,
                       "the recording: acco record's JSON Lines, an nvidia-smi --query-gpu CSV "
                       "log, nvidia-smi dmon or -q output, Prometheus scrapes (dcgm-exporter, "
                       "acco serve) saved to a file, or an acco Chrome trace (acco schedule "
                       "--trace) for its idle gaps")
            ->type_name("FILE")
            ->required();
        sub.add_option("--since", flags.since, "start of the time range (RFC 3339 or Unix s)")
            ->type_name("TIME");
        sub.add_option("--until", flags.until, "end of the time range")->type_name("TIME");
        sub.add_option("--device", flags.device, "only this device (its index)")->type_name("ID");
        sub.add_option("--window", flags.window, "verdict window (default 30s)")
            ->type_name("DURATION");
        sub.add_option("--interval", flags.interval,
                       "sampling interval of an nvidia-smi dmon log that does not show its "
                       "command line (-d)")
            ->type_name("DURATION");
        add_json_flag(sub, shared, "print JSON (schema acco.analyze/1) instead of text");
      },
      [](const AnalyzeFlags& flags, const core::Settings&) -> Result<std::unique_ptr<Command>> {
        return command_from<AnalyzeCommand>(analyze_options(flags));
      });
}

}  // namespace acco::cli
