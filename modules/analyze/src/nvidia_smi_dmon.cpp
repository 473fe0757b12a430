// `nvidia-smi dmon` output -> Snapshots. dmon prints two '#' header lines (the column names,
// then their units), repeats them now and then, writes '-' for a reading it has not got, and
// puts no time in a row unless run with -o D / -o T / -o DT. The interval is in the command line
// (-d N, 1 s by default), which people often keep as the log's first line.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "acco/analyze/recorded_readers.hpp"
#include "acco/core/units.hpp"

#include "recorded_common.hpp"

namespace acco::analyze {
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

// The longest interval read, as --interval is bounded: rounds * interval stays in 64-bit
// nanoseconds.
constexpr double kMaxIntervalSeconds = 86'400;

struct DmonRow {
  std::size_t line = 0;
  std::optional<std::int64_t> time;
  std::string gpu;
  power::DeviceSample sample;
};

struct DmonHeader {
  std::vector<std::optional<DmonColumn>> columns;  // nullopt: not read
  std::vector<std::string> names;
  bool date = false;
  bool time = false;
};

bool names_line(const std::vector<std::string_view>& w) {
  return !w.empty() && (w.front() == "gpu" || w.front() == "Date" || w.front() == "Time");
}

// "# pwr sm mem": two or more of dmon's column names and nothing else, a names line that lost
// its gpu column.
bool gpu_less_names_line(const std::vector<std::string_view>& w) {
  return w.size() >= 2 && !names_line(w) &&
         std::all_of(w.begin(), w.end(), [](auto n) { return dmon_columns().contains(n); });
}

Result<DmonHeader> read_dmon_header(const std::vector<std::string_view>& w, const std::string& name,
                                    std::size_t number, std::vector<std::string>& notes) {
  DmonHeader h;
  for (const auto& n : w) {
    h.names.emplace_back(n);
    const auto it = dmon_columns().find(n);
    h.columns.push_back(it == dmon_columns().end() ? std::nullopt : std::optional(it->second));
    if (it == dmon_columns().end()) {
      detail::warn_once(notes, fmt::format("{}: dmon column {} is not read", name, n));
    }
    h.date = h.date || n == "Date";
    h.time = h.time || n == "Time";
  }
  if (std::find(h.names.begin(), h.names.end(), "gpu") == h.names.end()) {
    return line_error(name, number, "a dmon header without its gpu column");
  }
  return h;
}

std::optional<double> ratio(double x, power::DeviceSample& s) {
  if (x >= 0 && x <= 1) {
    return x;
  }
  ++s.dropped_readings;  // no utilization NVML gives
  return std::nullopt;
}

// One reading, already in base units, into the sample.
void apply_dmon(DmonField field, double x, power::DeviceSample& s) {
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
      s.utilization_ratio = ratio(x, s);
      break;
    case DmonField::kMemoryUtilization:
      s.memory_utilization_ratio = ratio(x, s);
      break;
    case DmonField::kMemoryClock:
      s.memory_clock_hertz = x;
      break;
    case DmonField::kGraphicsClock:
      s.sm_clock_hertz = x;  // the graphics clock, which the SM clock follows
      break;
    case DmonField::kPowerViolation:
      // The share of the interval the power cap held the clocks: most of it is a capped sample.
      s.clock_event_reasons =
          s.clock_event_reasons.value_or(0) | (x >= 0.5 ? power::clock_event::kSwPowerCap : 0);
      break;
    case DmonField::kThermalViolation:
      s.clock_event_reasons =
          s.clock_event_reasons.value_or(0) | (x > 0 ? power::clock_event::kSwThermalSlowdown : 0);
      break;
    case DmonField::kFramebuffer:
      s.memory_used_bytes = detail::whole_count(x);
      if (!s.memory_used_bytes) {
        ++s.dropped_readings;  // more bytes than 64 bits hold
      }
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

// Two digits at `at` of `text`; -1 when they are not.
int two_digits(std::string_view text, std::size_t at) {
  const auto v = units::parse_int(text.substr(at, 2));
  return text.size() >= at + 2 && v ? static_cast<int>(*v) : -1;
}

// dmon's "20261201" and "16:25:24" (either may be absent) -> Unix nanoseconds, read as UTC.
std::optional<std::int64_t> dmon_time(std::optional<std::string_view> date,
                                      std::optional<std::string_view> time) {
  int year = 1970;
  int month = 1;
  int day = 1;
  int hour = 0;
  int minute = 0;
  int second = 0;
  if (date) {
    const auto y = units::parse_int(date->substr(0, 4));
    if (date->size() != 8 || !y) {
      return std::nullopt;
    }
    year = static_cast<int>(*y);
    month = two_digits(*date, 4);
    day = two_digits(*date, 6);
  }
  if (time) {
    if (time->size() != 8 || (*time)[2] != ':' || (*time)[5] != ':') {
      return std::nullopt;
    }
    hour = two_digits(*time, 0);
    minute = two_digits(*time, 3);
    second = two_digits(*time, 6);
  }
  return detail::civil_unix_nanos(year, month, day, hour, minute, second);
}

Result<DmonRow> read_dmon_row(const std::vector<std::string_view>& cells, const DmonHeader& h,
                              const std::string& name, std::size_t number) {
  if (cells.size() != h.columns.size()) {
    return line_error(name, number,
                      fmt::format("expected {} columns as the dmon header names, got {}",
                                  h.columns.size(), cells.size()));
  }
  DmonRow row;
  row.sample.source = "nvidia-smi-dmon";
  std::optional<std::string_view> date;
  std::optional<std::string_view> time;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (!h.columns[i]) {
      continue;
    }
    const auto cell = cells[i];
    const auto field = h.columns[i]->field;
    if (field == DmonField::kDate || field == DmonField::kTime) {
      (field == DmonField::kDate ? date : time) = cell;
    } else if (field == DmonField::kGpu) {
      if (const auto gpu = units::parse_int(cell); !gpu || *gpu < 0) {
        return line_error(
            name, number,
            fmt::format("gpu: cannot read '{}' as a GPU index", units::excerpt(cell)));
      }
      row.gpu = std::string(cell);
    } else if (cell != "-" && cell != "N/A") {  // '-': dmon's "no reading"
      const auto v = units::parse_double(cell);
      if (!v) {
        return line_error(
            name, number,
            fmt::format("{}: cannot read '{}' as a number", h.names[i], units::excerpt(cell)));
      }
      // Violations are shares of the interval: pviol 0-100 %, tviol 0 or 1.
      if ((field == DmonField::kPowerViolation && !(*v >= 0 && *v <= 100)) ||
          (field == DmonField::kThermalViolation && *v != 0 && *v != 1)) {
        return line_error(
            name, number,
            fmt::format(
                "{}: cannot read '{}' as {}", h.names[i], units::excerpt(cell),
                field == DmonField::kPowerViolation ? "a percentage from 0 to 100" : "0 or 1"));
      }
      const double x = *v * h.columns[i]->scale;
      // NVML cannot give a negative reading, nor more than 10 kW on one GPU: dropped and counted
      // as the other readers do.
      if (!std::isfinite(x) || x < 0 || (field == DmonField::kPower && x > detail::kMaxGpuWatts)) {
        ++row.sample.dropped_readings;
        continue;
      }
      apply_dmon(field, x, row.sample);
    }
  }
  if (date || time) {
    row.time = dmon_time(date, time);
    if (!row.time) {
      return line_error(
          name, number,
          fmt::format("cannot read '{} {}' as dmon's date (YYYYMMDD) and time "
                      "(HH:MM:SS)",
                      units::excerpt(date.value_or("")), units::excerpt(time.value_or(""))));
    }
  }
  return row;
}

// The interval: the echoed command's, else --interval, else dmon's default 1 s.
double dmon_interval(std::optional<double> echoed, std::optional<double> flag, bool timed,
                     const std::string& name, std::vector<std::string>& notes) {
  if (echoed) {
    if (flag && *flag != *echoed) {
      notes.push_back(
          fmt::format("{}: the command line in the file says -d {}; --interval {} is "
                      "not used",
                      name, units::format_seconds(*echoed), units::format_seconds(*flag)));
    }
    return *echoed;
  }
  if (flag) {
    return *flag;
  }
  if (!timed) {
    notes.push_back(
        fmt::format("{}: no command line and no times in the file: rows taken 1 s "
                    "apart, dmon's default (give --interval)",
                    name));
  }
  return 1;
}

// Rows into rounds: a GPU seen again starts the next one.
Status dmon_rounds(std::vector<DmonRow>& rows, const DmonHeader& h, double interval,
                   const std::string& name, Recording& r) {
  std::set<std::string> in_round;
  std::int64_t day_offset = 0;
  std::optional<std::int64_t> previous;
  constexpr std::int64_t kDay = 86'400'000'000'000;
  constexpr std::int64_t kHalfDay = kDay / 2;
  for (auto& row : rows) {
    if (r.rounds.empty() || in_round.contains(row.gpu)) {
      Snapshot snap;
      if (row.time) {
        std::int64_t t = *row.time + day_offset;
        if (!h.date && previous && t < *previous) {
          if (*previous - t <= kHalfDay) {
            return line_error(
                name, row.line,
                fmt::format("times go backwards ({} back; only a step back of more than 12 h "
                            "is taken as midnight passing)",
                            units::format_seconds(static_cast<double>(*previous - t) / 1e9)));
          }
          day_offset += kDay;  // a time of day that went past midnight (23:59:59 -> 00:00:00)
          t += kDay;
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
    r.rounds.back().devices.push_back(std::move(row.sample));
  }
  // A time of day without a date is no moment: the offsets hold, the date does not.
  const std::int64_t first =
      h.time && !h.date && !r.rounds.empty() ? r.rounds.front().time_unix_nanos : 0;
  for (auto& round : r.rounds) {
    round.time_unix_nanos -= first;
    detail::sort_devices(round.devices);
    for (auto& d : round.devices) {
      d.time_unix_nanos = round.time_unix_nanos;
    }
  }
  r.time_base = h.date ? TimeBase::kLocalUnknownZone : TimeBase::kNone;
  return {};
}

}  // namespace

bool looks_like_nvidia_smi_dmon(std::string_view text) {
  std::size_t start = 0;
  for (int lines = 0; lines < 5 && start < text.size(); ++lines) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const auto line = units::trim(text.substr(start, end - start));
    start = end + 1;
    if (line.find("nvidia-smi dmon") != std::string_view::npos ||
        (line.starts_with('#') &&
         (names_line(words(line.substr(1))) || gpu_less_names_line(words(line.substr(1)))))) {
      return true;
    }
  }
  return false;
}

Result<Recording> read_nvidia_smi_dmon(std::string_view text, const std::string& name,
                                       std::optional<double> interval_seconds) {
  Recording r;
  r.format = "nvidia-smi-dmon";
  std::optional<double> echoed;
  std::optional<DmonHeader> header;
  std::vector<DmonRow> rows;
  std::size_t number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const auto line = units::trim(text.substr(start, end - start));
    start = end + 1;
    ++number;
    if (line.empty()) {
      continue;
    }
    if (line.find("nvidia-smi") != std::string_view::npos) {
      echoed = echo_interval(words(line));
      if (*echoed > kMaxIntervalSeconds) {
        return line_error(name, number,
                          fmt::format("the command's interval -d {} s is more than a day (at "
                                      "most 1d, as --interval)",
                                      *echoed));
      }
    } else if (line.starts_with('#')) {
      // The names line; the units line and repeated headers say nothing new.
      const auto w = words(line.substr(1));
      if (names_line(w) && !header) {
        ACCO_ASSIGN_OR_RETURN(header, read_dmon_header(w, name, number, r.notes));
      } else if (!header && gpu_less_names_line(w)) {
        return line_error(name, number,
                          "a dmon header without its gpu column (expected '# gpu ...'; dmon "
                          "prints it with every -s)");
      }
    } else if (!header) {
      return line_error(name, number,
                        "expected nvidia-smi dmon's '# gpu ...' header line before the first "
                        "row (the columns are unknown without it)");
    } else {
      ACCO_ASSIGN_OR_RETURN(DmonRow row, read_dmon_row(words(line), *header, name, number));
      row.line = number;
      rows.push_back(std::move(row));
    }
  }
  if (!header) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: no nvidia-smi dmon header ('# gpu ...') and no rows", name));
  }
  if (rows.empty()) {
    return fail(Errc::kInvalidArgument, fmt::format("{}: the file has a header and no rows", name));
  }
  const double interval =
      dmon_interval(echoed, interval_seconds, header->date || header->time, name, r.notes);
  ACCO_RETURN_IF_ERROR(dmon_rounds(rows, *header, interval, name, r));
  return r;
}

}  // namespace acco::analyze
