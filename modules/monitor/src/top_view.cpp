#include "acco/monitor/top_view.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "acco/analyze/json.hpp"
#include "acco/analyze/pcie_peak.hpp"
#include "acco/core/units.hpp"
#include "acco/monitor/host_rates.hpp"
#include "acco/report/table.hpp"

namespace acco::monitor {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr const char* kReset = "\x1b[0m";
constexpr const char* kBold = "\x1b[1m";
constexpr const char* kRed = "\x1b[31m";
constexpr const char* kYellow = "\x1b[33m";

using report::Align;

struct Column {
  std::string_view header;
  Align align;
};

// Every header names its unit; a cell holds numbers only. 150 columns before THROTTLE, so a
// 160-column terminal shows every fixed column.
constexpr Column kColumns[] = {
    {"ID", Align::kLeft},
    {"MODEL", Align::kLeft},
    {"TEMP C / MAX", Align::kRight},
    {"POWER W / LIMIT W", Align::kRight},
    {"UTIL %", Align::kRight},
    {"MEM GiB USED / TOTAL", Align::kRight},
    {"SM MHz / MAX", Align::kRight},
    {"PCIe RX GB/s (%)", Align::kRight},
    {"PCIe TX GB/s (%)", Align::kRight},
    {"STATE", Align::kLeft},
    {"THROTTLE", Align::kLeft},  // last: the one cell of no fixed width
};
constexpr std::size_t kColumnCount = std::size(kColumns);
constexpr std::size_t kModelWidth = 20;
constexpr std::size_t kNarrowModelWidth = 12;
// The columns hidden, in this order, until the table fits the width (ID, MODEL, POWER, UTIL,
// STATE and THROTTLE always show).
constexpr std::size_t kHideOrder[] = {6, 8, 5, 7, 2};

struct Cell {
  std::string text;
  const char* colour = nullptr;  // ANSI code when colours are on
};
using Row = std::vector<Cell>;

std::string pair_cell(std::optional<double> value, std::optional<double> limit, double scale,
                      int decimals) {
  if (!value) {
    return "-";
  }
  if (!limit) {
    return fmt::format("{:.{}f}", *value * scale, decimals);
  }
  return fmt::format("{:.{}f} / {:.{}f}", *value * scale, decimals, *limit * scale, decimals);
}

std::optional<double> as_double(std::optional<std::uint64_t> v) {
  return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
}

std::string short_model(const std::string& model, std::size_t width) {
  std::string m = model;
  for (const auto& [prefix, replacement] :
       {std::pair<std::string_view, std::string_view>{"NVIDIA ", ""},
        {"acco simulated ", "sim "}}) {
    if (m.rfind(prefix, 0) == 0) {
      m = std::string(replacement) + m.substr(prefix.size());
    }
  }
  if (m.empty()) {
    return "-";
  }
  return m.size() > width ? m.substr(0, width - 1) + "~" : m;
}

std::string pcie_cell(std::optional<double> bytes_per_second, double peak) {
  if (!bytes_per_second) {
    return "-";
  }
  if (peak <= 0) {
    return fmt::format("{:.2f}", *bytes_per_second / 1e9);
  }
  return fmt::format("{:.2f} ({:.0f}%)", *bytes_per_second / 1e9, 100.0 * *bytes_per_second / peak);
}

std::string throttle_cell(const power::DeviceSample& d) {
  if (!d.clock_event_reasons) {
    return "-";
  }
  std::string out;
  for (const auto& reason : power::clock_event_names()) {
    // Idle clocks are the normal state of an unused device, not a slowdown worth a column.
    if (reason.bit == power::clock_event::kGpuIdle || (*d.clock_event_reasons & reason.bit) == 0) {
      continue;
    }
    out += (out.empty() ? "" : ",") + std::string(reason.name);
  }
  return out.empty() ? "-" : out;
}

Row device_row(const power::DeviceSample& d, std::size_t model_width) {
  Row row;
  row.push_back({d.device.empty() ? "-" : d.device});
  row.push_back({short_model(d.model, model_width)});
  if (d.lost || d.suspended) {
    for (std::size_t i = 2; i + 2 < kColumnCount; ++i) {
      row.push_back({"-"});
    }
    row.push_back({d.lost ? "lost" : "suspended", d.lost ? kRed : kYellow});
    row.push_back({"-"});
    return row;
  }
  row.push_back({pair_cell(d.temperature_gpu_celsius, d.threshold_gpu_max_celsius, 1, 0)});
  row.push_back({pair_cell(d.power_watts, d.power_limit_enforced_watts, 1, 0)});
  row.push_back({pair_cell(d.utilization_ratio, std::nullopt, 100, 0)});
  row.push_back(
      {pair_cell(as_double(d.memory_used_bytes), as_double(d.memory_total_bytes), 1 / kGiB, 1)});
  row.push_back({pair_cell(d.sm_clock_hertz, d.sm_clock_max_hertz, 1e-6, 0)});
  const double peak = analyze::pcie_peak_bytes_per_second(d);
  row.push_back({pcie_cell(d.pcie_rx_bytes_per_second, peak)});
  row.push_back({pcie_cell(d.pcie_tx_bytes_per_second, peak)});
  row.push_back({"ok"});
  const std::string throttle = throttle_cell(d);
  row.push_back({throttle, throttle == "-" ? nullptr : kYellow});
  return row;
}

// Cuts a line to `width` visible columns, skipping ANSI sequences, which take none; a cut line
// ends in '~' so it reads as cut.
std::string cut(const std::string& line, std::size_t width, bool colour) {
  if (width == 0) {
    return line;
  }
  std::string out;
  std::size_t visible = 0;
  std::size_t last_visible = std::string::npos;  // where in `out` the last shown column is
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b') {
      const auto end = line.find('m', i);
      out += line.substr(i, end - i + 1);
      i = end;
      continue;
    }
    if (visible == width) {
      if (last_visible != std::string::npos) {
        out[last_visible] = '~';
      }
      return colour ? out + kReset : out;
    }
    last_visible = out.size();
    out += line[i];
    ++visible;
  }
  return out;
}

