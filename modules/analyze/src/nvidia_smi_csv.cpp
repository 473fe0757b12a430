// nvidia-smi --query-gpu=... --format=csv logs -> Snapshots. Columns are looked up by the names
// nvidia-smi prints in its header (which are sometimes not the names it was asked for:
// clocks.sm prints as clocks.current.sm, clocks_throttle_reasons.* as clocks_event_reasons.* on
// drivers from 535 on), units by the header's "[W]" or the cell's " W".
#include <algorithm>
#include <chrono>
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
#include <fmt/ranges.h>

#include "acco/analyze/recorded_readers.hpp"
#include "acco/core/stats.hpp"
#include "acco/core/units.hpp"

#include "recorded_common.hpp"

namespace acco::analyze {
namespace {

using detail::line_error;

enum class Field {
  kTimestamp,
  kIndex,
  kName,
  kPciBusId,
  kUuid,
  kSerial,
  kTemperatureGpu,
  kTemperatureMemory,
  kThermalMargin,
  kPowerDraw,
  kPowerDrawAverage,
  kPowerDrawInstant,
  kPowerLimit,
  kEnforcedPowerLimit,
  kDefaultPowerLimit,
  kMinPowerLimit,
  kMaxPowerLimit,
  kSmClock,
  kMemoryClock,
  kSmClockMax,
  kMemoryClockMax,
  kUtilizationGpu,
  kUtilizationMemory,
  kMemoryUsed,
  kMemoryTotal,
  kMemoryFree,
  kPstate,
  kPcieGenCurrent,
  kPcieGenMax,
  kPcieWidthCurrent,
  kPcieWidthMax,
  kClockEventMask,
  kClockEventBit,
  kKnownUnread,  // a column nvidia-smi prints that acco has no field for: not warned about
};

struct Column {
  Field field = Field::kKnownUnread;
  std::uint64_t bit = 0;  // kClockEventBit
  std::string unit;       // from the header, "" when it has none
  std::string name;
};

const std::map<std::string_view, Field>& field_names() {
  static const std::map<std::string_view, Field> names = {
      {"timestamp", Field::kTimestamp},
      {"index", Field::kIndex},
      {"name", Field::kName},
      {"gpu_name", Field::kName},
      {"pci.bus_id", Field::kPciBusId},
      {"gpu_bus_id", Field::kPciBusId},
      {"uuid", Field::kUuid},
      {"gpu_uuid", Field::kUuid},
      {"serial", Field::kSerial},
      {"gpu_serial", Field::kSerial},
      {"temperature.gpu", Field::kTemperatureGpu},
      {"temperature.memory", Field::kTemperatureMemory},
      {"temperature.gpu.tlimit", Field::kThermalMargin},
      {"power.draw", Field::kPowerDraw},
      {"power.draw.average", Field::kPowerDrawAverage},
      {"power.draw.instant", Field::kPowerDrawInstant},
      {"power.limit", Field::kPowerLimit},
      {"enforced.power.limit", Field::kEnforcedPowerLimit},
      {"power.default_limit", Field::kDefaultPowerLimit},
      {"power.min_limit", Field::kMinPowerLimit},
      {"power.max_limit", Field::kMaxPowerLimit},
      {"clocks.sm", Field::kSmClock},
      {"clocks.current.sm", Field::kSmClock},
      {"clocks.mem", Field::kMemoryClock},
      {"clocks.current.memory", Field::kMemoryClock},
      {"clocks.max.sm", Field::kSmClockMax},
      {"clocks.max.mem", Field::kMemoryClockMax},
      {"clocks.max.memory", Field::kMemoryClockMax},
      {"utilization.gpu", Field::kUtilizationGpu},
      {"utilization.memory", Field::kUtilizationMemory},
      {"memory.used", Field::kMemoryUsed},
      {"memory.total", Field::kMemoryTotal},
      {"memory.free", Field::kMemoryFree},
      {"pstate", Field::kPstate},
      {"pcie.link.gen.current", Field::kPcieGenCurrent},
      {"pcie.link.gen.gpucurrent", Field::kPcieGenCurrent},
      {"pcie.link.gen.max", Field::kPcieGenMax},
      {"pcie.link.gen.gpumax", Field::kPcieGenMax},
      {"pcie.link.width.current", Field::kPcieWidthCurrent},
      {"pcie.link.width.max", Field::kPcieWidthMax},
  };
  return names;
}

// The suffixes of clocks_event_reasons.* / clocks_throttle_reasons.* and their NVML bits.
const std::map<std::string_view, std::uint64_t>& event_bits() {
  namespace ce = power::clock_event;
  static const std::map<std::string_view, std::uint64_t> bits = {
      {"gpu_idle", ce::kGpuIdle},
      {"applications_clocks_setting", ce::kApplicationsClocksSetting},
      {"sw_power_cap", ce::kSwPowerCap},
      {"hw_slowdown", ce::kHwSlowdown},
      {"sync_boost", ce::kSyncBoost},
      {"sw_thermal_slowdown", ce::kSwThermalSlowdown},
      {"hw_thermal_slowdown", ce::kHwThermalSlowdown},
      {"hw_power_brake_slowdown", ce::kHwPowerBrakeSlowdown},
      {"display_clock_setting", ce::kDisplayClockSetting},
  };
  return bits;
}

std::optional<Column> lookup(const std::string& name) {
  Column c;
  c.name = name;
  if (const auto it = field_names().find(name); it != field_names().end()) {
    c.field = it->second;
    return c;
  }
  for (const std::string_view prefix : {"clocks_event_reasons.", "clocks_throttle_reasons."}) {
    if (name.starts_with(prefix)) {
      const std::string_view suffix = std::string_view(name).substr(prefix.size());
      if (suffix == "active") {
        c.field = Field::kClockEventMask;
        return c;
      }
      if (const auto it = event_bits().find(suffix); it != event_bits().end()) {
        c.field = Field::kClockEventBit;
        c.bit = it->second;
        return c;
      }
      if (suffix == "supported") {
        return c;  // kKnownUnread
      }
    }
  }
  return std::nullopt;
}

// One CSV line as nvidia-smi writes it (", " between cells), with RFC 4180 quoting as a
// spreadsheet re-saves it. nullopt for an unterminated quote or text after a closing quote.
std::optional<std::vector<std::string>> split_cells(std::string_view line) {
  std::vector<std::string> cells;
  std::size_t i = 0;
  while (true) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) {
      ++i;
    }
    std::string cell;
    if (i < line.size() && line[i] == '"') {
      ++i;
      bool closed = false;
      while (i < line.size()) {
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            cell.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          closed = true;
          break;
        }
        cell.push_back(line[i++]);
      }
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) {
        ++i;
      }
      if (!closed || (i < line.size() && line[i] != ',')) {
        return std::nullopt;
      }
    } else {
      const std::size_t end = std::min(line.find(',', i), line.size());
      cell = std::string(units::trim(line.substr(i, end - i)));
      i = end;
    }
    cells.push_back(std::move(cell));
    if (i >= line.size()) {
      return cells;
    }
    ++i;  // the comma
  }
}

