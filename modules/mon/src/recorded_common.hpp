// What the recorded-input readers share: the sysfs form of a PCI address, device order in a
// snapshot, and errors that name the file and line.
#pragma once

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "acco/core/result.hpp"
#include "acco/mon/snapshot.hpp"

namespace acco::mon::detail {

[[nodiscard]] inline tl::unexpected<Error> line_error(const std::string& name, std::size_t line,
                                                      const std::string& message) {
  return fail(Errc::kInvalidArgument, fmt::format("{}:{}: {}", name, line, message));
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
  return out;
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

inline void warn_once(std::vector<std::string>& warnings, std::string message) {
  if (std::find(warnings.begin(), warnings.end(), message) == warnings.end()) {
    warnings.push_back(std::move(message));
  }
}

}  // namespace acco::mon::detail