std::string table(const std::vector<Row>& rows, bool colour, const std::vector<bool>& shown) {
  report::Table t{.columns = {},
                  .rows = {},
                  .style = {.indent = 0, .gap = 2, .colour = colour, .header_style = kBold}};
  for (std::size_t c = 0; c < kColumnCount; ++c) {
    if (shown[c]) {
      t.columns.push_back({.header = std::string(kColumns[c].header), .align = kColumns[c].align});
    }
  }
  for (const auto& row : rows) {
    auto& cells = t.rows.emplace_back();
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (shown[c]) {
        cells.emplace_back(row[c].text, row[c].colour == nullptr ? "" : row[c].colour);
      }
    }
  }
  return report::render_table(t);
}

// Columns on the screen, ANSI sequences not counted.
std::size_t visible_width(std::string_view line) {
  std::size_t width = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b') {
      i = line.find('m', i);
      if (i == std::string_view::npos) {
        break;
      }
      continue;
    }
    ++width;
  }
  return width;
}

// Larger first; equal keys keep the snapshot's (id) order. A lost or suspended device reads
// nothing and goes last unless sorted by id.
double sort_key(const power::DeviceSample& d, TopSort sort) {
  if (sort != TopSort::kId && (d.lost || d.suspended)) {
    return -2;
  }
  switch (sort) {
    case TopSort::kUtilization:
      return d.utilization_ratio.value_or(-1);
    case TopSort::kPower:
      return d.power_watts.value_or(-1);
    case TopSort::kTemperature:
      return d.temperature_gpu_celsius.value_or(-1);
    case TopSort::kId:
      break;
  }
  return 0;
}

// The devices' table fitted to `width` (0: as it is), and the headers it hid.
std::pair<std::string, std::vector<std::string>> device_table(
    const std::vector<const power::DeviceSample*>& devices, std::size_t width, bool colour) {
  std::vector<bool> shown(kColumnCount, true);
  std::vector<std::string> hidden;
  const auto render = [&](std::size_t model_width) {
    std::vector<Row> rows;
    rows.reserve(devices.size());
    for (const auto* device : devices) {
      rows.push_back(device_row(*device, model_width));
    }
    return table(rows, colour, shown);
  };
  // The widest line, not the header: THROTTLE is the unpadded last column, so a row's reasons
  // can reach past its header.
  const auto widest = [](const std::string& text) {
    std::size_t most = 0;
    for (const auto& line : units::split(text, '\n')) {
      most = std::max(most, visible_width(line));
    }
    return most;
  };
  std::string text = render(kModelWidth);
  const auto header = [](const std::string& t) {
    return visible_width(std::string_view(t).substr(0, t.find('\n')));
  };
  // Every column fits: a THROTTLE longer than the room left is cut (ending in '~') rather than
  // hiding a column for it. Once columns must go, they go until every line fits whole.
  if (width == 0 || header(text) <= width) {
    return {text, hidden};
  }
  text = render(kNarrowModelWidth);
  for (const std::size_t column : kHideOrder) {
    if (widest(text) <= width) {
      break;
    }
    shown[column] = false;
    hidden.emplace_back(kColumns[column].header);
    text = render(kNarrowModelWidth);
  }
  return {text, hidden};
}

