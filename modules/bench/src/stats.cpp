#include "acco/bench/stats.hpp"

#include <fmt/format.h>

namespace acco::bench {

Result<std::vector<double>> bytes_per_second(std::uint64_t bytes,
                                             std::span<const std::chrono::nanoseconds> durations) {
  std::vector<double> rates;
  rates.reserve(durations.size());
  for (std::size_t i = 0; i < durations.size(); ++i) {
    if (durations[i].count() <= 0) {
      return fail(Errc::kInvalidArgument, fmt::format("sample {}: duration {} ns is not positive",
                                                      i, durations[i].count()));
    }
    rates.push_back(static_cast<double>(bytes) * 1e9 / static_cast<double>(durations[i].count()));
  }
  return rates;
}

std::vector<double> to_seconds(std::span<const std::chrono::nanoseconds> durations) {
  std::vector<double> out;
  out.reserve(durations.size());
  for (const auto d : durations) {
    out.push_back(std::chrono::duration<double>(d).count());
  }
  return out;
}

}  // namespace acco::bench
