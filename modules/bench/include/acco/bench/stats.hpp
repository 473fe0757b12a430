// Statistics over the samples of one benchmark case: median, min, max, mean, coefficient of
// variation and, where there are enough samples, the 99th percentile. Pure functions on values,
// so the timing loops stay small and the arithmetic is tested on its own.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "acco/core/result.hpp"

namespace acco::bench {

// Below this many samples a 99th percentile is only the maximum under another name.
inline constexpr std::size_t kMinSamplesForP99 = 100;

// Summary of a sample set, in the samples' unit (bytes per second, or seconds).
struct Summary {
  std::size_t count = 0;
  double median = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
  double stddev = 0;  // sample standard deviation (n - 1 denominator); 0 for one sample
  double cov = 0;     // coefficient of variation, stddev / mean; 0 for one sample or a zero mean
  // The high tail (linear interpolation): for durations the slow end; for rates the slow end is
  // `min`. Present only with at least kMinSamplesForP99 samples.
  std::optional<double> p99;
  bool operator==(const Summary&) const = default;
};

// Summarises `samples` (any order). One sample gives median = min = max = mean and cov 0.
// kInvalidArgument when `samples` is empty or holds a negative, infinite or NaN value.
[[nodiscard]] Result<Summary> summarize(std::span<const double> samples);

// The `p`-th percentile (0..100) with linear interpolation between the closest ranks (numpy's
// default), so percentile(s, 50) is the median. kInvalidArgument for an empty set or p outside
// [0, 100].
[[nodiscard]] Result<double> percentile(std::span<const double> samples, double p);

// One rate per duration: bytes / duration, in bytes per second. kInvalidArgument for a zero or
// negative duration (a timer too coarse for the copy).
[[nodiscard]] Result<std::vector<double>> bytes_per_second(
    std::uint64_t bytes, std::span<const std::chrono::nanoseconds> durations);

// Durations as seconds, for summarising latencies.
[[nodiscard]] std::vector<double> to_seconds(std::span<const std::chrono::nanoseconds> durations);

}  // namespace acco::bench
