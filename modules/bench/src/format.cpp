#include "format.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

#include <fmt/format.h>

#include "acco/core/units.hpp"

namespace acco::bench::detail {

std::string size_text(std::uint64_t bytes) {
  if (bytes == 0 || !std::has_single_bit(bytes)) {
    return units::format_bytes(bytes);
  }
  constexpr std::array<const char*, 7> kNames = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  const int exponent = std::countr_zero(bytes);
  return fmt::format("{} {}", std::uint64_t{1} << (exponent % 10), kNames[exponent / 10]);
}

std::string median_text(const BenchResult& r) {
  if (r.median_bytes_per_second > 0) {
    return units::format_rate(r.median_bytes_per_second);
  }
  if (r.latency_seconds) {
    return units::format_seconds(*r.latency_seconds);
  }
  return "-";
}

double sweep_reference(const BenchResult& r) {
  if (r.peak_bytes_per_second > 0) {
    return r.peak_bytes_per_second;
  }
  double best = 0;
  for (const auto& p : r.sweep) {
    best = std::max(best, p.median_bytes_per_second);
  }
  return best;
}

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace acco::bench::detail
