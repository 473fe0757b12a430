// The latency-bandwidth (alpha-beta) model of a transfer: moving `bytes` takes
// alpha + bytes / beta seconds, fitted by least squares to times measured at a few sizes. The
// tuner fits copy paths with it, the dist module the links its collectives cross.
#pragma once

#include <cstdint>
#include <span>

#include "acco/core/result.hpp"

namespace acco {

struct TimedSize {
  std::uint64_t bytes = 0;
  double seconds = 0;  // one transfer of `bytes`
  bool operator==(const TimedSize&) const = default;
};

struct LatencyBandwidth {
  double alpha_seconds = 0;          // fixed cost per transfer; clamped at 0
  double beta_bytes_per_second = 0;  // asymptotic rate
  bool operator==(const LatencyBandwidth&) const = default;
};

enum class FitWeight {
  kAbsolute,  // ordinary least squares on seconds: the large sizes dominate (fine for beta)
  // Weights 1 / t^2, least squares on the relative error: for a sweep from 8 B to MiBs whose
  // noise is proportional to the time, every size counts alike.
  kRelative,
};

// Least squares of seconds against bytes. kInvalidArgument with fewer than two distinct sizes, a
// non-finite or negative time (zero too, under kRelative), or a slope that is not positive (time
// not growing with size: no bandwidth to report). A negative intercept (noise at small sizes) is
// clamped to 0. Pure.
[[nodiscard]] Result<LatencyBandwidth> fit_latency_bandwidth(
    std::span<const TimedSize> points, FitWeight weight = FitWeight::kAbsolute);

}  // namespace acco
