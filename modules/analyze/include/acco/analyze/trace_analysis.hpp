// Idle gaps in acco's Chrome traces (acco schedule --trace, acco.trace/1) attributed to
// transfers: for each device, how much of the run it computed, how long it sat idle, and how
// much of that idle time a transfer into it was in flight, which says whether the gaps are
// data movement or dependencies and scheduling.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "acco/core/result.hpp"
#include "acco/report/document.hpp"

namespace acco::analyze {

struct TraceDevice {
  std::string name;  // the trace's thread name: "dev1 cuda:0 (gpu)"
  int tasks = 0;
  double busy_seconds = 0;
  double idle_seconds = 0;
  double idle_with_transfer_seconds = 0;  // idle while a transfer into this device ran
  double transfer_seconds = 0;            // union of the transfers into it
  double transfer_bytes = 0;
  std::string verdict;  // "transfer-bound gaps", "dependency gaps", "busy"
  std::string why;
};

struct TraceReport {
  std::string input;
  std::string policy;
  double elapsed_seconds = 0;
  std::vector<TraceDevice> devices;
};

// kInvalidArgument naming `name` when `trace` is not an acco.trace/1 document.
[[nodiscard]] Result<TraceReport> analyze_trace(const nlohmann::json& trace,
                                                const std::string& name);
// The text: the trace's policy and length, then each device's busy and idle time and verdict.
[[nodiscard]] report::Document trace_report(const TraceReport& report);
[[nodiscard]] nlohmann::ordered_json to_json(const TraceReport& report);

}  // namespace acco::analyze
