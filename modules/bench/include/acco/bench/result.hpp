// What a benchmark run produces, as plain values: one BenchResult per case and device, and the
// BenchRun that holds them with the machine they ran on. Their JSON form is `acco bench --json`
// (schema "acco.bench/1", docs/schemas/bench.schema.json); the history and the reports read the
// same values.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "acco/bench/stats.hpp"
#include "acco/core/result.hpp"

namespace acco::bench {

inline constexpr const char* kBenchSchema = "acco.bench/1";

// Values of BenchResult::status.
inline constexpr const char* kStatusOk = "ok";
inline constexpr const char* kStatusWaived = "waived";  // does not apply here; `reason` says why
inline constexpr const char* kStatusError = "error";    // applied but failed; `reason` says how
// Values of BenchResult::timer.
inline constexpr const char* kTimerDeviceEvents = "device events";  // asynchronous copies
inline constexpr const char* kTimerHostClock = "host clock";        // the host takes part

// One size of a sweep.
struct SweepPoint {
  std::uint64_t bytes = 0;
  double median_bytes_per_second = 0;
  bool operator==(const SweepPoint&) const = default;
};

// One case on one device. Rates are bytes per second in one direction, bytes copied (not read
// plus written). Measured fields are 0 unless status is "ok".
// A case against its baseline timed in alternating rounds on the same buffers (ours then theirs,
// theirs then ours, ...), so load that drifts during the run falls on both sides: the engine
// against the plain copy. `ratio` is the median over rounds of our rate / theirs; the band is
// that median -/+ three standard errors of it (1.2533 x the ratios' sample standard deviation /
// sqrt(rounds)); the verdict is "faster" or "slower" only when the ratio differs from 1 by more
// than max(three standard errors, 5 %), else "same within noise".
struct PairedRatio {
  int rounds = 0;
  double ratio = 0;
  double low = 0;
  double high = 0;
  std::string verdict;  // "faster", "slower", "same within noise"
  bool operator==(const PairedRatio&) const = default;
};

struct BenchResult {
  std::string case_key;  // stable key, JSON "case": "h2d_pinned_plain"
  std::string device;    // PCI address "0000:18:00.0", or the device name when it has none
  std::string status = kStatusOk;  // kStatusOk, kStatusWaived, kStatusError
  std::string reason;              // why waived or failed; empty when ok
  std::uint64_t bytes = 0;         // bytes per copy
  double median_bytes_per_second = 0;
  double min_bytes_per_second = 0;
  double max_bytes_per_second = 0;
  double cov = 0;                    // coefficient of variation of the rate samples
  double peak_bytes_per_second = 0;  // the crossed link's peak; 0 when unknown
  // What the peak is, or why it is unknown, where a case says ("nvme1n1 on nvme1 at
  // 0000:c1:00.0, Gen4 x4, 7.88 GB/s"); empty otherwise. Not kept in the history.
  std::string peak_source;
  double efficiency = 0;            // median / peak; 0 when unknown
  std::string verdict = "unknown";  // "ok", "low", "very low", "unknown", "emulated"
  std::string strategy;             // what the engine did: "direct", "pipelined 4 MiB x 3", ...
  std::string timer;                // kTimerDeviceEvents or kTimerHostClock; empty if not run
  std::optional<double> latency_seconds;  // median time per copy, for latency cases
  // The rest of a latency case's times per copy, seconds: the fastest, the slowest and the 99th
  // percentile (from kMinSamplesForP99 copies). Not kept in the history.
  std::optional<double> latency_min_seconds;
  std::optional<double> latency_max_seconds;
  std::optional<double> latency_p99_seconds;
  std::vector<SweepPoint> sweep;  // ascending sizes, for sweep cases
  // Engine cases: the engine against the plain copy in alternating rounds. Not kept in the
  // history.
  std::optional<PairedRatio> against_plain = {};
  bool operator==(const BenchResult&) const = default;
};

// One `acco bench` run.
struct BenchRun {
  std::string schema = kBenchSchema;
  std::string created;                                // UTC, "2025-03-01T12:00:00Z" (utc_timestamp)
  std::string host;                                   // host name
  std::string fingerprint;                            // machine_fingerprint(): the history's key
  nlohmann::json machine = nlohmann::json::object();  // machine_summary()
  std::vector<BenchResult> results;
  bool operator==(const BenchRun&) const = default;
};

// Builders for the three outcomes of a case.
[[nodiscard]] BenchResult waived(std::string case_key, std::string device, std::string reason);
[[nodiscard]] BenchResult failed(std::string case_key, std::string device, const Error& error);
// Copies median, min, max and cov from a summary of rate samples (bytes per second).
void set_rates(BenchResult& result, const Summary& bytes_per_second);

// The smallest size at which the sweep reaches half of `reference_bytes_per_second` (the link's
// peak, or the best rate measured when the peak is unknown), interpolated linearly in rate
// between neighbouring points on a log2 size axis. The first size when it is already reached
// there; nullopt when never reached, for an empty sweep or a reference <= 0. Points in any order.
[[nodiscard]] std::optional<std::uint64_t> half_peak_bytes(std::span<const SweepPoint> sweep,
                                                           double reference_bytes_per_second);

// JSON with keys in a stable order; unknown peak and efficiency (0) are written as null.
[[nodiscard]] nlohmann::ordered_json to_json(const SweepPoint& point);
[[nodiscard]] nlohmann::ordered_json to_json(const BenchResult& result);
[[nodiscard]] nlohmann::ordered_json to_json(const BenchRun& run);

// Inverse of to_json. Validates types, enumerations and ranges; unknown keys are ignored.
// kInvalidArgument naming the field: "results[2].cov: expected a non-negative number, got
// \"high\"".
[[nodiscard]] Result<BenchResult> result_from_json(const nlohmann::json& json);
[[nodiscard]] Result<BenchRun> run_from_json(const nlohmann::json& json);

}  // namespace acco::bench