bool is_header_name(std::string_view name) {
  if (name.empty() || name.front() < 'a' || name.front() > 'z') {
    return false;
  }
  return name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_.") == std::string::npos;
}

// "power.draw [W]" -> {"power.draw", "W"}; nullopt when it is not shaped like nvidia-smi's.
std::optional<std::pair<std::string, std::string>> header_cell(std::string_view cell) {
  std::string_view name = cell;
  std::string_view unit;
  if (const auto open = cell.find(" ["); open != std::string_view::npos) {
    if (!cell.ends_with(']')) {
      return std::nullopt;
    }
    name = cell.substr(0, open);
    unit = cell.substr(open + 2, cell.size() - open - 3);
  }
  if (!is_header_name(name)) {
    return std::nullopt;
  }
  return std::pair{std::string(name), std::string(unit)};
}

// A cell that says "no reading": nvidia-smi brackets its reasons ("[N/A]", "[Not Supported]",
// "[Unknown Error]", "[Insufficient Permissions]"); some versions print N/A bare.
bool not_available(std::string_view cell) {
  return cell.empty() || (cell.front() == '[' && cell.back() == ']') || cell == "N/A" ||
         cell == "Not Supported" || cell == "Unknown Error";
}

bool says_lost(std::string_view cell) {
  return cell == "[GPU is lost]" || cell == "GPU is lost";
}

enum class Quantity {
  kCelsius,
  kWatts,
  kBytes,
  kHertz,
  kPercent
};

