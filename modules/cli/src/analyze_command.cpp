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
#include "acco/report/document.hpp"

#include "command_spec.hpp"
#include "commands.hpp"

namespace acco::cli {
namespace {

struct AnalyzeCommandOptions {
  std::string input;
  analyze::AnalyzeSetup setup;
};

class AnalyzeCommand final : public Command {
 public:
  explicit AnalyzeCommand(AnalyzeCommandOptions options) : options_(std::move(options)) {}

  Result<Output> run(const Invocation& inv) const override {
    ACCO_ASSIGN_OR_RETURN(const auto recording,
                          analyze::read_recording(options_.input, options_.setup.recording));
    if (recording.trace) {
      if (!options_.setup.recording_flags.empty()) {  // a trace has no devices by index, no clock
        return tl::unexpected(
            usage(fmt::format("{}: {} apply to recordings; this file is a Chrome trace",
                              options_.input, fmt::join(options_.setup.recording_flags, ", ")))
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
    const auto analysis =
        analyze::analyze_recording(recording, options_.setup.analyze, options_.input);
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
  analyze::AnalyzeRequest request;
};

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
        sub.add_option("--since", flags.request.since,
                       "start of the time range (RFC 3339 or Unix s)")
            ->type_name("TIME");
        sub.add_option("--until", flags.request.until, "end of the time range")->type_name("TIME");
        sub.add_option("--device", flags.request.device, "only this device (its index)")
            ->type_name("ID");
        sub.add_option("--window", flags.request.window, "verdict window (default 30s)")
            ->type_name("DURATION");
        sub.add_option("--interval", flags.request.interval,
                       "sampling interval of an nvidia-smi dmon log that does not show its "
                       "command line (-d)")
            ->type_name("DURATION");
        add_json_flag(sub, shared, "print JSON (schema acco.analyze/1) instead of text");
      },
      [](const AnalyzeFlags& flags, const core::Settings&) -> Result<std::unique_ptr<Command>> {
        ACCO_ASSIGN_OR_RETURN(auto setup, as_usage(analyze::analyze_setup(flags.request)));
        return std::make_unique<AnalyzeCommand>(
            AnalyzeCommandOptions{flags.input, std::move(setup)});
      });
}

}  // namespace acco::cli
