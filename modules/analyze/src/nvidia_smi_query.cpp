// `nvidia-smi -q` (and -q -d PERFORMANCE, -q -l N) output -> Snapshots. The report is sections
// by indentation ("    Clocks", "        SM : 1755 MHz") under one "GPU 00000000:18:00.0"
// block per GPU, after a "Timestamp : Fri Dec  4 09:06:33 2026" line per report. The
// "Clocks Event Reasons" (older drivers: "Clocks Throttle Reasons") section says what holds the
// clocks now; its "... Counters" section holds microseconds summed since the driver loaded,
// never the current state.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
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
namespace ce = power::clock_event;

std::size_t indent_of(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) {
    ++i;
  }
  return i;
}

// "Power Draw                        : 692.50 W" -> {"Power Draw", "692.50 W"}; a section title
// has no " : " (nor a trailing " :").
std::optional<std::pair<std::string_view, std::string_view>> key_value(std::string_view line) {
  auto colon = line.find(" : ");
  std::string_view value;
  if (colon == std::string_view::npos) {
    if (!line.ends_with(" :")) {
      return std::nullopt;
    }
    colon = line.size() - 2;
  } else {
    value = units::trim(line.substr(colon + 3));
  }
  return std::pair{units::trim(line.substr(0, colon)), value};
}

// "692.50 W" -> 692.5 when the unit is `unit` (or absent); nullopt for N/A and the like.
std::optional<double> number_in(std::string_view value, std::string_view unit) {
  const auto space = value.find(' ');
  const auto number = value.substr(0, space);
  const auto given =
      space == std::string_view::npos ? std::string_view() : units::trim(value.substr(space + 1));
  if (!given.empty() && given != unit) {
    return std::nullopt;
  }
  const auto v = units::parse_double(number);
  return v ? std::optional<double>(*v) : std::nullopt;
}

const std::map<std::string_view, std::uint64_t>& reason_bits() {
  static const std::map<std::string_view, std::uint64_t> bits = {
      {"Idle", ce::kGpuIdle},
      {"Applications Clocks Setting", ce::kApplicationsClocksSetting},
      {"SW Power Cap", ce::kSwPowerCap},
      {"HW Slowdown", ce::kHwSlowdown},
      {"Sync Boost", ce::kSyncBoost},
      {"SW Thermal Slowdown", ce::kSwThermalSlowdown},
      {"HW Thermal Slowdown", ce::kHwThermalSlowdown},
      {"HW Power Brake Slowdown", ce::kHwPowerBrakeSlowdown},
      {"Display Clock Setting", ce::kDisplayClockSetting},
  };
  return bits;
}

// The counters' names and acco's throttle_seconds keys.
const std::map<std::string_view, std::string_view>& counter_keys() {
  static const std::map<std::string_view, std::string_view> keys = {
      {"SW Power Capping", "power"},          {"Sync Boost", "sync_boost"},
      {"SW Thermal Slowdown", "sw_thermal"},  {"HW Thermal Slowdown", "hw_thermal"},
      {"HW Power Braking", "hw_power_brake"},
  };
  return keys;
}

// "Fri Dec  4 09:06:33 2026" (ctime, local time) -> Unix nanoseconds read as UTC.
std::optional<std::int64_t> ctime_nanos(std::string_view text) {
  static constexpr std::string_view kMonths = "JanFebMarAprMayJunJulAugSepOctNovDec";
  std::vector<std::string_view> w;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t end = std::min(text.find(' ', i), text.size());
    if (end > i) {
      w.push_back(text.substr(i, end - i));
    }
    i = end + 1;
  }
  if (w.size() != 5 || w[1].size() != 3 || w[3].size() != 8 || w[3][2] != ':' || w[3][5] != ':') {
    return std::nullopt;
  }
  const auto month = kMonths.find(w[1]);
  const auto day = units::parse_int(w[2]);
  const auto hour = units::parse_int(w[3].substr(0, 2));
  const auto minute = units::parse_int(w[3].substr(3, 2));
  const auto second = units::parse_int(w[3].substr(6, 2));
  const auto year = units::parse_int(w[4]);
  if (month == std::string_view::npos || month % 3 != 0 || !day || !hour || !minute || !second ||
      !year) {
    return std::nullopt;
  }
  return detail::civil_unix_nanos(static_cast<int>(*year), static_cast<int>(month / 3) + 1,
                                  static_cast<int>(*day), static_cast<int>(*hour),
                                  static_cast<int>(*minute), static_cast<int>(*second));
}