const char* quantity_name(Quantity q) {
  switch (q) {
    case Quantity::kCelsius:
      return "degrees";
    case Quantity::kWatts:
      return "watts";
    case Quantity::kBytes:
      return "a memory size";
    case Quantity::kHertz:
      return "a clock";
    case Quantity::kPercent:
      return "a percentage";
  }
  return "";
}

// The factor to base units of `unit` for `q`; nullopt when the unit is not one of q's.
// nvidia-smi's defaults (no unit in header or cell) are its own: C, W, MiB, MHz, %.
std::optional<double> scale_of(Quantity q, std::string_view unit) {
  static const std::map<std::pair<Quantity, std::string_view>, double> scales = {
      {{Quantity::kCelsius, ""}, 1},
      {{Quantity::kCelsius, "C"}, 1},
      {{Quantity::kWatts, ""}, 1},
      {{Quantity::kWatts, "W"}, 1},
      {{Quantity::kWatts, "mW"}, 1e-3},
      {{Quantity::kWatts, "kW"}, 1e3},
      {{Quantity::kBytes, ""}, 1048576.0},
      {{Quantity::kBytes, "B"}, 1},
      {{Quantity::kBytes, "KiB"}, 1024.0},
      {{Quantity::kBytes, "MiB"}, 1048576.0},
      {{Quantity::kBytes, "GiB"}, 1073741824.0},
      {{Quantity::kHertz, ""}, 1e6},
      {{Quantity::kHertz, "Hz"}, 1},
      {{Quantity::kHertz, "kHz"}, 1e3},
      {{Quantity::kHertz, "MHz"}, 1e6},
      {{Quantity::kHertz, "GHz"}, 1e9},
      {{Quantity::kPercent, ""}, 0.01},
      {{Quantity::kPercent, "%"}, 0.01},
  };
  const auto it = scales.find({q, unit});
  return it == scales.end() ? std::nullopt : std::optional<double>(it->second);
}

std::string quote_cell(std::string_view cell) {
  return "'" + units::excerpt(cell) + "'";
}

// "2026/12/01 16:25:24.123" (nvidia-smi's local time, read as UTC) -> unix nanoseconds.
std::optional<std::int64_t> parse_timestamp(std::string_view text) {
  std::size_t i = 0;
  const auto digits = [&](std::size_t n) -> std::optional<int> {
    if (i + n > text.size()) {
      return std::nullopt;
    }
    int v = 0;
    const auto [ptr, ec] = std::from_chars(text.data() + i, text.data() + i + n, v);
    if (ec != std::errc() || ptr != text.data() + i + n) {
      return std::nullopt;
    }
    i += n;
    return v;
  };
  const auto sep = [&](std::string_view allowed) {
    if (i < text.size() && allowed.find(text[i]) != std::string_view::npos) {
      ++i;
      return true;
    }
    return false;
  };
  const auto year = digits(4);
  const bool s1 = sep("/-");
  const auto month = digits(2);
  const bool s2 = sep("/-");
  const auto day = digits(2);
  const bool s3 = sep(" T");
  const auto hour = digits(2);
  const bool s4 = sep(":");
  const auto minute = digits(2);
  const bool s5 = sep(":");
  const auto second = digits(2);
  if (!year || !month || !day || !hour || !minute || !second || !s1 || !s2 || !s3 || !s4 || !s5 ||
      *hour > 23 || *minute > 59 || *second > 60 || *year < 1970 || *year > 2200) {
    return std::nullopt;  // years beyond 2262 overflow the nanoseconds (2999 read as 1830)
  }
  std::int64_t nanos = 0;
  if (sep(".")) {
    const std::size_t start = i;
    std::int64_t scale = 100'000'000;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      nanos += (text[i] - '0') * scale;
      scale /= 10;
      ++i;
    }
    if (i == start || i - start > 9) {
      return std::nullopt;
    }
  }
  if (i != text.size()) {
    return std::nullopt;
  }
  const std::chrono::year_month_day date{std::chrono::year(*year),
                                         std::chrono::month(static_cast<unsigned>(*month)),
                                         std::chrono::day(static_cast<unsigned>(*day))};
  if (!date.ok()) {
    return std::nullopt;
  }
  const auto days = std::chrono::sys_days(date).time_since_epoch().count();
  const std::int64_t seconds =
      static_cast<std::int64_t>(days) * 86400 + *hour * 3600LL + *minute * 60LL + *second;
  return seconds * 1'000'000'000 + nanos;
}

