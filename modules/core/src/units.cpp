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
  // NUL counts as blank: some kernels' sysfs attributes end in "\n\0" (a show() that counts the
  // terminator), and such text must parse like "\n" alone.
  constexpr std::string_view kBlank(" \t\r\n\v\f\0", 7);
  const auto begin = text.find_first_not_of(kBlank);
  if (begin == std::string_view::npos) {
    return {};
  }
  const auto end = text.find_last_not_of(kBlank);
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

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '\0':
        out += "\\0";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\\':
        out += "\\\\";
        break;
      default: {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte >= 0x7f) {
          out += fmt::format("\\x{:02x}", byte);
        } else {
          out += c;
        }
      }
    }
  }
  return out;
}

std::string excerpt(std::string_view text, std::size_t max_chars) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const std::string piece = escape(text.substr(i, 1));
    if (out.size() + piece.size() > max_chars) {
      return fmt::format("{}... ({} bytes)", out, text.size());
    }
    out += piece;
  }
  return out;
}

std::string quote_attribute(std::string_view text) {
  if (!text.empty() && text.back() == '\n') {
    text.remove_suffix(1);
  }
  return escape(text);
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
    return fail(Errc::kInvalidArgument, fmt::format("cannot parse '{}' as an integer", escape(t)));
  }
  return negative ? -value : value;
}

Result<double> parse_double(std::string_view text) {
  const auto t = trim(text);
  double value = 0;
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size() || !std::isfinite(value)) {
    return fail(Errc::kInvalidArgument, fmt::format("cannot parse '{}' as a number", escape(t)));
  }
  return value;
}

Result<double> parse_duration(std::string_view text) {
  const auto t = trim(text);
  std::size_t number = 0;
  while (number < t.size() &&
         (std::isdigit(static_cast<unsigned char>(t[number])) != 0 || t[number] == '.')) {
    ++number;
  }
  const auto bad = [&] {
    return fail(Errc::kInvalidArgument,
                fmt::format("cannot parse '{}' as a duration (expected e.g. 500ms, 1s, 2m, 1h, 7d)",
                            escape(t)));
  };
  if (number == 0) {
    return bad();
  }
  const auto value = parse_double(t.substr(0, number));
  if (!value || *value < 0) {
    return bad();
  }
  static constexpr std::array<std::pair<std::string_view, double>, 7> kUnits = {{
      {"", 1},
      {"ms", 1e-3},
      {"s", 1},
      {"m", 60},
      {"min", 60},
      {"h", 3600},
      {"d", 86400},
  }};
  const auto unit = trim(t.substr(number));
  for (const auto& [name, factor] : kUnits) {
    if (unit == name) {
      return *value * factor;
    }
  }
  return bad();
}

Result<std::uint64_t> parse_bytes(std::string_view text) {
  const auto t = trim(text);
  std::size_t digits = 0;
  while (digits < t.size() && (std::isdigit(static_cast<unsigned char>(t[digits])) != 0)) {
    ++digits;
  }
  const auto bad = [&] {
    return fail(Errc::kInvalidArgument,
                fmt::format("cannot parse '{}' as a size (expected e.g. 4096, 64KiB, 256MiB, 1GiB)",
                            escape(t)));
  };
  if (digits == 0) {
    return bad();
  }
  auto value = parse_int(t.substr(0, digits));
  if (!value) {
    return bad();
  }
  static constexpr std::array<std::pair<std::string_view, std::uint64_t>, 14> kUnits = {{
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
      return fail(Errc::kInvalidArgument,
                  fmt::format("cannot parse '{}' as a CPU list", escape(t)));
    }
    for (auto c = *lo; c <= *hi; ++c) {
      cpus.insert(static_cast<int>(c));
    }
  }
  return std::vector<int>(cpus.begin(), cpus.end());
}

Result<std::vector<int>> parse_cpumask(std::string_view text) {
  const auto t = trim(text);
  const auto bad = [&] {
    return fail(Errc::kInvalidArgument,
                fmt::format("cannot parse '{}' as a CPU mask (expected e.g. 00000000,0000ffff)",
                            escape(t)));
  };
  if (t.empty()) {
    return std::vector<int>{};
  }
  // lib/bitmap-str.c "%*pb": 32-bit words in hex, most significant first, comma-separated; the
  // first word only as wide as its bits need.
  const auto words = split(t, ',');
  constexpr std::size_t kMaxWords = (1 << 20) / 32;  // the CPU bound parse_cpulist also keeps
  if (words.size() > kMaxWords) {
    return bad();
  }
  std::vector<int> cpus;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[words.size() - 1 - i];
    const bool hex =
        !word.empty() && word.size() <= 8 && std::all_of(word.begin(), word.end(), [](char c) {
          return std::isxdigit(static_cast<unsigned char>(c)) != 0;
        });
    if (!hex) {
      return bad();
    }
    std::uint32_t value = 0;
    if (std::from_chars(word.data(), word.data() + word.size(), value, 16).ec != std::errc()) {
      return bad();
    }
    for (int bit = 0; bit < 32; ++bit) {
      if (((value >> bit) & 1U) != 0) {
        cpus.push_back(static_cast<int>(i) * 32 + bit);
      }
    }
  }
  return cpus;
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
