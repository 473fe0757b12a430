#include "acco/tune/fit.hpp"

#include <cmath>
#include <set>

#include <fmt/format.h>

namespace acco::tune {

Result<LatencyBandwidth> fit_latency_bandwidth(std::span<const TimedSize> points) {
  std::set<std::uint64_t> sizes;
  for (const auto& p : points) {
    if (!std::isfinite(p.seconds) || p.seconds < 0) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("fit: time {} s at {} bytes is not a finite non-negative number",
                              p.seconds, p.bytes));
    }
    sizes.insert(p.bytes);
  }
  if (sizes.size() < 2) {
    return fail(Errc::kInvalidArgument,
                fmt::format("fit: needs at least two distinct sizes, got {}", sizes.size()));
  }
  // Centred sums keep the precision when bytes are large and times small.
  const double n = static_cast<double>(points.size());
  double mean_x = 0;
  double mean_y = 0;
  for (const auto& p : points) {
    mean_x += static_cast<double>(p.bytes) / n;
    mean_y += p.seconds / n;
  }
  double sxx = 0;
  double sxy = 0;
  for (const auto& p : points) {
    const double dx = static_cast<double>(p.bytes) - mean_x;
    sxx += dx * dx;
    sxy += dx * (p.seconds - mean_y);
  }
  const double slope = sxy / sxx;  // seconds per byte
  if (!(slope > 0)) {
    return fail(Errc::kInvalidArgument,
                "fit: time does not grow with size, so there is no bandwidth to fit");
  }
  LatencyBandwidth fit;
  fit.beta_bytes_per_second = 1.0 / slope;
  fit.alpha_seconds = std::max(0.0, mean_y - slope * mean_x);
  return fit;
}

}  // namespace acco::tune