// The row's cells as read, before they are placed in a DeviceSample.
struct Row {
  std::optional<std::int64_t> time;
  std::string index;
  std::string uuid;
  std::string pci_bus_id;
  std::string traits;  // name, serial and memory.total as written: which GPU, without an id
  power::DeviceSample sample;
  std::optional<double> power_draw;
  std::optional<double> power_average;
  std::optional<double> power_instant;
  std::optional<std::uint64_t> event_mask;
  std::optional<std::uint64_t> event_bits;
};

class RowReader {
 public:
  RowReader(const std::string& file, std::size_t line) : file_(file), line_(line) {}

  Status read(const Column& column, const std::string& cell, Row& row) {
    auto& s = row.sample;
    if (says_lost(cell)) {
      s.lost = true;
      return {};
    }
    switch (column.field) {
      case Field::kTimestamp: {
        row.time = parse_timestamp(cell);
        if (!row.time) {
          return bad(column, cell, "a timestamp like 2026/12/01 16:25:24.123");
        }
        return {};
      }
      case Field::kIndex:
        if (!units::parse_int(cell)) {
          return bad(column, cell, "a GPU index");
        }
        row.index = cell;
        return {};
      case Field::kName:
        s.model = not_available(cell) ? "" : detail::stored_text(cell);
        row.traits += cell + '\x1f';
        return {};
      case Field::kSerial:
        row.traits += cell + '\x1f';
        return {};
      case Field::kPciBusId:
        row.pci_bus_id = not_available(cell) ? "" : detail::sysfs_pci_bus_id(cell);
        return {};
      case Field::kUuid:
        row.uuid = not_available(cell) ? "" : detail::stored_text(cell);
        return {};
      case Field::kTemperatureGpu:
        return quantity(column, cell, Quantity::kCelsius, s.temperature_gpu_celsius, s);
      case Field::kTemperatureMemory:
        return quantity(column, cell, Quantity::kCelsius, s.temperature_memory_celsius, s);
      case Field::kThermalMargin:
        return quantity(column, cell, Quantity::kCelsius, s.thermal_margin_celsius, s, true);
      case Field::kPowerDraw:
        return quantity(column, cell, Quantity::kWatts, row.power_draw, s);
      case Field::kPowerDrawAverage:
        return quantity(column, cell, Quantity::kWatts, row.power_average, s);
      case Field::kPowerDrawInstant:
        return quantity(column, cell, Quantity::kWatts, row.power_instant, s);
      case Field::kPowerLimit:
        return limit(column, cell, s.power_limit_requested_watts, s);
      case Field::kEnforcedPowerLimit:
        return limit(column, cell, s.power_limit_enforced_watts, s);
      case Field::kDefaultPowerLimit:
        return limit(column, cell, s.power_limit_default_watts, s);
      case Field::kMinPowerLimit:
        return limit(column, cell, s.power_limit_min_watts, s);
      case Field::kMaxPowerLimit:
        return limit(column, cell, s.power_limit_max_watts, s);
      case Field::kSmClock:
        return quantity(column, cell, Quantity::kHertz, s.sm_clock_hertz, s);
      case Field::kMemoryClock:
        return quantity(column, cell, Quantity::kHertz, s.memory_clock_hertz, s);
      case Field::kSmClockMax:
        return quantity(column, cell, Quantity::kHertz, s.sm_clock_max_hertz, s);
      case Field::kMemoryClockMax:
        return quantity(column, cell, Quantity::kHertz, s.memory_clock_max_hertz, s);
      case Field::kUtilizationGpu:
        return percent(column, cell, s.utilization_ratio, s);
      case Field::kUtilizationMemory:
        return percent(column, cell, s.memory_utilization_ratio, s);
      case Field::kMemoryUsed:
        return bytes(column, cell, s.memory_used_bytes, s);
      case Field::kMemoryTotal:
        row.traits += cell + '\x1f';
        return bytes(column, cell, s.memory_total_bytes, s);
      case Field::kMemoryFree:
        return bytes(column, cell, s.memory_free_bytes, s);
      case Field::kPstate:
        return pstate(column, cell, s.pstate);
      case Field::kPcieGenCurrent:
        return integer(column, cell, s.pcie_gen_current);
      case Field::kPcieGenMax:
        return integer(column, cell, s.pcie_gen_max);
      case Field::kPcieWidthCurrent:
        return integer(column, cell, s.pcie_width_current);
      case Field::kPcieWidthMax:
        return integer(column, cell, s.pcie_width_max);
      case Field::kClockEventMask:
        return mask(column, cell, row.event_mask);
      case Field::kClockEventBit:
        return event_bit(column, cell, row.event_bits);
      case Field::kKnownUnread:
        return {};
    }
    return {};
  }

