// Compares two runs case by case and flags changes beyond the noise. The rule: a case regressed
// when its median rate dropped by more than max(3 x the larger CoV of the two runs, 5%), and
// improved when it rose by as much. Latency-only cases compare median latency the same way.
#pragma once

#include <chrono>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "acco/bench/result.hpp"

namespace acco::bench {

// Changes smaller than this are never flagged, however quiet both runs were.
inline constexpr double kMinSignificantChange = 0.05;
// Changes must exceed this many coefficients of variation of the noisier run.
inline constexpr double kNoiseMultiple = 3.0;

enum class Change {
  kUnchanged,  // within the threshold
  kImproved,
  kRegressed,
  kNew,      // measured now (status ok), absent or not measured before
  kMissing,  // measured before, absent, waived or failed now
};
[[nodiscard]] const char* to_string(Change change);  // "unchanged", "improved", ...

// The metric of one case and device in one run of the history.
struct TrendPoint {
  std::string created;  // the run's time (RFC 3339)
  double value = 0;     // in the comparison's metric
  bool operator==(const TrendPoint&) const = default;
};

struct Comparison {
  std::string case_key;
  std::string device;
  Change change = Change::kUnchanged;
  // "median_bytes_per_second", or "latency_seconds" when a side has no rate.
  std::string metric;
  double previous = 0;         // the metric before; 0 for kNew
  double current = 0;          // the metric now; 0 for kMissing
  double relative_change = 0;  // (current - previous) / previous; 0 for kNew and kMissing
  double threshold = 0;        // max(kNoiseMultiple x the larger CoV, kMinSignificantChange)
  // The metric in the machine's earlier runs that measured it and in this one, oldest first
  // (record_run fills it, up to kTrendRuns points; the HTML report plots it; not in to_json).
  std::vector<TrendPoint> trend{};
  bool operator==(const Comparison&) const = default;
};

// The threshold for two coefficients of variation. Pure.
[[nodiscard]] double change_threshold(double previous_cov, double current_cov);

// Results are matched by (case, device). Only results with status "ok" count as measured; a pair
// measured in neither run is left out. Order: the current run's results, then the previous run's
// missing ones. A higher rate is better; a higher latency is worse. Pure.
[[nodiscard]] std::vector<Comparison> compare(const BenchRun& previous, const BenchRun& current);

// acco against a peer measured beside it in the same run (fio at the same point): the ratio of
// the medians and its noise band from the two sides' spreads, [ours.min / theirs.max,
// ours.max / theirs.min]. `within_noise` when the spreads [min, max] overlap: then the ratio is
// no win and no loss. Pure; rates of 0 give a ratio of 0.
struct PeerRatio {
  double ratio = 0;
  double low = 0;
  double high = 0;
  bool within_noise = false;
};
[[nodiscard]] PeerRatio peer_ratio(const BenchResult& ours, const BenchResult& theirs);

// Ours against theirs from the durations of the same work timed in alternating rounds (round i
// of each side together): PairedRatio's rule. Pure; an empty, uneven or zero-duration input gives
// a PairedRatio with 0 rounds.
[[nodiscard]] PairedRatio paired_ratio(std::span<const std::chrono::nanoseconds> ours,
                                       std::span<const std::chrono::nanoseconds> theirs);

// [{"case", "device", "change", "metric", "previous", "current", "relative_change",
//   "threshold"}]; "previous"/"current" are null where there is no value (new, missing).
[[nodiscard]] nlohmann::ordered_json to_json(const std::vector<Comparison>& comparisons);

}  // namespace acco::bench
