// The latest round as the dashboard reads it (/api/v1/summary): what the daemon looked for, each
// device's scales (its power limit, its thermal thresholds, its memory, its PCIe link and that
// link's peak) and the host's rates. The page draws; what each number means is decided here,
// where it is tested.
#pragma once

#include <string>

#include "acco/analyze/snapshot.hpp"
#include "acco/monitor/sources.hpp"

namespace acco::monitor {

// What a daemon samples, for a page that has no device to show to say why.
struct SourcesInfo {
  std::string nvml_mode = "auto";  // SourceOptions::nvml_mode
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string nvml = "off";  // Sources::nvml_note: "on", "off" or "unavailable (<why>)"
  int simulated = 0;
  bool rapl = false;
  bool host = true;
  std::string sysroot = "/";
  bool operator==(const SourcesInfo&) const = default;
};

[[nodiscard]] SourcesInfo sources_info(const SourceOptions& options, const std::string& sysroot,
                                       const std::string& nvml_note);

// The summary document, one JSON object and a newline: "time", "time_unix_nanos", "sources"
// (null when `sources` is null), "devices" (per device: identity, "state", and the scales it
// reported: "power_limit_watts" (enforced), "power_limit_max_watts", "temperature_limits" (name,
// celsius; lowest first), "memory_total_bytes", "pcie_link" ("PCIe Gen5 x16"),
// "pcie_peak_bytes_per_second" per direction, "pcie_peak" ("63.0 GB/s"); absent when not
// reported) and "host" (host_rates() from `previous` to `now`, or null without a host sample).
// `previous` may be null. Pure; thread-safe.
[[nodiscard]] std::string summary_json(const analyze::Snapshot& now,
                                       const analyze::Snapshot* previous,
                                       const SourcesInfo* sources);

}  // namespace acco::monitor
