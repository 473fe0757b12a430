// What the recorded-input readers share: the sysfs form of a PCI address, device order in a
// snapshot, and errors that name the file and line.
#pragma once

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "acco/analyze/snapshot.hpp"
#include "acco/core/result.hpp"
#include "acco/core/units.hpp"

namespace acco::analyze::detail {

[[nodiscard]] inline tl::unexpected<Error> line_error(const std::string& name, std::size_t line,
                                                      const std::string& message) {
  return fail(Errc::kInvalidArgument, fmt::format("{}:{}: {}", name, line, message));
}

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF).
[[nodiscard]] inline bool is_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t extra = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0xc2 && c <= 0xdf) {
      extra = 1;
      cp = c & 0x1fU;
    } else if (c >= 0xe0 && c <= 0xef) {
      extra = 2;
      cp = c & 0x0fU;
    } else if (c >= 0xf0 && c <= 0xf4) {
      extra = 3;
      cp = c & 0x07U;
    } else {
      return false;
    }
    if (i + extra >= text.size()) {
      return false;
    }
    for (std::size_t k = 1; k <= extra; ++k) {
      const auto b = static_cast<unsigned char>(text[i + k]);
      if ((b & 0xc0U) != 0x80U) {
        return false;
      }
      cp = (cp << 6U) | (b & 0x3fU);
    }
    if ((extra == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (extra == 3 && (cp < 0x10000 || cp > 0x10ffff))) {
      return false;
    }
    i += extra + 1;
  }
  return true;
}

// A name, serial, id or label read from a file, as stored: UTF-8 as is, anything else escaped
// (\xNN) so that text and JSON output show it and never carry bytes that are not UTF-8.
[[nodiscard]] inline std::string stored_text(std::string_view text) {
  return is_utf8(text) ? std::string(text) : units::escape(text);
}

// nvidia-smi and DCGM print "00000000:3B:00.0"; acco keeps sysfs's "0000:3b:00.0".
[[nodiscard]] inline std::string sysfs_pci_bus_id(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  const auto colon = out.find(':');
  if (colon != std::string::npos && colon > 4 &&
      out.find_first_not_of('0') >= colon - 4) {  // only leading zeros beyond four digits
    out.erase(0, colon - 4);
  }
  return stored_text(out);
}

// The most power one GPU is taken to draw: a larger reading is dropped as no reading (an
// H200 or B200 draws 700-1200 W; 1e308 W would print as "inf W").
inline constexpr double kMaxGpuWatts = 10'000;

// A reading in bytes (or another count) as a whole number: nullopt for NaN, a negative value or
// one that does not fit in 64 bits (a cast of those is undefined behaviour).
[[nodiscard]] inline std::optional<std::uint64_t> whole_count(double x) {
  constexpr double kTwoTo64 = 18446744073709551616.0;
  if (!(x >= 0) || !(x < kTwoTo64)) {  // NaN fails both
    return std::nullopt;
  }
  const double rounded = std::round(x);
  return rounded < kTwoTo64 ? std::optional(static_cast<std::uint64_t>(rounded)) : std::nullopt;
}

// "12" -> 12; -1 for text that is not a whole number.
[[nodiscard]] inline long long whole_number(const std::string& s) {
  long long v = -1;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && ptr == s.data() + s.size() ? v : -1;
}

// Pairs by their key as a number where both are numbers ("2" before "10"), else by text.
template <typename T>
void sort_by_number(std::vector<std::pair<std::string, T>>& items) {
  std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
    const long long x = whole_number(a.first);
    const long long y = whole_number(b.first);
    return x >= 0 && y >= 0 ? x < y : a.first < b.first;
  });
}

// Devices by numeric index where both are numbers ("2" before "10"), else by text.
inline void sort_devices(std::vector<power::DeviceSample>& devices) {
  const auto number = [](const std::string& s) { return whole_number(s); };
  std::stable_sort(devices.begin(), devices.end(),
                   [&](const power::DeviceSample& a, const power::DeviceSample& b) {
                     const long long x = number(a.device);
                     const long long y = number(b.device);
                     if (x >= 0 && y >= 0) {
                       return x < y;
                     }
                     return a.device < b.device;
                   });
}

inline void sort_by_time(std::vector<Snapshot>& snapshots) {
  std::stable_sort(snapshots.begin(), snapshots.end(), [](const Snapshot& a, const Snapshot& b) {
    return a.time_unix_nanos < b.time_unix_nanos;
  });
}

// A civil date and time (read as UTC: the tools print local time without a zone) -> Unix
// nanoseconds; nullopt for a date that does not exist or a year outside 1970-2200.
[[nodiscard]] inline std::optional<std::int64_t> civil_unix_nanos(int year, int month, int day,
                                                                  int hour, int minute,
                                                                  int second) {
  if (year < 1970 || year > 2200 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 ||
      minute < 0 || minute > 59 || second < 0 || second > 60) {
    return std::nullopt;
  }
  const std::chrono::year_month_day date{std::chrono::year(year),
                                         std::chrono::month(static_cast<unsigned>(month)),
                                         std::chrono::day(static_cast<unsigned>(day))};
  if (!date.ok()) {
    return std::nullopt;
  }
  const auto days = std::chrono::sys_days(date).time_since_epoch().count();
  return (static_cast<std::int64_t>(days) * 86400 + hour * 3600LL + minute * 60LL + second) *
         1'000'000'000;
}

// Calls `on_line(line, number)` for each line of `text` (numbered from 1, a trailing '\r' cut, a
// last line without '\n' included) and stops at the first error it returns.
template <typename OnLine>
[[nodiscard]] Status for_each_line(std::string_view text, OnLine on_line) {
  std::size_t number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (line.ends_with('\r')) {
      line.remove_suffix(1);
    }
    ACCO_RETURN_IF_ERROR(on_line(line, number));
  }
  return {};
}

inline void warn_once(std::vector<std::string>& warnings, std::string message) {
  if (std::find(warnings.begin(), warnings.end(), message) == warnings.end()) {
    warnings.push_back(std::move(message));
  }
}

}  // namespace acco::analyze::detail
