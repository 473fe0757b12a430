// `nvidia-smi -q` (and -q -d PERFORMANCE, -q -l N) output -> Snapshots. The report is sections
// by indentation ("    Clocks", "        SM : 1755 MHz") under one "GPU 00000000:18:00.0"
// block per GPU, after a "Timestamp : Fri Dec  4 09:06:33 2026" line per report. The
// "Clocks Event Reasons" (older drivers: "Clocks Throttle Reasons") section says what holds the
// clocks now; its "... Counters" section holds microseconds summed since the driver loaded,
// never the current state.
#include <cstdint>
#include <map>
#include <optional>
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
  char weekday[4] = {};
  char month[4] = {};
  int day = 0;
  int hour = 0;
  int minute = 0;
  int second = 0;
  int year = 0;
  const std::string s(text);
  if (std::sscanf(s.c_str(), "%3s %3s %d %d:%d:%d %d", weekday, month, &day, &hour,  // NOLINT
                  &minute, &second, &year) != 7) {
    return std::nullopt;
  }
  const auto m = kMonths.find(month);
  if (std::string_view(month).size() != 3 || m == std::string_view::npos || m % 3 != 0) {
    return std::nullopt;
  }
  return detail::civil_unix_nanos(year, static_cast<int>(m / 3) + 1, day, hour, minute, second);
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
      new_gpu(text.substr(4));
      return {};
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
                                        units::escape(value)));
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
  struct Round {
    std::int64_t time = 0;
    bool timed = false;
    std::vector<power::DeviceSample> devices;
  };

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

  void new_gpu(std::string_view bus_id) {
    if (!round_) {
      round_.emplace();
    }
    power::DeviceSample d;
    d.device = std::to_string(round_->devices.size());  // -q lists GPUs in index order
    d.pci_bus_id = detail::sysfs_pci_bus_id(units::trim(bus_id));
    d.source = "nvidia-smi-q";
    round_->devices.push_back(std::move(d));
    sections_.clear();
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
    for (const auto& [indent, s] : sections_) {
      if (s == name) {
        return true;
      }
    }
    return false;
  }

  static void set(std::optional<double>& field, std::optional<double> v, double scale = 1) {
    if (v) {
      field = *v * scale;
    }
  }

  void read(std::string_view key, std::string_view value) {
    auto& d = device();
    const auto sec = section();
    if (sections_.empty()) {
      if (key == "Product Name") {
        d.model = std::string(value);
      } else if (key == "GPU UUID") {
        d.uuid = std::string(value);
      } else if (key == "Performance State" && value.starts_with('P')) {
        if (const auto p = units::parse_int(value.substr(1)); p && *p >= 0 && *p <= 15) {
          d.pstate = static_cast<int>(*p);
        }
      }
      return;
    }
    if (sec == "Clocks Event Reasons" || sec == "Clocks Throttle Reasons") {
      const auto it = reason_bits().find(key);
      if (it != reason_bits().end() && (value == "Active" || value == "Not Active")) {
        d.clock_event_reasons =
            d.clock_event_reasons.value_or(0) | (value == "Active" ? it->second : 0);
      }
    } else if (sec == "Clocks Event Reasons Counters" ||
               sec == "Clocks Throttle Reasons Counters") {
      // Cumulative since the driver loaded: time spent, never what holds the clocks now.
      const auto it = counter_keys().find(key);
      if (const auto us = number_in(value, "us"); it != counter_keys().end() && us) {
        d.throttle_seconds[std::string(it->second)] = *us / 1e6;
      }
    } else if (sec == "Utilization") {
      const auto v = number_in(value, "%");
      if (key == "Gpu" && v && *v >= 0 && *v <= 100) {
        d.utilization_ratio = *v / 100;
      } else if (key == "Memory" && v && *v >= 0 && *v <= 100) {
        d.memory_utilization_ratio = *v / 100;
      }
    } else if (sec == "Temperature") {
      read_temperature(d, key, value);
    } else if (sec == "GPU Power Readings" || sec == "Power Readings") {
      read_power(d, key, value);
    } else if (sec == "Clocks" || sec == "Max Clocks") {
      const bool max = sec == "Max Clocks";
      const auto mhz = number_in(value, "MHz");
      if (key == "SM") {
        set(max ? d.sm_clock_max_hertz : d.sm_clock_hertz, mhz, 1e6);
      } else if (key == "Memory") {
        set(max ? d.memory_clock_max_hertz : d.memory_clock_hertz, mhz, 1e6);
      }
    } else if (sec == "FB Memory Usage") {
      const auto mib = number_in(value, "MiB");
      std::optional<std::uint64_t>* field = key == "Total"  ? &d.memory_total_bytes
                                            : key == "Used" ? &d.memory_used_bytes
                                            : key == "Free" ? &d.memory_free_bytes
                                                            : nullptr;
      if (field != nullptr && mib && *mib >= 0) {
        *field = static_cast<std::uint64_t>(*mib * 1048576.0);
      }
    } else if (in("PCI")) {
      read_pci(d, sec, key, value);
    }
  }

  static void read_temperature(power::DeviceSample& d, std::string_view key,
                               std::string_view value) {
    const auto c = number_in(value, "C");
    if (key == "GPU Current Temp") {
      set(d.temperature_gpu_celsius, c);
    } else if (key == "Memory Current Temp") {
      set(d.temperature_memory_celsius, c);
    } else if (key == "GPU T.Limit Temp") {
      set(d.thermal_margin_celsius, c);
    } else if (key == "GPU Shutdown Temp") {
      set(d.threshold_shutdown_celsius, c);
    } else if (key == "GPU Slowdown Temp") {
      set(d.threshold_slowdown_celsius, c);
    } else if (key == "GPU Max Operating Temp") {
      set(d.threshold_gpu_max_celsius, c);
    }
  }

  static void read_power(power::DeviceSample& d, std::string_view key, std::string_view value) {
    const auto w = number_in(value, "W");
    if (key == "Power Draw" || key == "Average Power Draw" || key == "Instantaneous Power Draw") {
      if (!d.power_watts || key == "Power Draw") {
        set(d.power_watts, w);
      }
    } else if (key == "Current Power Limit" || key == "Enforced Power Limit") {
      set(d.power_limit_enforced_watts, w);
    } else if (key == "Requested Power Limit" || key == "Power Limit") {
      set(d.power_limit_requested_watts, w);
    } else if (key == "Default Power Limit") {
      set(d.power_limit_default_watts, w);
    } else if (key == "Min Power Limit") {
      set(d.power_limit_min_watts, w);
    } else if (key == "Max Power Limit") {
      set(d.power_limit_max_watts, w);
    }
  }

  static void read_pci(power::DeviceSample& d, std::string_view sec, std::string_view key,
                       std::string_view value) {
    const auto small = [&](std::string_view v) -> std::optional<int> {
      if (v.ends_with('x')) {
        v.remove_suffix(1);
      }
      const auto n = units::parse_int(v);
      return n && *n >= 0 && *n <= 64 ? std::optional<int>(static_cast<int>(*n)) : std::nullopt;
    };
    if (sec == "PCIe Generation") {
      if (key == "Current" || key == "Device Current") {
        if (const auto n = small(value); n && (key == "Current" || !d.pcie_gen_current)) {
          d.pcie_gen_current = n;
        }
      } else if (key == "Max" || key == "Device Max") {
        if (const auto n = small(value); n && (key == "Max" || !d.pcie_gen_max)) {
          d.pcie_gen_max = n;
        }
      }
    } else if (sec == "Link Width") {
      if (key == "Current") {
        d.pcie_width_current = small(value);
      } else if (key == "Max") {
        d.pcie_width_max = small(value);
      }
    } else if (key == "Tx Throughput") {
      set(d.pcie_tx_bytes_per_second, number_in(value, "KB/s"), 1e3);
    } else if (key == "Rx Throughput") {
      set(d.pcie_rx_bytes_per_second, number_in(value, "KB/s"), 1e3);
    } else if (key == "Replays Since Reset" || key == "Replay Number") {
      if (const auto n = units::parse_int(value); n && *n >= 0) {
        d.pcie_replays = static_cast<std::uint64_t>(*n);
      }
    }
  }

 public:
  [[nodiscard]] bool any_untimed() const { return any_untimed_; }

 private:
  const std::string& name_;
  Recording& out_;
  std::optional<Round> round_;
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
    ACCO_RETURN_IF_ERROR(reader.line(line, number));
  }
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

}  // namespace acco::mon