 private:
  Status bad(const Column& column, const std::string& cell, const char* expected) const {
    return line_error(
        file_, line_,
        fmt::format("{}: cannot read {} as {}", column.name, quote_cell(cell), expected));
  }

  // A number and its unit: from the cell ("85.32 W") or else the header ("[W]").
  Status quantity(const Column& column, const std::string& cell, Quantity q,
                  std::optional<double>& out, power::DeviceSample& s, bool signed_ok = false) {
    if (not_available(cell)) {
      return {};
    }
    std::string_view number = cell;
    std::string_view unit = column.unit;
    if (const auto space = cell.find(' '); space != std::string::npos) {
      number = std::string_view(cell).substr(0, space);
      unit = units::trim(std::string_view(cell).substr(space + 1));
    } else if (q == Quantity::kPercent && cell.ends_with('%')) {
      number = std::string_view(cell).substr(0, cell.size() - 1);
      unit = "%";
    }
    const auto value = units::parse_double(number);
    const auto scale = scale_of(q, unit);
    if (!value || !scale) {
      return bad(column, cell, quantity_name(q));
    }
    const double v = *value * *scale;
    // NVML cannot give these; a value out of range is dropped and counted, as the sensor does.
    if (!std::isfinite(v) || (!signed_ok && v < 0) || (q == Quantity::kPercent && v > 1) ||
        (q == Quantity::kWatts && v > detail::kMaxGpuWatts)) {
      ++s.dropped_readings;
      return {};
    }
    out = v;
    return {};
  }

  Status percent(const Column& column, const std::string& cell, std::optional<double>& out,
                 power::DeviceSample& s) {
    return quantity(column, cell, Quantity::kPercent, out, s);
  }

  Status bytes(const Column& column, const std::string& cell, std::optional<std::uint64_t>& out,
               power::DeviceSample& s) {
    std::optional<double> v;
    ACCO_RETURN_IF_ERROR(quantity(column, cell, Quantity::kBytes, v, s));
    if (v) {
      out = detail::whole_count(*v);
      if (!out) {
        ++s.dropped_readings;  // more bytes than 64 bits hold
      }
    }
    return {};
  }

  // A power limit of 0 W is no limit set (a GPU or a driver that reports none): absent.
  Status limit(const Column& column, const std::string& cell, std::optional<double>& out,
               power::DeviceSample& s) {
    ACCO_RETURN_IF_ERROR(quantity(column, cell, Quantity::kWatts, out, s));
    if (out && *out <= 0) {
      out.reset();
    }
    return {};
  }

  Status integer(const Column& column, const std::string& cell, std::optional<int>& out) const {
    if (not_available(cell)) {
      return {};
    }
    const auto v = units::parse_int(cell);
    if (!v || *v < 0 || *v > 1024) {
      return bad(column, cell, "a small integer");
    }
    out = static_cast<int>(*v);
    return {};
  }

  Status pstate(const Column& column, const std::string& cell, std::optional<int>& out) const {
    if (not_available(cell) || cell == "Unknown") {
      return {};
    }
    if (!cell.starts_with('P')) {
      return bad(column, cell, "a performance state P0-P15");
    }
    const auto v = units::parse_int(std::string_view(cell).substr(1));
    if (!v || *v < 0 || *v > 15) {
      return bad(column, cell, "a performance state P0-P15");
    }
    out = static_cast<int>(*v);
    return {};
  }

  Status mask(const Column& column, const std::string& cell,
              std::optional<std::uint64_t>& out) const {
    if (not_available(cell)) {
      return {};
    }
    const auto v = units::parse_int(cell, 0);
    if (!v || *v < 0) {
      return bad(column, cell, "a bitmask like 0x0000000000000004");
    }
    out = static_cast<std::uint64_t>(*v);
    return {};
  }

