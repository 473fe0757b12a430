// The latency-bandwidth model of one copy path: a copy of `bytes` takes alpha + bytes / beta
// seconds, fitted by least squares to times measured at a few sizes.
#pragma once

#include <cstdint>
#include <span>

#include "acco/core/result.hpp"

namespace acco::tune {

struct TimedSize {
  std::uint64_t bytes = 0;
  double seconds = 0;  // one copy of `bytes`
  bool operator==(const TimedSize&) const = default;
};

struct LatencyBandwidth {
  double alpha_seconds = 0;          // fixed cost per copy; clamped at 0
  double beta_bytes_per_second = 0;  // asymptotic rate
  bool operator==(const LatencyBandwidth&) const = default;
};

// Ordinary least squares of seconds against bytes. kInvalidArgument with fewer than two distinct
// sizes, a non-finite or negative time, or a slope that is not positive (time not growing with
// size: no bandwidth to report). A negative intercept (noise at small sizes) is clamped to 0. Pure.
[[nodiscard]] Result<LatencyBandwidth> fit_latency_bandwidth(std::span<const TimedSize> points);

}  // namespace acco::tune
