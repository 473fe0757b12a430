#include "acco/core/units.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <set>

#include <fmt/format.h>

namespace acco::units {

std::string_view trim(std::string_view text) {
  const auto* ws = " \t\r\n";
  const auto begin = text.find_first_not_of(ws);
  if (begin == std::string_view::npos) {
    return {};
  }
  const auto end = text.find_last_not_of(ws);
  return text.substr(begin, end - begin + 1);
}

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto pos = text.find(sep, start);
    parts.emplace_back(text.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) {
      break;
    }
    start = pos + 1;
  }
  return parts;
}

namespace {

std::string scaled(double value, const std::array<const char*, 6>& names, double step) {
  std::size_t i = 0;
  while (std::fabs(value) >= step && i + 1 < names.size()) {
    value /= step;
    ++i;
  }
  if (i == 0) {
    return fmt::format("{:.0f} {}", value, names[i]);
  }
  return fmt::format("{:.{}f} {}", value, std::fabs(value) < 10 ? 2 : 1, names[i]);
}

}  // namespace

std::string format_rate(double bytes_per_second) {
  return scaled(bytes_per_second, {"B/s", "kB/s", "MB/s", "GB/s", "TB/s", "PB/s"}, 1000.0);
}

std::string format_percent(double fraction, int decimals) {
  return fmt::format("{:.{}f}%", fraction * 100, decimals);
}

std::string format_seconds(double seconds) {
  if (seconds < 1e-6) {
    return fmt::format("{:.0f} ns", seconds * 1e9);
  }
  if (seconds < 1e-3) {
    return fmt::format("{:.2f} us", seconds * 1e6);
  }
  if (seconds < 1) {
    return fmt::format("{:.2f} ms", seconds * 1e3);
  }
  return fmt::format("{:.2f} s", seconds);
}

std::string format_bytes(std::uint64_t bytes) {
  return scaled(static_cast<double>(bytes), {"B", "KiB", "MiB", "GiB", "TiB", "PiB"}, 1024.0);
}

std::string format_bit_rate(double bits_per_second) {
  return scaled(bits_per_second, {"b/s", "kb/s", "Mb/s", "Gb/s", "Tb/s", "Pb/s"}, 1000.0);
}

Result<std::int64_t> parse_int(std::string_view text, int base) {
  const auto t = trim(text);
  std::string_view digits = t;
  bool negative = false;
  if (!digits.empty() && (digits.front() == '-' || digits.front() == '+')) {
    negative = digits.front() == '-';
    digits.remove_prefix(1);
  }
  if (base == 0 || base == 16) {
    if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
      digits.remove_prefix(2);
      base = 16;
    } else if (base == 0) {
      base = 10;
    }
  }
  std::int64_t value = 0;
  const auto* first = digits.data();
  const auto* last = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(first, last, value, base);
  if (digits.empty() || ec != std::errc() || ptr != last) {
    return fail(Errc::kInvalidArgument, fmt::format("cannot parse '{}' as an integer", t));
  }
  return negative ? -value : value;
}

Result<double> parse_double(std::string_view text) {
  const auto t = trim(text);
  double value = 0;
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size() || !std::isfinite(value)) {
    return fail(Errc::kInvalidArgument, fmt::format("cannot parse '{}' as a number", t));
  }
  return value;
}

Result<std::uint64_t> parse_bytes(std::string_view text) {
  const auto t = trim(text);
  std::size_t digits = 0;
  while (digits < t.size() && (std::isdigit(static_cast<unsigned char>(t[digits])) != 0)) {
    ++digits;
  }
  const auto bad = [&] {
    return fail(
        Errc::kInvalidArgument,
        fmt::format("cannot parse '{}' as a size (expected e.g. 4096, 64KiB, 256MiB, 1GiB)", t));
  };
  if (digits == 0) {
    return bad();
  }
  auto value = parse_int(t.substr(0, digits));
  if (!value) {
    return bad();
  }
  static const std::array<std::pair<std::string_view, std::uint64_t>, 14> kUnits = {{
      {"", 1},
      {"B", 1},
      {"K", 1ULL << 10},
      {"KiB", 1ULL << 10},
      {"kB", 1000},
      {"KB", 1000},
      {"M", 1ULL << 20},
      {"MiB", 1ULL << 20},
      {"MB", 1000000},
      {"G", 1ULL << 30},
      {"GiB", 1ULL << 30},
      {"GB", 1000000000},
      {"T", 1ULL << 40},
      {"TiB", 1ULL << 40},
  }};
  const auto unit = trim(t.substr(digits));
  for (const auto& [name, factor] : kUnits) {
    if (unit == name) {
      const auto v = static_cast<std::uint64_t>(*value);
      if (v > UINT64_MAX / factor) {
        return bad();
      }
      return v * factor;
    }
  }
  return bad();
}

Result<std::vector<int>> parse_cpulist(std::string_view text) {
  std::set<int> cpus;
  const auto t = trim(text);
  if (t.empty()) {
    return std::vector<int>{};
  }
  constexpr std::int64_t kMaxCpu = 1 << 20;  // far above any real machine; guards garbage ranges
  for (const auto& part : split(t, ',')) {
    const auto dash = part.find('-');
    auto lo = parse_int(part.substr(0, dash));
    auto hi = dash == std::string::npos ? lo : parse_int(part.substr(dash + 1));
    if (!lo || !hi || *lo < 0 || *hi < *lo || *hi > kMaxCpu) {
      return fail(Errc::kInvalidArgument, fmt::format("cannot parse '{}' as a CPU list", t));
    }
    for (auto c = *lo; c <= *hi; ++c) {
      cpus.insert(static_cast<int>(c));
    }
  }
  return std::vector<int>(cpus.begin(), cpus.end());
}

std::string format_cpulist(const std::vector<int>& cpus) {
  std::vector<int> sorted = cpus;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::string out;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) {
      ++j;
    }
    if (!out.empty()) {
      out += ',';
    }
    out += j == i ? fmt::format("{}", sorted[i]) : fmt::format("{}-{}", sorted[i], sorted[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace acco::units
