#include <array>
#include <charconv>
#include <cmath>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "acco/device/host_backend.hpp"

namespace acco::device {
namespace {

// Usable per-lane rate, one direction, bytes per second: Gen1/2 lose 20% to 8b/10b, Gen3-5 use
// 128b/130b, Gen6 uses FLIT mode with 242 payload bytes per 256. Same figures as topo's link
// model; repeated here because dev does not depend on topo.
constexpr std::array<double, 6> kLaneBytesPerSecond{
    0.25e9,
    0.5e9,
    8.0e9 * 128 / 130 / 8,
    16.0e9 * 128 / 130 / 8,
    32.0e9 * 128 / 130 / 8,
    64.0e9 * 242 / 256 / 8,
};

constexpr std::array<int, 5> kWidths{1, 2, 4, 8, 16};

struct Unit {
  std::string_view suffix;
  double scale;
};

constexpr std::array<Unit, 4> kRateUnits{{{"GB/s", 1e9}, {"MB/s", 1e6}, {"kB/s", 1e3}, {"B/s", 1}}};
constexpr std::array<Unit, 3> kLatencyUnits{{{"ns", 1}, {"us", 1e3}, {"ms", 1e6}}};

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) {
    return {};
  }
  const auto last = s.find_last_not_of(" \t");
  return s.substr(first, last - first + 1);
}

bool parse_int(std::string_view s, int& out) {
  if (s.empty()) {
    return false;
  }
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

// A non-negative finite number followed by one of `units`; returns it in the unit's base.
template <std::size_t N>
bool parse_quantity(std::string_view s, const std::array<Unit, N>& units, double& out) {
  for (const Unit& unit : units) {
    if (s.size() <= unit.suffix.size() || !s.ends_with(unit.suffix)) {
      continue;
    }
    const std::string_view number = s.substr(0, s.size() - unit.suffix.size());
    double value = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (ec != std::errc() || end != number.data() + number.size() || !std::isfinite(value) ||
        value < 0) {
      return false;
    }
    out = value * unit.scale;
    return true;
  }
  return false;
}

// "pcie4x16" -> bytes per second; 0 when `s` is not a PCIe generation and width.
double parse_pcie(std::string_view s) {
  if (!s.starts_with("pcie")) {
    return 0;
  }
  s.remove_prefix(4);
  const auto x = s.find('x');
  int gen = 0;
  int width = 0;
  if (x == std::string_view::npos || !parse_int(s.substr(0, x), gen) ||
      !parse_int(s.substr(x + 1), width)) {
    return 0;
  }
  if (gen < 1 || gen > static_cast<int>(kLaneBytesPerSecond.size())) {
    return 0;
  }
  bool known_width = false;
  for (const int w : kWidths) {
    known_width = known_width || w == width;
  }
  return known_width ? kLaneBytesPerSecond[static_cast<std::size_t>(gen - 1)] * width : 0;
}

}  // namespace

Result<EmulatedLink> parse_link(std::string_view spec) {
  const auto bad = [&] {
    return fail(Errc::kInvalidArgument,
                fmt::format("link '{}': expected pcie<gen>x<width> (gen 1-6, width 1, 2, 4, 8 or "
                            "16), 'unlimited' or a rate from 1kB/s to 10000GB/s in B/s, kB/s, "
                            "MB/s or GB/s, each "
                            "optionally followed by ',<latency>' in ns, us or ms (25GB/s,2us)",
                            spec));
  };
  const std::string_view whole = trim(spec);
  const auto comma = whole.find(',');
  const std::string_view rate = trim(whole.substr(0, comma));

  EmulatedLink link;
  link.name = std::string(whole);
  if (rate == "unlimited") {
    link.bytes_per_second = 0;
  } else if (const double pcie = parse_pcie(rate); pcie > 0) {
    link.bytes_per_second = pcie;
  } else if (double bytes_per_second = 0; parse_quantity(rate, kRateUnits, bytes_per_second) &&
                                          bytes_per_second >= 1e3 && bytes_per_second <= 1e13) {
    // 1 kB/s to 10 TB/s: below, a benchmark's copy would take hours; above, no link exists.
    link.bytes_per_second = bytes_per_second;
  } else {
    return bad();
  }

  if (comma != std::string_view::npos) {
    double latency_ns = 0;
    // Beyond an hour is a typo, and it would overflow the nanosecond count.
    if (!parse_quantity(trim(whole.substr(comma + 1)), kLatencyUnits, latency_ns) ||
        latency_ns > 3.6e12) {
      return bad();
    }
    link.latency = std::chrono::nanoseconds(std::llround(latency_ns));
  } else if (link.bytes_per_second > 0) {
    link.latency = kDefaultLinkLatency;
  }
  return link;
}

}  // namespace acco::device
