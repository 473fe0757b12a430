// analyze_setup: `acco analyze`'s flags checked into the analysis's and the reader's options.
#include <utility>

#include "acco/analyze/analyze.hpp"
#include "acco/core/option_check.hpp"
#include "acco/core/units.hpp"

namespace acco::analyze {
namespace {

constexpr const char* kTime = "a time (RFC 3339 such as 2026-12-01T16:25:24Z)";

Result<std::optional<std::int64_t>> time_option(const char* flag, const std::string& text) {
  if (text.empty()) {
    return std::optional<std::int64_t>();
  }
  const auto t = parse_time(text);
  if (!t) {
    return core::bad_option(flag, text, kTime);
  }
  return std::optional(*t);
}

}  // namespace

Result<AnalyzeSetup> analyze_setup(const AnalyzeRequest& r) {
  AnalyzeSetup s;
  ACCO_ASSIGN_OR_RETURN(s.analyze.since_unix_nanos, time_option("--since", r.since));
  ACCO_ASSIGN_OR_RETURN(s.analyze.until_unix_nanos, time_option("--until", r.until));
  if (s.analyze.since_unix_nanos && s.analyze.until_unix_nanos &&
      *s.analyze.until_unix_nanos < *s.analyze.since_unix_nanos) {
    return fail(Errc::kInvalidArgument, "--until is before --since");
  }
  const auto window = units::parse_duration(r.window.empty() ? "30s" : r.window);
  if (!window || *window < 1 || *window > 86400) {
    return core::bad_option("--window", r.window, "a duration from 1s to 1d (e.g. 30s)");
  }
  s.analyze.window_seconds = *window;
  if (!r.interval.empty()) {
    const auto interval = units::parse_duration(r.interval);
    if (!interval || *interval <= 0 || *interval > 86400) {
      return core::bad_option("--interval", r.interval, "a duration up to 1d (e.g. 1s, 100ms)");
    }
    s.recording.interval_seconds = *interval;
  }
  s.analyze.device = r.device;
  for (const auto& [flag, value] : {std::pair{"--since", &r.since},
                                    {"--until", &r.until},
                                    {"--device", &r.device},
                                    {"--window", &r.window},
                                    {"--interval", &r.interval}}) {
    if (!value->empty()) {
      s.recording_flags.emplace_back(flag);
    }
  }
  return s;
}

}  // namespace acco::analyze