  Status event_bit(const Column& column, const std::string& cell,
                   std::optional<std::uint64_t>& out) const {
    if (not_available(cell)) {
      return {};
    }
    if (cell == "Active") {
      out = out.value_or(0) | column.bit;
    } else if (cell == "Not Active") {
      out = out.value_or(0);
    } else {
      return bad(column, cell, "Active or Not Active");
    }
    return {};
  }

  const std::string& file_;
  std::size_t line_;
};

struct Header {
  std::vector<std::optional<Column>> columns;  // nullopt: not read
  bool timestamp = false;
  bool index = false;
  bool uuid = false;
  bool pci = false;
  std::vector<std::string> traits;  // the name, serial and memory.total columns present
  std::string text;
};

Result<Header> read_header(std::string_view line, const std::string& file, std::size_t number,
                           std::vector<std::string>& warnings) {
  const auto cells = split_cells(line);
  const auto not_header = [&](const std::string& why) {
    return line_error(
        file, number,
        fmt::format("not an nvidia-smi --format=csv header ({}); logs written with noheader "
                    "cannot be read because their columns are unknown",
                    why));
  };
  if (!cells) {
    return not_header("unbalanced quotes");
  }
  Header h;
  h.text = std::string(units::trim(line));
  bool any_known = false;
  for (const auto& cell : *cells) {
    const auto parsed = header_cell(cell);
    if (!parsed) {
      return not_header(fmt::format("{} is not a query field name", quote_cell(cell)));
    }
    auto column = lookup(parsed->first);
    if (!column) {
      detail::warn_once(warnings, fmt::format("{}: column {} is not read", file, parsed->first));
      h.columns.emplace_back();
      continue;
    }
    column->unit = parsed->second;
    any_known = true;
    h.timestamp = h.timestamp || column->field == Field::kTimestamp;
    h.index = h.index || column->field == Field::kIndex;
    h.uuid = h.uuid || column->field == Field::kUuid;
    h.pci = h.pci || column->field == Field::kPciBusId;
    if (column->field == Field::kName || column->field == Field::kSerial ||
        column->field == Field::kMemoryTotal) {
      h.traits.push_back(parsed->first);
    }
    h.columns.push_back(std::move(column));
  }
  if (!any_known) {
    return not_header("no column acco reads");
  }
  if (!h.timestamp && !h.index && !h.uuid && !h.pci && h.traits.empty()) {
    return line_error(file, number,
                      "needs a timestamp, index, uuid, pci.bus_id, name, serial or memory.total "
                      "column to tell the rounds and GPUs apart");
  }
  return h;
}

void finish(Row& row) {
  auto& s = row.sample;
  // power.draw is what NVML's power usage call returns; .average and .instant split it on
  // drivers from 535 on, and a log may carry only one of them.
  s.power_watts = row.power_draw      ? row.power_draw
                  : row.power_average ? row.power_average
                                      : row.power_instant;
  s.clock_event_reasons = row.event_mask ? row.event_mask : row.event_bits;
  s.uuid = row.uuid;
  s.pci_bus_id = row.pci_bus_id;
  s.source = "nvidia-smi";
}

// The same round within this much of its first row's time: nvidia-smi may stamp each GPU's
// row as it reads that GPU.
constexpr std::int64_t kRoundToleranceNanos = 500'000'000;

Result<Row> read_row(std::string_view line, const Header& header, const std::string& file,
                     std::size_t number) {
  const auto cells = split_cells(line);
  if (!cells) {
    return line_error(file, number, "unbalanced quotes");
  }
  if (cells->size() != header.columns.size()) {
    return line_error(
        file, number,
        fmt::format("expected {} cells, got {}", header.columns.size(), cells->size()));
  }
  Row row;
  RowReader reader(file, number);
  for (std::size_t i = 0; i < cells->size(); ++i) {
    if (header.columns[i]) {
      ACCO_RETURN_IF_ERROR(reader.read(*header.columns[i], (*cells)[i], row));
    }
  }
  finish(row);
  return row;
}

// How rows are told apart as GPUs: by an id column, by the identity columns when they differ
// between rows (two GPUs of one log, alternating), else by timestamps.
enum class Identity {
  kIndex,
  kUuid,
  kPci,
  kTraits,
  kTimestamps,
};

