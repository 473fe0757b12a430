// Reading a recording back for `acco analyze`, its format detected by content: acco's own JSON
// Lines (acco record), nvidia-smi --query-gpu CSV logs, nvidia-smi dmon and -q output, and
// Prometheus text scrapes of dcgm-exporter or acco serve saved to a file.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "acco/analyze/snapshot.hpp"
#include "acco/core/result.hpp"

namespace acco::analyze {

// How a recording's times are to be read: UTC (acco's own, Prometheus), local time of an
// unknown zone (nvidia-smi prints no zone), or no times at all (rounds numbered 1 s apart).
enum class TimeBase {
  kUtc,
  kLocalUnknownZone,
  kNone,
};

struct Recording {
  // "acco-jsonl", "nvidia-smi-csv", "nvidia-smi-dmon", "nvidia-smi-q", "prometheus",
  // "chrome-trace"
  std::string format;
  std::vector<Snapshot> rounds;
  std::vector<std::string> notes;  // what was skipped, once each
  TimeBase time_base = TimeBase::kUtc;
  // MIG instances by physical device ("1 (1g.10gb): ..."), from dcgm-exporter's GPU_I_* labels.
  std::map<std::string, std::vector<std::string>> instances;
  // An acco Chrome trace (acco schedule --trace) is one JSON document, kept whole: it has no
  // rounds, the trace analysis reads it.
  std::optional<nlohmann::json> trace;
};

struct RecordingOptions {
  // The sampling interval of an nvidia-smi dmon log that does not echo its command line.
  std::optional<double> interval_seconds;
};

// Reads `path`: kNotFound when it does not exist, kInvalidArgument naming the file and line
// ("run.jsonl:17: devices[0].power_watts: expected a number") for a malformed line other than a
// cut-off last one (kill -9 mid-write), which is skipped with a note.
[[nodiscard]] Result<Recording> read_recording(const std::string& path,
                                               const RecordingOptions& options = {});
// The same from text already read; `name` stands for the file in messages.
[[nodiscard]] Result<Recording> parse_recording(std::string_view text, const std::string& name,
                                                const RecordingOptions& options = {});

// "2026-12-01T16:25:24Z", "2026-12-01T16:25:24.123Z", "2026-12-01T16:25:24+01:00" or Unix
// seconds ("1764606324.5", read as decimal digits so that the nanoseconds are exact) -> Unix
// nanoseconds; kInvalidArgument otherwise.
[[nodiscard]] Result<std::int64_t> parse_time(std::string_view text);

}  // namespace acco::analyze