// One report's GPUs, at its Timestamp when it has one.
struct QueryRound {
  std::int64_t time = 0;
  bool timed = false;
  std::vector<power::DeviceSample> devices;
};

void set_scaled(std::optional<double>& field, std::optional<double> v, double scale = 1) {
  if (v) {
    field = *v * scale;
  }
}

void read_reason(power::DeviceSample& d, std::string_view key, std::string_view value) {
  const auto it = reason_bits().find(key);
  if (it != reason_bits().end() && (value == "Active" || value == "Not Active")) {
    d.clock_event_reasons =
        d.clock_event_reasons.value_or(0) | (value == "Active" ? it->second : 0);
  }
}

// Cumulative since the driver loaded: time spent, never what holds the clocks now.
void read_counter(power::DeviceSample& d, std::string_view key, std::string_view value) {
  const auto it = counter_keys().find(key);
  if (const auto us = number_in(value, "us"); it != counter_keys().end() && us) {
    d.throttle_seconds[std::string(it->second)] = *us / 1e6;
  }
}

void read_utilization(power::DeviceSample& d, std::string_view key, std::string_view value) {
  const auto v = number_in(value, "%");
  if (!v || *v < 0 || *v > 100) {
    return;
  }
  if (key == "Gpu") {
    d.utilization_ratio = *v / 100;
  } else if (key == "Memory") {
    d.memory_utilization_ratio = *v / 100;
  }
}

void read_temperature(power::DeviceSample& d, std::string_view key, std::string_view value) {
  const auto c = number_in(value, "C");
  if (key == "GPU Current Temp") {
    set_scaled(d.temperature_gpu_celsius, c);
  } else if (key == "Memory Current Temp") {
    set_scaled(d.temperature_memory_celsius, c);
  } else if (key == "GPU T.Limit Temp") {
    set_scaled(d.thermal_margin_celsius, c);
  } else if (key == "GPU Shutdown Temp") {
    set_scaled(d.threshold_shutdown_celsius, c);
  } else if (key == "GPU Slowdown Temp") {
    set_scaled(d.threshold_slowdown_celsius, c);
  } else if (key == "GPU Max Operating Temp") {
    set_scaled(d.threshold_gpu_max_celsius, c);
  }
}

void read_power(power::DeviceSample& d, std::string_view key, std::string_view value) {
  auto w = number_in(value, "W");
  const bool draw =
      key == "Power Draw" || key == "Average Power Draw" || key == "Instantaneous Power Draw";
  // No GPU draws more than 10 kW; a limit of 0 W (or less) is no limit set: absent.
  if (w && (!std::isfinite(*w) || *w > detail::kMaxGpuWatts || (draw ? *w < 0 : *w <= 0))) {
    if (draw) {
      ++d.dropped_readings;
    }
    w.reset();
  }
  if (draw) {
    if (!d.power_watts || key == "Power Draw") {
      set_scaled(d.power_watts, w);
    }
  } else if (key == "Current Power Limit" || key == "Enforced Power Limit") {
    set_scaled(d.power_limit_enforced_watts, w);
  } else if (key == "Requested Power Limit" || key == "Power Limit") {
    set_scaled(d.power_limit_requested_watts, w);
  } else if (key == "Default Power Limit") {
    set_scaled(d.power_limit_default_watts, w);
  } else if (key == "Min Power Limit") {
    set_scaled(d.power_limit_min_watts, w);
  } else if (key == "Max Power Limit") {
    set_scaled(d.power_limit_max_watts, w);
  }
}

void read_clock(power::DeviceSample& d, bool max, std::string_view key, std::string_view value) {
  const auto mhz = number_in(value, "MHz");
  if (key == "SM") {
    set_scaled(max ? d.sm_clock_max_hertz : d.sm_clock_hertz, mhz, 1e6);
  } else if (key == "Memory") {
    set_scaled(max ? d.memory_clock_max_hertz : d.memory_clock_hertz, mhz, 1e6);
  }
}

void read_memory(power::DeviceSample& d, std::string_view key, std::string_view value) {
  const auto mib = number_in(value, "MiB");
  std::optional<std::uint64_t>* field = key == "Total"  ? &d.memory_total_bytes
                                        : key == "Used" ? &d.memory_used_bytes
                                        : key == "Free" ? &d.memory_free_bytes
                                                        : nullptr;
  if (field != nullptr && mib) {
    *field = detail::whole_count(*mib * 1048576.0);  // NaN, negative or past 64 bits: none
    if (!*field) {
      ++d.dropped_readings;
    }
  }
}

