#include "acco/core/stats.hpp"

#include <cmath>
#include <numeric>
#include <vector>

#include <fmt/format.h>

namespace acco::core::stats {
namespace {

Status check_samples(std::span<const double> samples) {
  if (samples.empty()) {
    return fail(Errc::kInvalidArgument, "no samples");
  }
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (!std::isfinite(samples[i]) || samples[i] < 0) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("sample {}: {} is not a finite, non-negative value", i, samples[i]));
    }
  }
  return {};
}

// `sorted` is non-empty and ascending; p in [0, 100].
double sorted_percentile(const std::vector<double>& sorted, double p) {
  const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(rank));
  const auto upper = std::min(lower + 1, sorted.size() - 1);
  const double fraction = rank - static_cast<double>(lower);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction;
}

}  // namespace

Result<Summary> summarize(std::span<const double> samples) {
  ACCO_RETURN_IF_ERROR(check_samples(samples), "summarize");
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const auto n = static_cast<double>(sorted.size());

  Summary s;
  s.count = sorted.size();
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = sorted_percentile(sorted, 50);
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / n;
  if (sorted.size() > 1) {
    // Two passes: the squared deviations from the mean do not cancel the way sum(x^2) - n*mean^2
    // does when all rates sit near 50e9.
    double squares = 0;
    for (const double x : sorted) {
      squares += (x - s.mean) * (x - s.mean);
    }
    s.stddev = std::sqrt(squares / (n - 1));
  }
  s.cov = s.mean > 0 ? s.stddev / s.mean : 0;
  if (sorted.size() >= kMinSamplesForP99) {
    s.p99 = sorted_percentile(sorted, 99);
  }
  return s;
}

double median(std::span<const double> values) {
  std::vector<double> copy(values.begin(), values.end());
  return median_in_place(copy);
}

Result<double> percentile(std::span<const double> samples, double p) {
  ACCO_RETURN_IF_ERROR(check_samples(samples), "percentile");
  if (!(p >= 0 && p <= 100)) {
    return fail(Errc::kInvalidArgument, fmt::format("percentile: {} is outside [0, 100]", p));
  }
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  return sorted_percentile(sorted, p);
}

}  // namespace acco::core::stats
