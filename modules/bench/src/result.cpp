#include "acco/bench/result.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace acco::bench {

BenchResult waived(std::string case_key, std::string device, std::string reason) {
  BenchResult r;
  r.case_key = std::move(case_key);
  r.device = std::move(device);
  r.status = kStatusWaived;
  r.reason = std::move(reason);
  return r;
}

BenchResult failed(std::string case_key, std::string device, const Error& error) {
  BenchResult r;
  r.case_key = std::move(case_key);
  r.device = std::move(device);
  r.status = kStatusError;
  r.reason = fmt::format("{}: {}", to_string(error.code), error.message);
  return r;
}

void set_rates(BenchResult& result, const Summary& bytes_per_second) {
  result.median_bytes_per_second = bytes_per_second.median;
  result.min_bytes_per_second = bytes_per_second.min;
  result.max_bytes_per_second = bytes_per_second.max;
  result.cov = bytes_per_second.cov;
}

std::optional<std::uint64_t> half_peak_bytes(std::span<const SweepPoint> sweep,
                                             double reference_bytes_per_second) {
  if (sweep.empty() || !(reference_bytes_per_second > 0)) {
    return std::nullopt;
  }
  std::vector<SweepPoint> points(sweep.begin(), sweep.end());
  std::sort(points.begin(), points.end(),
            [](const SweepPoint& a, const SweepPoint& b) { return a.bytes < b.bytes; });
  const double half = reference_bytes_per_second / 2;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (points[i].median_bytes_per_second < half) {
      continue;
    }
    if (i == 0 || points[i - 1].bytes == 0) {
      return points[i].bytes;
    }
    const auto& lo = points[i - 1];
    const auto& hi = points[i];
    const double x0 = std::log2(static_cast<double>(lo.bytes));
    const double x1 = std::log2(static_cast<double>(hi.bytes));
    const double dy = hi.median_bytes_per_second - lo.median_bytes_per_second;
    const double t = dy > 0 ? (half - lo.median_bytes_per_second) / dy : 1.0;
    return static_cast<std::uint64_t>(std::llround(std::exp2(x0 + t * (x1 - x0))));
  }
  return std::nullopt;
}

}  // namespace acco::bench
