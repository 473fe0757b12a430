#include "format.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "acco/core/units.hpp"
#include "acco/report/html.hpp"

namespace acco::bench::detail {

std::string size_text(std::uint64_t bytes) {
  if (bytes == 0 || !std::has_single_bit(bytes)) {
    return units::format_bytes(bytes);
  }
  constexpr std::array<const char*, 7> kNames = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  const int exponent = std::countr_zero(bytes);
  return fmt::format("{} {}", std::uint64_t{1} << (exponent % 10), kNames[exponent / 10]);
}

bool is_latency(const BenchResult& r) {
  return r.median_bytes_per_second <= 0 && r.latency_seconds.has_value();
}

std::string latency_text(double seconds) {
  return fmt::format("{:.2f} us", seconds * 1e6);
}

namespace {

std::string time_or_rate(const BenchResult& r, const std::optional<double>& seconds,
                         double bytes_per_second) {
  if (is_latency(r)) {
    return seconds ? latency_text(*seconds) : "-";
  }
  return bytes_per_second > 0 ? units::format_rate(bytes_per_second) : "-";
}

}  // namespace

std::string median_text(const BenchResult& r) {
  return time_or_rate(r, r.latency_seconds, r.median_bytes_per_second);
}

std::string min_text(const BenchResult& r) {
  return time_or_rate(r, r.latency_min_seconds, r.min_bytes_per_second);
}

std::string max_text(const BenchResult& r) {
  return time_or_rate(r, r.latency_max_seconds, r.max_bytes_per_second);
}

std::string latency_summary(const BenchResult& r) {
  const auto text = [](const std::optional<double>& s) {
    return s ? latency_text(*s) : std::string("-");
  };
  return fmt::format("median {}, min {}, max {}, p99 {}", text(r.latency_seconds),
                     text(r.latency_min_seconds), text(r.latency_max_seconds),
                     text(r.latency_p99_seconds));
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
  return report::html_escape(text);
}

std::vector<std::string> devices_of(const BenchRun& run) {
  std::vector<std::string> out;
  for (const auto& r : run.results) {
    if (r.device.find("->") == std::string::npos && r.device != "host") {
      index_of(out, r.device);
    }
  }
  return out;
}

std::size_t index_of(std::vector<std::string>& names, const std::string& name) {
  const auto it = std::find(names.begin(), names.end(), name);
  if (it != names.end()) {
    return static_cast<std::size_t>(it - names.begin());
  }
  names.push_back(name);
  return names.size() - 1;
}

PeerMatrix peer_matrix(const BenchRun& run) {
  struct Pair {
    std::string from, to;
    double rate = 0;
  };
  std::vector<Pair> pairs;
  for (const auto& r : run.results) {
    const auto arrow = r.device.find("->");
    if (r.status == kStatusOk && r.case_key == "p2p" && arrow != std::string::npos) {
      pairs.push_back(
          {r.device.substr(0, arrow), r.device.substr(arrow + 2), r.median_bytes_per_second});
    }
  }
  PeerMatrix matrix;
  if (pairs.empty()) {
    return matrix;
  }
  // Every device of the run, so one that took part in no pair still has its row and column.
  matrix.devices = devices_of(run);
  for (const Pair& pair : pairs) {
    index_of(matrix.devices, pair.from);
    index_of(matrix.devices, pair.to);
  }
  matrix.values.assign(matrix.devices.size(),
                       std::vector<std::optional<double>>(matrix.devices.size()));
  for (const Pair& pair : pairs) {
    matrix.values[index_of(matrix.devices, pair.from)][index_of(matrix.devices, pair.to)] =
        pair.rate;
  }
  return matrix;
}

}  // namespace acco::bench::detail