std::optional<int> link_number(std::string_view v) {
  if (v.ends_with('x')) {
    v.remove_suffix(1);  // "16x"
  }
  const auto n = units::parse_int(v);
  return n && *n >= 0 && *n <= 64 ? std::optional<int>(static_cast<int>(*n)) : std::nullopt;
}

void read_pci(power::DeviceSample& d, std::string_view sec, std::string_view key,
              std::string_view value) {
  if (sec == "PCIe Generation" || sec == "Link Width") {
    const bool gen = sec == "PCIe Generation";
    // "Current"/"Max" on older drivers; newer ones add "Device Current"/"Device Max".
    const bool exact = key == "Current" || key == "Max";
    const bool current = key == "Current" || key == "Device Current";
    const bool max = key == "Max" || key == "Device Max";
    auto& field = gen ? (current ? d.pcie_gen_current : d.pcie_gen_max)
                      : (current ? d.pcie_width_current : d.pcie_width_max);
    if (const auto n = link_number(value); n && (current || max) && (exact || !field)) {
      field = n;
    }
  } else if (key == "Tx Throughput") {
    set_scaled(d.pcie_tx_bytes_per_second, number_in(value, "KB/s"), 1e3);
  } else if (key == "Rx Throughput") {
    set_scaled(d.pcie_rx_bytes_per_second, number_in(value, "KB/s"), 1e3);
  } else if (key == "Replays Since Reset" || key == "Replay Number") {
    if (const auto n = units::parse_int(value); n && *n >= 0) {
      d.pcie_replays = static_cast<std::uint64_t>(*n);
    }
  }
}

class QueryReader {
 public:
  QueryReader(const std::string& name, Recording& out) : name_(name), out_(out) {}

  Status line(std::string_view raw, std::size_t number) {
    const auto text = units::trim(raw);
    if (text.empty() || text.starts_with("====")) {
      if (text.find("NVSMI LOG") != std::string_view::npos) {
        new_round();
      }
      return {};
    }
    const std::size_t indent = indent_of(raw);
    if (indent == 0 && text.starts_with("GPU ") && !key_value(text)) {
      return new_gpu(text.substr(4), number);
    }
    while (!sections_.empty() && sections_.back().first >= indent) {
      sections_.pop_back();
    }
    const auto kv = key_value(text);
    if (!kv) {
      sections_.emplace_back(indent, std::string(text));
      return {};
    }
    const auto [key, value] = *kv;
    if (indent == 0) {
      if (key == "Timestamp") {
        const auto t = ctime_nanos(value);
        if (!t) {
          return line_error(name_, number,
                            fmt::format("Timestamp: cannot read '{}' as a time like 'Fri Dec  4 "
                                        "09:06:33 2026'",
                                        units::excerpt(value)));
        }
        if (!round_ || round_->timed || !round_->devices.empty()) {
          new_round();
        }
        round_->time = *t;
        round_->timed = true;
      }
      return {};
    }
    read(key, value);
    return {};
  }

  void finish() {
    flush_round();
    detail::sort_by_time(out_.rounds);
  }

 private:
  void new_round() {
    flush_round();
    round_.emplace();
  }

  void flush_round() {
    if (!round_) {
      return;
    }
    if (!round_->devices.empty()) {
      Snapshot snap;
      snap.time_unix_nanos = round_->timed
                                 ? round_->time
                                 : static_cast<std::int64_t>(out_.rounds.size()) * 1'000'000'000;
      any_untimed_ = any_untimed_ || !round_->timed;
      for (auto& d : round_->devices) {
        d.time_unix_nanos = snap.time_unix_nanos;
      }
      snap.devices = std::move(round_->devices);
      out_.rounds.push_back(std::move(snap));
    }
    round_.reset();
  }

  Status new_gpu(std::string_view bus_id, std::size_t number) {
    if (!round_) {
      round_.emplace();
    }
    power::DeviceSample d;
    d.device = std::to_string(round_->devices.size());  // -q lists GPUs in index order
    d.pci_bus_id = detail::sysfs_pci_bus_id(units::trim(bus_id));
    // One report lists each GPU once: a bus id seen again in it is no second GPU.
    for (const auto& other : round_->devices) {
      if (!d.pci_bus_id.empty() && other.pci_bus_id == d.pci_bus_id) {
        return line_error(name_, number,
                          fmt::format("GPU {} is listed twice in one report (expected one "
                                      "'GPU <bus id>' section per GPU)",
                                      d.pci_bus_id));
      }
    }
    d.source = "nvidia-smi-q";
    round_->devices.push_back(std::move(d));
    sections_.clear();
    return {};
  }

