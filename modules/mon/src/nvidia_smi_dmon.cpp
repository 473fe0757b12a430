// `nvidia-smi dmon` output -> Snapshots. dmon prints two '#' header lines (the column names,
// then their units), repeats them now and then, writes '-' for a reading it has not got, and
// puts no time in a row unless run with -o D / -o T / -o DT. The interval is in the command line
// (-d N, 1 s by default), which people often keep as the log's first line.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "acco/core/units.hpp"
#include "acco/mon/recorded_readers.hpp"

#include "recorded_common.hpp"

namespace acco::mon {
namespace {

using detail::line_error;

enum class DmonField {
  kDate,
  kTime,
  kGpu,
  kPower,
  kGpuTemperature,
  kMemoryTemperature,
  kSmUtilization,
  kMemoryUtilization,
  kMemoryClock,
  kGraphicsClock,
  kPowerViolation,
  kThermalViolation,
  kFramebuffer,
  kPcieRx,
  kPcieTx,
  kUnread,
};

// dmon's column names (-s pucvmet and -o DT) and the unit each is printed in.
struct DmonColumn {
  DmonField field;
  double scale;  // to base units
};

const std::map<std::string_view, DmonColumn>& dmon_columns() {
  static const std::map<std::string_view, DmonColumn> columns = {
      {"Date", {DmonField::kDate, 1}},
      {"Time", {DmonField::kTime, 1}},
      {"gpu", {DmonField::kGpu, 1}},
      {"pwr", {DmonField::kPower, 1}},
      {"gtemp", {DmonField::kGpuTemperature, 1}},
      {"mtemp", {DmonField::kMemoryTemperature, 1}},
      {"sm", {DmonField::kSmUtilization, 0.01}},
      {"mem", {DmonField::kMemoryUtilization, 0.01}},
      {"mclk", {DmonField::kMemoryClock, 1e6}},
      {"pclk", {DmonField::kGraphicsClock, 1e6}},
      {"pviol", {DmonField::kPowerViolation, 0.01}},
      {"tviol", {DmonField::kThermalViolation, 1}},
      {"fb", {DmonField::kFramebuffer, 1048576.0}},
      {"rxpci", {DmonField::kPcieRx, 1e6}},
      {"txpci", {DmonField::kPcieTx, 1e6}},
  };
  return columns;
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) {
      ++i;
    }
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') {
      ++i;
    }
    if (i > start) {
      out.push_back(line.substr(start, i - start));
    }
  }
  return out;
}

// "-d 5", "--delay 5", "--delay=5" in the echoed command line; dmon's default is 1 s.
std::optional<double> echo_interval(const std::vector<std::string_view>& tokens) {
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    std::string_view value;
    if ((tokens[i] == "-d" || tokens[i] == "--delay") && i + 1 < tokens.size()) {
      value = tokens[i + 1];
    } else if (tokens[i].starts_with("--delay=")) {
      value = tokens[i].substr(8);
    } else {
      continue;
    }
    const auto seconds = units::parse_double(value);
    if (seconds && *seconds > 0) {
      return *seconds;
    }
  }
  return 1.0;
}

struct DmonRow {
  std::optional<std::int64_t> time;
  std::string gpu;
  power::DeviceSample sample;
};

}  // namespace

bool looks_like_nvidia_smi_dmon(std::string_view text) {
  std::size_t start = 0;
  for (int lines = 0; lines < 5 && start < text.size(); ++lines) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const auto line = units::trim(text.substr(start, end - start));
    start = end + 1;
    if (line.find("nvidia-smi dmon") != std::string_view::npos) {
      return true;
    }
    if (line.starts_with('#')) {
      const auto w = words(line.substr(1));
      if (!w.empty() && (w.front() == "gpu" || w.front() == "Date" || w.front() == "Time")) {
        return true;
      }
    }
  }
  return false;
}

