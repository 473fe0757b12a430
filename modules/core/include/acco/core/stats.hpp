// Statistics over a set of samples: median, quantiles, min, max, mean and coefficient of
// variation. The one implementation for the whole project (the benchmark cases, the tuner, the
// scheduler's performance models, the cluster probe, the recording readers and the programs in
// bench/): no other file computes a median or a percentile. Pure functions on values.
//
// The one rule for an even count: the median is the mean of the two middle values (numpy's
// median, and percentile(s, 50) below); an odd count's median is its middle value.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>

#include "acco/core/result.hpp"

namespace acco::core::stats {

// Below this many samples a 99th percentile is only the maximum under another name.
inline constexpr std::size_t kMinSamplesForP99 = 100;

// Summary of a sample set, in the samples' unit (bytes per second, seconds, ns per task).
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
// default), so percentile(s, 50) is the median. kInvalidArgument for an empty set, a bad sample
// (as summarize) or p outside [0, 100].
[[nodiscard]] Result<double> percentile(std::span<const double> samples, double p);

// The middle value, or the mean of the two middle ones for an even count, reordering `values`
// in place (no allocation: the scheduler calls it per batch of samples). `values` must not be
// empty.
inline double median_in_place(std::span<double> values) {
  ACCO_CHECK(!values.empty());
  const auto mid = static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  const double upper = values[static_cast<std::size_t>(mid)];
  if (values.size() % 2 == 1) {
    return upper;
  }
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return (lower + upper) / 2;
}

// The median of `values` (any order, left as they are) by the same rule: a copy through
// median_in_place. `values` must not be empty; unlike summarize, any finite value is allowed
// (ratios, differences).
[[nodiscard]] double median(std::span<const double> values);

}  // namespace acco::core::stats