  power::DeviceSample& device() {
    if (!round_) {
      round_.emplace();
    }
    if (round_->devices.empty()) {  // a fragment pasted without its "GPU ..." line
      power::DeviceSample d;
      d.device = "0";
      d.source = "nvidia-smi-q";
      round_->devices.push_back(std::move(d));
    }
    return round_->devices.back();
  }

  [[nodiscard]] std::string_view section() const {
    return sections_.empty() ? std::string_view() : std::string_view(sections_.back().second);
  }
  [[nodiscard]] bool in(std::string_view name) const {
    return std::any_of(sections_.begin(), sections_.end(),
                       [&](const auto& entry) { return entry.second == name; });
  }

  void read(std::string_view key, std::string_view value) {
    auto& d = device();
    const auto sec = section();
    if (sections_.empty()) {
      read_identity(d, key, value);
    } else if (sec == "Clocks Event Reasons" || sec == "Clocks Throttle Reasons") {
      read_reason(d, key, value);
    } else if (sec == "Clocks Event Reasons Counters" ||
               sec == "Clocks Throttle Reasons Counters") {
      read_counter(d, key, value);
    } else if (sec == "Utilization") {
      read_utilization(d, key, value);
    } else if (sec == "Temperature") {
      read_temperature(d, key, value);
    } else if (sec == "GPU Power Readings" || sec == "Power Readings") {
      read_power(d, key, value);
    } else if (sec == "Clocks" || sec == "Max Clocks") {
      read_clock(d, sec == "Max Clocks", key, value);
    } else if (sec == "FB Memory Usage") {
      read_memory(d, key, value);
    } else if (in("PCI")) {
      read_pci(d, sec, key, value);
    }
  }

  static void read_identity(power::DeviceSample& d, std::string_view key, std::string_view value) {
    if (key == "Product Name") {
      d.model = detail::stored_text(value);
    } else if (key == "GPU UUID") {
      d.uuid = detail::stored_text(value);
    } else if (key == "Performance State" && value.starts_with('P')) {
      if (const auto p = units::parse_int(value.substr(1)); p && *p >= 0 && *p <= 15) {
        d.pstate = static_cast<int>(*p);
      }
    }
  }

 public:
  [[nodiscard]] bool any_untimed() const { return any_untimed_; }

 private:
  const std::string& name_;
  Recording& out_;
  std::optional<QueryRound> round_;
  std::vector<std::pair<std::size_t, std::string>> sections_;  // indent, title
  bool any_untimed_ = false;
};

}  // namespace

bool looks_like_nvidia_smi_query(std::string_view text) {
  std::size_t start = 0;
  for (int lines = 0; lines < 5 && start < text.size(); ++lines) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const auto raw = text.substr(start, end - start);
    const auto line = units::trim(raw);
    start = end + 1;
    if (line.empty()) {
      --lines;
      continue;
    }
    if (line.find("NVSMI LOG") != std::string_view::npos) {
      return true;
    }
    // "GPU 00000000:18:00.0", "Timestamp    : Fri Dec  4 ...", "    Clocks Event Reasons".
    if ((line.starts_with("GPU ") && line.find(':') != std::string_view::npos &&
         line.find(',') == std::string_view::npos) ||
        (line.find(" : ") != std::string_view::npos && line.find(',') == std::string_view::npos &&
         line.front() != '#')) {
      return true;
    }
    if (line.starts_with("Clocks Event Reasons") || line.starts_with("Clocks Throttle Reasons")) {
      return true;
    }
    return false;
  }
  return false;
}

Result<Recording> read_nvidia_smi_query(std::string_view text, const std::string& name) {
  Recording r;
  r.format = "nvidia-smi-q";
  QueryReader reader(name, r);
  ACCO_RETURN_IF_ERROR(detail::for_each_line(
      text, [&](std::string_view line, std::size_t number) { return reader.line(line, number); }));
  reader.finish();
  if (r.rounds.empty()) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: an nvidia-smi -q report with no GPU readings", name));
  }
  r.time_base = reader.any_untimed() ? TimeBase::kNone : TimeBase::kLocalUnknownZone;
  r.notes.push_back(fmt::format(
      "{}: nvidia-smi -q report(s): the clock-event reasons are the state at each report; the "
      "reasons' counters are time summed since the driver loaded, not read as current state",
      name));
  return r;
}

}  // namespace acco::analyze