double seconds_between(std::int64_t from_unix_nanos, std::int64_t to_unix_nanos) {
  return static_cast<double>(to_unix_nanos - from_unix_nanos) / 1e9;
}

std::string cpu_part(const HostRates& r) {
  const std::string busy =
      r.cpu_busy_ratio ? fmt::format("{:.1f}", 100.0 * *r.cpu_busy_ratio) : std::string("-");
  return fmt::format("CPU % BUSY {} of {} CPU(s)", busy, r.cpus);
}

std::string memory_part(const HostRates& r) {
  if (!r.memory_used_bytes || !r.memory_total_bytes) {
    return "MEM GiB USED / TOTAL -";
  }
  return fmt::format("MEM GiB USED / TOTAL {:.1f} / {:.1f}", *r.memory_used_bytes / kGiB,
                     *r.memory_total_bytes / kGiB);
}

std::string pressure_part(const power::HostSample& h) {
  std::string out;
  for (const char* resource : {"cpu", "memory", "io"}) {
    for (const auto& p : h.pressure) {
      if (p.resource == resource && p.kind == "some") {
        out += fmt::format(" {} {:.1f}", resource, 100 * p.avg10_ratio);
      }
    }
  }
  return out.empty() ? "" : "PSI SOME AVG10 %" + out;
}

struct Rate {
  std::string name;
  double in_bytes_per_second = 0;
  double out_bytes_per_second = 0;
};

// Per-second rates of the counters that exist in both rounds; a counter that went backwards
// (a reset, a device that came back) has no rate this frame.
template <typename Item, typename In, typename Out>
std::vector<Rate> rates(const std::vector<Item>& now, const std::vector<Item>& before,
                        double seconds, In in, Out out) {
  std::vector<Rate> result;
  for (const auto& item : now) {
    const auto it = std::find_if(before.begin(), before.end(),
                                 [&](const Item& b) { return b.name == item.name; });
    if (it == before.end() || in(item) < in(*it) || out(item) < out(*it)) {
      continue;
    }
    result.push_back({item.name, static_cast<double>(in(item)-in(*it)) / seconds,
                      static_cast<double>(out(item) - out(*it)) / seconds});
  }
  std::stable_sort(result.begin(), result.end(), [](const Rate& a, const Rate& b) {
    return a.in_bytes_per_second + a.out_bytes_per_second >
           b.in_bytes_per_second + b.out_bytes_per_second;
  });
  return result;
}

std::string rate_line(std::string_view label, std::string_view in, std::string_view out,
                      const std::optional<std::vector<Rate>>& list, std::size_t top) {
  std::string line = fmt::format("{:<6}", label);
  if (!list) {
    return line + "-";
  }
  if (list->empty()) {
    return line + "none";
  }
  for (std::size_t i = 0; i < list->size() && i < top; ++i) {
    const auto& r = (*list)[i];
    line += fmt::format("{}{} {} {} {} {}", i == 0 ? "" : "   ", r.name, in,
                        units::format_rate(r.in_bytes_per_second), out,
                        units::format_rate(r.out_bytes_per_second));
  }
  return line;
}

bool shown_disk(const std::string& name) {
  // Loop and RAM disks are files and memory, not storage worth a place in the line.
  return name.rfind("loop", 0) != 0 && name.rfind("ram", 0) != 0 && name.rfind("zram", 0) != 0;
}