Identity identity_of(const Header& header, const std::vector<Row>& rows) {
  if (header.index) {
    return Identity::kIndex;
  }
  if (header.uuid) {
    return Identity::kUuid;
  }
  if (header.pci) {
    return Identity::kPci;
  }
  if (!header.traits.empty()) {
    std::set<std::string> seen;
    for (const auto& row : rows) {
      seen.insert(row.traits);
    }
    // One set of traits for every row: one GPU, or identical GPUs that only the timestamps can
    // tell apart.
    if (seen.size() > 1 || !header.timestamp) {
      return Identity::kTraits;
    }
  }
  return Identity::kTimestamps;
}

const std::string& identity_key(Identity identity, const Row& row) {
  switch (identity) {
    case Identity::kIndex:
      return row.index;
    case Identity::kUuid:
      return row.uuid;
    case Identity::kPci:
      return row.pci_bus_id;
    case Identity::kTraits:
    case Identity::kTimestamps:
      break;
  }
  return row.traits;
}

// Rows into rounds by an identity: a GPU seen again, or a timestamp away from the round's,
// starts the next round.
std::vector<Snapshot> rounds_by_identity(Identity identity, std::vector<Row>& rows) {
  std::vector<Snapshot> rounds;
  std::set<std::string> in_round;
  std::map<std::string, int> ordinal;  // identity -> device number, without an index column
  for (auto& row : rows) {
    const std::string& key = identity_key(identity, row);
    bool new_round = rounds.empty() || (!key.empty() && in_round.contains(key));
    if (!new_round && row.time) {
      const std::int64_t first = rounds.back().time_unix_nanos;
      new_round = *row.time < first || *row.time - first > kRoundToleranceNanos;
    }
    if (new_round) {
      Snapshot s;
      s.time_unix_nanos =
          row.time.value_or(static_cast<std::int64_t>(rounds.size()) * 1'000'000'000);
      rounds.push_back(std::move(s));
      in_round.clear();
    }
    auto& round = rounds.back();
    if (!key.empty()) {
      in_round.insert(key);
    }
    if (identity == Identity::kIndex) {
      row.sample.device = row.index;
    } else if (!key.empty()) {
      const int next = static_cast<int>(ordinal.size());
      row.sample.device = std::to_string(ordinal.emplace(key, next).first->second);
    } else {
      row.sample.device = std::to_string(round.devices.size());
    }
    row.sample.time_unix_nanos = row.time.value_or(round.time_unix_nanos);
    round.devices.push_back(std::move(row.sample));
  }
  return rounds;
}

// Rows with no identity: the rows sharing one timestamp are one round's GPUs in the order
// nvidia-smi prints them (by index); a log whose timestamps strictly increase is one GPU, and so
// is one where most timestamps are a single row's (a fast -lms log whose stamps, in whole
// milliseconds, now and then coincide).
std::vector<Snapshot> rounds_by_timestamp(std::vector<Row>& rows) {
  std::size_t single = 0;
  std::size_t groups = 0;
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t j = i + 1;
    while (j < rows.size() && rows[j].time == rows[i].time) {
      ++j;
    }
    single += j - i == 1 ? 1 : 0;
    ++groups;
    i = j;
  }
  const bool one_gpu = 2 * single > groups;
  std::vector<Snapshot> rounds;
  for (auto& row : rows) {
    const std::int64_t t = row.time.value_or(0);
    if (rounds.empty() || rounds.back().time_unix_nanos != t || one_gpu) {
      Snapshot s;
      s.time_unix_nanos = t;
      rounds.push_back(std::move(s));
    }
    auto& round = rounds.back();
    row.sample.device = std::to_string(round.devices.size());
    row.sample.time_unix_nanos = t;
    round.devices.push_back(std::move(row.sample));
  }
  return rounds;
}

