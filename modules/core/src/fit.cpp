#include "acco/core/fit.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

namespace acco {

Result<LatencyBandwidth> fit_latency_bandwidth(std::span<const TimedSize> points,
                                               FitWeight weight) {
  std::set<std::uint64_t> sizes;
  for (const auto& p : points) {
    if (!std::isfinite(p.seconds) || p.seconds < 0 ||
        (weight == FitWeight::kRelative && p.seconds == 0)) {
      return fail(
          Errc::kInvalidArgument,
          fmt::format("fit: time {} s at {} bytes is not a finite {} number", p.seconds, p.bytes,
                      weight == FitWeight::kRelative ? "positive" : "non-negative"));
    }
    sizes.insert(p.bytes);
  }
  if (sizes.size() < 2) {
    return fail(Errc::kInvalidArgument,
                fmt::format("fit: needs at least two distinct sizes, got {}", sizes.size()));
  }
  const auto weight_of = [&](const TimedSize& p) {
    return weight == FitWeight::kRelative ? 1.0 / (p.seconds * p.seconds) : 1.0;
  };
  // Centred (weighted) sums keep the precision when bytes are large and times small.
  double total = 0;
  double mean_x = 0;
  double mean_y = 0;
  for (const auto& p : points) {
    const double w = weight_of(p);
    total += w;
    mean_x += w * static_cast<double>(p.bytes);
    mean_y += w * p.seconds;
  }
  mean_x /= total;
  mean_y /= total;
  double sxx = 0;
  double sxy = 0;
  for (const auto& p : points) {
    const double w = weight_of(p);
    const double dx = static_cast<double>(p.bytes) - mean_x;
    sxx += w * dx * dx;
    sxy += w * dx * (p.seconds - mean_y);
  }
  const double slope = sxy / sxx;  // seconds per byte
  if (!(slope > 0) || !std::isfinite(slope)) {
    return fail(Errc::kInvalidArgument,
                "fit: time does not grow with size, so there is no bandwidth to fit");
  }
  LatencyBandwidth fit;
  fit.beta_bytes_per_second = 1.0 / slope;
  fit.alpha_seconds = std::max(0.0, mean_y - slope * mean_x);
  return fit;
}

}  // namespace acco