Result<Recording> read_nvidia_smi_dmon(std::string_view text, const std::string& name,
                                       std::optional<double> interval_seconds) {
  Recording r;
  r.format = "nvidia-smi-dmon";
  std::optional<double> echoed;
  std::vector<std::optional<DmonColumn>> columns;
  std::vector<std::string> names;
  bool has_date = false;
  bool has_time = false;
  std::vector<DmonRow> rows;
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
    const auto trimmed = units::trim(line);
    if (trimmed.empty()) {
      continue;
    }
    if (trimmed.find("nvidia-smi") != std::string_view::npos) {
      echoed = echo_interval(words(trimmed));
      continue;
    }
    if (trimmed.starts_with('#')) {
      const auto w = words(trimmed.substr(1));
      const bool names_line =
          !w.empty() && (w.front() == "gpu" || w.front() == "Date" || w.front() == "Time");
      if (names_line && columns.empty()) {
        for (const auto& n : w) {
          names.emplace_back(n);
          const auto it = dmon_columns().find(n);
          columns.push_back(it == dmon_columns().end() ? std::nullopt : std::optional(it->second));
          if (it == dmon_columns().end()) {
            detail::warn_once(r.notes, fmt::format("{}: dmon column {} is not read", name, n));
          }
          has_date = has_date || n == "Date";
          has_time = has_time || n == "Time";
        }
        if (std::find(names.begin(), names.end(), "gpu") == names.end()) {
          return line_error(name, number, "a dmon header without its gpu column");
        }
      }
      continue;  // the units line, repeated headers
    }
    if (columns.empty()) {
      return line_error(name, number,
                        "expected nvidia-smi dmon's '# gpu ...' header line before the first "
                        "row (the columns are unknown without it)");
    }
    const auto cells = words(trimmed);
    if (cells.size() != columns.size()) {
      return line_error(name, number,
                        fmt::format("expected {} columns as the dmon header names, got {}",
                                    columns.size(), cells.size()));
    }
    DmonRow row;
    auto& s = row.sample;
    s.source = "nvidia-smi-dmon";
    std::optional<std::string_view> date;
    std::optional<std::string_view> time;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (!columns[i]) {
        continue;
      }
      const auto cell = cells[i];
      const auto field = columns[i]->field;
      if (field == DmonField::kDate) {
        date = cell;
        continue;
      }
      if (field == DmonField::kTime) {
        time = cell;
        continue;
      }
      if (field == DmonField::kGpu) {
        if (!units::parse_int(cell)) {
          return line_error(
              name, number,
              fmt::format("gpu: cannot read '{}' as a GPU index", units::escape(cell)));
        }
        row.gpu = std::string(cell);
        continue;
      }
      if (cell == "-" || cell == "N/A") {
        continue;  // dmon's "no reading"
      }
      const auto v = units::parse_double(cell);
      if (!v) {
        return line_error(
            name, number,
            fmt::format("{}: cannot read '{}' as a number", names[i], units::escape(cell)));
      }
      const double x = *v * columns[i]->scale;
      switch (field) {
        case DmonField::kPower:
          s.power_watts = x;
          break;
        case DmonField::kGpuTemperature:
          s.temperature_gpu_celsius = x;
          break;
        case DmonField::kMemoryTemperature:
          s.temperature_memory_celsius = x;
          break;
        case DmonField::kSmUtilization:
          if (x >= 0 && x <= 1) {
            s.utilization_ratio = x;
          } else {
            ++s.dropped_readings;
          }
          break;
        case DmonField::kMemoryUtilization:
          if (x >= 0 && x <= 1) {
            s.memory_utilization_ratio = x;
          } else {
            ++s.dropped_readings;
          }
          break;
        case DmonField::kMemoryClock:
          s.memory_clock_hertz = x;
          break;
        case DmonField::kGraphicsClock:
          s.sm_clock_hertz = x;  // the graphics clock, which the SM clock follows
          break;
        case DmonField::kPowerViolation:
          // The share of the interval the power cap held the clocks: most of it is a capped
          // sample.
          s.clock_event_reasons =
              s.clock_event_reasons.value_or(0) | (x >= 0.5 ? power::clock_event::kSwPowerCap : 0);
          break;
        case DmonField::kThermalViolation:
          s.clock_event_reasons = s.clock_event_reasons.value_or(0) |
                                  (x > 0 ? power::clock_event::kSwThermalSlowdown : 0);
          break;
        case DmonField::kFramebuffer:
          s.memory_used_bytes = static_cast<std::uint64_t>(x);
          break;
        case DmonField::kPcieRx:
          s.pcie_rx_bytes_per_second = x;
          break;
        case DmonField::kPcieTx:
          s.pcie_tx_bytes_per_second = x;
          break;
        default:
          break;
      }
    }
    if (date || time) {
      int y = 1970;
      int mo = 1;
      int d = 1;
      int h = 0;
      int mi = 0;
      int se = 0;
      bool ok = true;
      if (date) {
        ok = date->size() == 8 && std::sscanf(std::string(*date).c_str(), "%4d%2d%2d", &y, &mo,
                                              &d) == 3;  // NOLINT
      }
      if (ok && time) {
        ok = time->size() == 8 && std::sscanf(std::string(*time).c_str(), "%2d:%2d:%2d", &h, &mi,
                                              &se) == 3;  // NOLINT
      }
      row.time = ok ? detail::civil_unix_nanos(y, mo, d, h, mi, se) : std::nullopt;
      if (!row.time) {
        return line_error(
            name, number,
            fmt::format("cannot read '{} {}' as dmon's date (YYYYMMDD) and time "
                        "(HH:MM:SS)",
                        units::escape(date.value_or("")), units::escape(time.value_or(""))));
      }
    }
    rows.push_back(std::move(row));
  }
  if (columns.empty()) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: no nvidia-smi dmon header ('# gpu ...') and no rows", name));
  }

  // The interval: the echoed command's, else --interval, else dmon's default 1 s.
  double interval = 1;
  if (echoed) {
    interval = *echoed;
    if (interval_seconds && *interval_seconds != *echoed) {
      r.notes.push_back(fmt::format(
          "{}: the command line in the file says -d {}; --interval {} "
          "is not used",
          name, units::format_seconds(*echoed), units::format_seconds(*interval_seconds)));
    }
  } else if (interval_seconds) {
    interval = *interval_seconds;
  } else if (!has_date && !has_time) {
    r.notes.push_back(
        fmt::format("{}: no command line and no times in the file: rows taken 1 s "
                    "apart, dmon's default (give --interval)",
                    name));
  }

  // A GPU seen again starts the next round.
  std::set<std::string> in_round;
  std::int64_t day_offset = 0;
  std::optional<std::int64_t> previous;
  for (auto& row : rows) {
    if (r.rounds.empty() || in_round.contains(row.gpu)) {
      Snapshot snap;
      if (row.time) {
        std::int64_t t = *row.time + day_offset;
        if (!has_date && previous && t < *previous) {
          day_offset += 86'400'000'000'000;  // a time of day that went past midnight
          t += 86'400'000'000'000;
        }
        snap.time_unix_nanos = t;
        previous = t;
      } else {
        snap.time_unix_nanos =
            static_cast<std::int64_t>(r.rounds.size()) * static_cast<std::int64_t>(interval * 1e9);
      }
      snap.stats.interval_seconds = interval;
      r.rounds.push_back(std::move(snap));
      in_round.clear();
    }
    in_round.insert(row.gpu);
    row.sample.device = row.gpu;
    row.sample.time_unix_nanos = r.rounds.back().time_unix_nanos;
    r.rounds.back().devices.push_back(std::move(row.sample));
  }
  for (auto& round : r.rounds) {
    detail::sort_devices(round.devices);
  }
  // A time of day without a date is no moment: the offsets hold, the date does not.
  r.time_base = has_date ? TimeBase::kLocalUnknownZone : TimeBase::kNone;
  if (has_time && !has_date && !r.rounds.empty()) {
    const std::int64_t first = r.rounds.front().time_unix_nanos;
    for (auto& round : r.rounds) {
      round.time_unix_nanos -= first;
      for (auto& d : round.devices) {
        d.time_unix_nanos = round.time_unix_nanos;
      }
    }
  }
  return r;
}

}  // namespace acco::mon