std::string identity_note(Identity identity, const Header& header,
                          const std::vector<Snapshot>& rounds) {
  std::set<std::string> devices;
  std::size_t most = 0;
  for (const auto& r : rounds) {
    most = std::max(most, r.devices.size());
    for (const auto& d : r.devices) {
      devices.insert(d.device);
    }
  }
  const std::size_t n = devices.size();
  switch (identity) {
    case Identity::kIndex:
      return fmt::format("{} GPU(s) told apart by the index column", n);
    case Identity::kUuid:
      return fmt::format(
          "{} GPU(s) told apart by the uuid column (numbered in order of first "
          "appearance)",
          n);
    case Identity::kPci:
      return fmt::format(
          "{} GPU(s) told apart by the pci.bus_id column (numbered in order of "
          "first appearance)",
          n);
    case Identity::kTraits:
      return fmt::format(
          "{} GPU(s) told apart by {} (no index, uuid or pci.bus_id column; "
          "numbered in order of first appearance)",
          n, fmt::join(header.traits, ", "));
    case Identity::kTimestamps:
      break;
  }
  if (most <= 1) {
    // In file order (not sorted yet): say whether the timestamps do increase.
    std::size_t back = 0;
    for (std::size_t i = 1; i < rounds.size(); ++i) {
      back += rounds[i].time_unix_nanos < rounds[i - 1].time_unix_nanos ? 1 : 0;
    }
    if (back > 0) {
      return fmt::format(
          "1 GPU: no index, uuid or pci.bus_id column and the rows' timestamps differ, so "
          "every row is a new reading of one GPU; the timestamps go backwards {} time(s), "
          "the rows are taken in time order",
          back);
    }
    return "1 GPU: no index, uuid or pci.bus_id column and the timestamps increase row by row, "
           "so every row is a new reading of one GPU";
  }
  return fmt::format(
      "{} GPU(s) told apart by timestamps: no index, uuid or pci.bus_id column, "
      "so the rows sharing a timestamp are one round's GPUs, numbered in the "
      "order printed",
      n);
}

// The sampling interval, the median gap between rounds (nvidia-smi -l / -lms is not in the
// file); 1 s when the file has no timestamps.
double median_interval_seconds(const std::vector<Snapshot>& rounds) {
  std::vector<double> gaps;
  for (std::size_t i = 1; i < rounds.size(); ++i) {
    if (rounds[i].time_unix_nanos > rounds[i - 1].time_unix_nanos) {
      gaps.push_back(
          static_cast<double>(rounds[i].time_unix_nanos - rounds[i - 1].time_unix_nanos));
    }
  }
  if (gaps.empty()) {
    return 1.0;
  }
  return core::stats::median_in_place(gaps) / 1e9;
}

}  // namespace

Result<std::vector<Snapshot>> read_nvidia_smi_csv(std::string_view text,
                                                  const std::string& name_for_errors,
                                                  std::vector<std::string>& warnings) {
  if (text.starts_with("\xEF\xBB\xBF")) {
    text.remove_prefix(3);
  }
  std::optional<Header> header;
  std::vector<Row> rows;
  ACCO_RETURN_IF_ERROR(
      detail::for_each_line(text, [&](std::string_view line, std::size_t number) -> Status {
        if (units::trim(line).empty()) {
          return {};
        }
        if (!header) {
          ACCO_ASSIGN_OR_RETURN(header, read_header(line, name_for_errors, number, warnings));
        } else if (units::trim(line) != header->text) {  // appended logs repeat the header
          ACCO_ASSIGN_OR_RETURN(Row row, read_row(line, *header, name_for_errors, number));
          rows.push_back(std::move(row));
        }
        return {};
      }));
  if (!header) {
    return fail(
        Errc::kInvalidArgument,
        fmt::format("{}: empty; expected an nvidia-smi --format=csv header", name_for_errors));
  }
  if (rows.empty()) {  // as an empty file: nothing to analyze, whatever the time range
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: the file has a header and no rows", name_for_errors));
  }
  const Identity identity = identity_of(*header, rows);
  std::vector<Snapshot> rounds = identity == Identity::kTimestamps
                                     ? rounds_by_timestamp(rows)
                                     : rounds_by_identity(identity, rows);
  if (!rounds.empty()) {
    detail::warn_once(
        warnings, fmt::format("{}: {}", name_for_errors, identity_note(identity, *header, rounds)));
  }
  if (!header->timestamp && !rounds.empty()) {
    detail::warn_once(warnings, fmt::format("{}: no timestamp column: rounds counted 1 s apart",
                                            name_for_errors));
  }
  const double interval = header->timestamp ? median_interval_seconds(rounds) : 1.0;
  for (auto& round : rounds) {
    detail::sort_devices(round.devices);
    round.stats.interval_seconds = interval;
  }
  detail::sort_by_time(rounds);
  return rounds;
}

Result<std::vector<Snapshot>> read_nvidia_smi_csv(std::string_view text,
                                                  const std::string& name_for_errors) {
  std::vector<std::string> warnings;
  return read_nvidia_smi_csv(text, name_for_errors, warnings);
}

}  // namespace acco::analyze