// The interfaces and disks listed are those host_rates counts (no loopback, no virtual
// interface over a physical one, no dm or md device over its disks), so no byte shows twice.
std::vector<std::string> host_lines(const power::HostSample& now, const power::HostSample* previous,
                                    std::size_t top) {
  const HostRates counted = host_rates(now, previous);
  std::vector<std::string> lines;
  std::string first = "HOST  " + cpu_part(counted) + "   " + memory_part(counted);
  if (const auto psi = pressure_part(now); !psi.empty()) {
    first += "   " + psi;
  }
  lines.push_back(first);
  const auto listed = [](const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  std::optional<std::vector<Rate>> net;
  std::optional<std::vector<Rate>> disks;
  const double seconds =
      previous != nullptr ? seconds_between(previous->time_unix_nanos, now.time_unix_nanos) : 0;
  if (seconds > 0) {
    std::vector<power::NetSample> nics;
    std::copy_if(now.net.begin(), now.net.end(), std::back_inserter(nics),
                 [&](const power::NetSample& n) { return listed(counted.interfaces, n.name); });
    net = rates(
        nics, previous->net, seconds, [](const power::NetSample& n) { return n.rx_bytes; },
        [](const power::NetSample& n) { return n.tx_bytes; });
    std::vector<power::DiskSample> storage;
    std::copy_if(now.disks.begin(), now.disks.end(), std::back_inserter(storage),
                 [&](const power::DiskSample& d) {
                   return listed(counted.disks, d.name) && shown_disk(d.name);
                 });
    disks = rates(
        storage, previous->disks, seconds, [](const power::DiskSample& d) { return d.read_bytes; },
        [](const power::DiskSample& d) { return d.written_bytes; });
  }
  lines.push_back(rate_line("NET", "rx", "tx", net, top));
  lines.push_back(rate_line("DISK", "read", "write", disks, top));
  return lines;
}

}  // namespace

std::string render_top(const analyze::Snapshot& now, const analyze::Snapshot* previous,
                       const TopOptions& options) {
  std::vector<std::string> lines;
  // The header's parts joined by " - ", on as many lines as the width needs.
  const std::string parts[] = {"acco top", options.hostname, analyze::rfc3339(now.time_unix_nanos),
                               options.source,
                               fmt::format("round {} every {}", now.stats.rounds,
                                           units::format_seconds(now.stats.interval_seconds))};
  std::string header;
  for (const auto& part : parts) {
    if (header.empty()) {
      header = part;
    } else if (options.width == 0 || header.size() + 3 + part.size() <= options.width) {
      header += " - " + part;
    } else {
      lines.push_back(header);
      header = "  " + part;
    }
  }
  lines.push_back(header);
  if (!options.status.empty()) {
    lines.push_back(options.colour ? kRed + options.status + kReset : options.status);
  }
  for (const auto& [source, count] : now.stats.read_errors) {
    const auto last = now.stats.last_error.find(source);
    lines.push_back(
        fmt::format("{}: {} failed read(s){}", source, count,
                    last == now.stats.last_error.end() ? "" : " (last: " + last->second + ")"));
  }
  lines.emplace_back();
  std::vector<const power::DeviceSample*> devices;
  for (const auto& device : now.devices) {
    if (options.device.empty() || device.device == options.device) {
      devices.push_back(&device);
    }
  }
  std::stable_sort(devices.begin(), devices.end(), [&](const auto* a, const auto* b) {
    return sort_key(*a, options.sort) > sort_key(*b, options.sort);
  });
  if (devices.empty()) {
    lines.emplace_back(options.device.empty() ? "no devices"
                                              : "no device " + options.device + " in this round");
  } else {
    auto [text, hidden] = device_table(devices, options.width, options.colour);
    text.pop_back();
    for (auto& line : units::split(text, '\n')) {
      lines.push_back(std::move(line));
    }
    if (!hidden.empty()) {
      std::string names;
      for (const auto& h : hidden) {
        names += (names.empty() ? "" : ", ") + h;
      }
      lines.push_back(fmt::format("hidden to fit {} columns: {}", options.width, names));
    }
  }
  lines.emplace_back();
  if (now.host) {
    const power::HostSample* before =
        previous != nullptr && previous->host ? &*previous->host : nullptr;
    for (auto& line : host_lines(*now.host, before, options.top_interfaces)) {
      lines.push_back(std::move(line));
    }
  } else {
    lines.emplace_back("HOST  -");
  }
  if (options.keys) {
    lines.emplace_back();
    lines.push_back(fmt::format("keys: q quit   s sort (by {})   f device ({})",
                                to_string(options.sort),
                                options.device.empty() ? "all" : options.device));
  }
  std::string out;
  for (const auto& line : lines) {
    out += cut(line, options.width, options.colour) + "\n";
  }
  return out;
}

std::string_view to_string(TopSort sort) {
  switch (sort) {
    case TopSort::kId:
      return "id";
    case TopSort::kUtilization:
      return "util";
    case TopSort::kPower:
      return "power";
    case TopSort::kTemperature:
      return "temp";
  }
  return "id";
}

TopSort next_sort(TopSort sort) {
  switch (sort) {
    case TopSort::kId:
      return TopSort::kUtilization;
    case TopSort::kUtilization:
      return TopSort::kPower;
    case TopSort::kPower:
      return TopSort::kTemperature;
    case TopSort::kTemperature:
      break;
  }
  return TopSort::kId;
}

}  // namespace acco::monitor
