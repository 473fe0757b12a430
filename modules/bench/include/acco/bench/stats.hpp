// The statistics of benchmark samples: the summary itself is core::stats (one implementation
// for the whole project); this header adds the conversions from timed copies to samples.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/core/stats.hpp"

namespace acco::bench {

using core::stats::kMinSamplesForP99;
using core::stats::percentile;
using core::stats::summarize;
using core::stats::Summary;

// One rate per duration: bytes / duration, in bytes per second. kInvalidArgument for a zero or
// negative duration (a timer too coarse for the copy).
[[nodiscard]] Result<std::vector<double>> bytes_per_second(
    std::uint64_t bytes, std::span<const std::chrono::nanoseconds> durations);

// Durations as seconds, for summarising latencies.
[[nodiscard]] std::vector<double> to_seconds(std::span<const std::chrono::nanoseconds> durations);

}  // namespace acco::bench
