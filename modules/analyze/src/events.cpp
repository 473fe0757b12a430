#include "acco/analyze/events.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "acco/analyze/json.hpp"
#include "acco/core/json.hpp"

namespace acco::analyze {
namespace {

// Reasons that say how clocks are set, not that something holds them down.
bool is_throttle(std::uint64_t bit) {
  return bit != power::clock_event::kGpuIdle &&
         bit != power::clock_event::kApplicationsClocksSetting &&
         bit != power::clock_event::kDisplayClockSetting;
}

const power::DeviceSample* find(const Snapshot* s, const power::DeviceSample& d) {
  if (s == nullptr) {
    return nullptr;
  }
  const auto it = std::find_if(s->devices.begin(), s->devices.end(), [&](const auto& other) {
    return other.uuid == d.uuid && other.device == d.device;
  });
  return it == s->devices.end() ? nullptr : &*it;
}

void put(std::map<std::string, double>& numbers, const char* name, const std::optional<double>& v) {
  if (v) {
    numbers[name] = *v;
  }
}

Event device_event(const Snapshot& s, const power::DeviceSample& d, const char* level,
                   const char* name, std::string message) {
  Event e;
  e.time_unix_nanos = s.time_unix_nanos;
  e.level = level;
  e.event = name;
  e.device = d.device;
  e.message = std::move(message);
  return e;
}

void device_events(const Snapshot& cur, const power::DeviceSample& d,
                   const power::DeviceSample* before, std::vector<Event>& out) {
  if (before == nullptr) {
    out.push_back(
        device_event(cur, d, "info", "device_found",
                     fmt::format("device {} ({}, {}{}) found", d.device, d.model, d.source,
                                 d.pci_bus_id.empty() ? "" : ", " + d.pci_bus_id)));
  }
  if (d.lost && (before == nullptr || !before->lost)) {
    out.push_back(device_event(cur, d, "error", "device_lost",
                               fmt::format("device {} is lost: it no longer answers (fell off the "
                                           "bus, thermal shutdown or a driver fault)",
                                           d.device)));
  }
  if (before != nullptr && before->lost && !d.lost) {
    out.push_back(device_event(cur, d, "info", "device_recovered",
                               fmt::format("device {} answers again", d.device)));
  }
  if (d.suspended != (before != nullptr && before->suspended) &&
      (before != nullptr || d.suspended)) {
    out.push_back(
        device_event(cur, d, "info", d.suspended ? "device_suspended" : "device_resumed",
                     fmt::format("device {} is {}", d.device,
                                 d.suspended ? "runtime-suspended (not queried)" : "awake again")));
  }
  if (d.lost || d.suspended) {
    return;
  }
  const std::uint64_t now = d.clock_event_reasons.value_or(0);
  const std::uint64_t was = before != nullptr && !before->lost && !before->suspended
                                ? before->clock_event_reasons.value_or(0)
                                : 0;
  for (const auto& reason : power::clock_event_names()) {
    if (!is_throttle(reason.bit) || ((now ^ was) & reason.bit) == 0) {
      continue;
    }
    const bool started = (now & reason.bit) != 0;
    // Only the readings there are: a recorded log may lack the temperature or the power.
    std::vector<std::string> readings;
    if (started && d.sm_clock_hertz && d.sm_clock_max_hertz) {
      readings.push_back(fmt::format("SM clock {:.0f} of {:.0f} MHz", *d.sm_clock_hertz / 1e6,
                                     *d.sm_clock_max_hertz / 1e6));
      if (d.temperature_gpu_celsius) {
        readings.push_back(fmt::format("{:.0f} C", *d.temperature_gpu_celsius));
      }
      if (d.power_watts) {
        readings.push_back(fmt::format("{:.0f} W", *d.power_watts));
      }
    }
    Event e = device_event(
        cur, d, started ? "warning" : "info", started ? "throttle_start" : "throttle_stop",
        fmt::format(
            "device {}: {} {}{}", d.device, reason.name,
            started ? "holds the clocks down" : "released",
            readings.empty() ? std::string() : fmt::format(" ({})", fmt::join(readings, ", "))));
    put(e.numbers, "temperature_gpu_celsius", d.temperature_gpu_celsius);
    put(e.numbers, "power_watts", d.power_watts);
    put(e.numbers, "power_limit_enforced_watts", d.power_limit_enforced_watts);
    put(e.numbers, "sm_clock_hertz", d.sm_clock_hertz);
    e.numbers["reason_bit"] = static_cast<double>(reason.bit);
    out.push_back(std::move(e));
  }
  if (before != nullptr && !before->lost && d.pcie_gen_current && before->pcie_gen_current &&
      d.pcie_width_current && before->pcie_width_current &&
      (*d.pcie_gen_current != *before->pcie_gen_current ||
       *d.pcie_width_current != *before->pcie_width_current)) {
    Event e =
        device_event(cur, d, "warning", "link_retrain",
                     fmt::format("device {}: PCIe link retrained from Gen{} x{} to Gen{} x{}",
                                 d.device, *before->pcie_gen_current, *before->pcie_width_current,
                                 *d.pcie_gen_current, *d.pcie_width_current));
    e.numbers = {{"from_generation", *before->pcie_gen_current},
                 {"from_width", *before->pcie_width_current},
                 {"to_generation", *d.pcie_gen_current},
                 {"to_width", *d.pcie_width_current}};
    out.push_back(std::move(e));
  }
  for (const auto& x : d.xids) {
    Event e =
        device_event(cur, d, "error", "xid",
                     fmt::format("device {}: XID {} reported by the driver", d.device, x.xid));
    e.time_unix_nanos = x.time_unix_nanos != 0 ? x.time_unix_nanos : cur.time_unix_nanos;
    e.numbers = {{"xid", static_cast<double>(x.xid)}};
    out.push_back(std::move(e));
  }
}

}  // namespace

std::vector<Event> detect_events(const Snapshot* previous, const Snapshot& current) {
  std::vector<Event> out;
  for (const auto& d : current.devices) {
    device_events(current, d, find(previous, d), out);
  }
  for (const auto& [source, errors] : current.stats.read_errors) {
    std::uint64_t before = 0;
    if (previous != nullptr) {
      if (const auto it = previous->stats.read_errors.find(source);
          it != previous->stats.read_errors.end()) {
        before = it->second;
      }
    }
    if (errors > before) {
      Event e;
      e.time_unix_nanos = current.time_unix_nanos;
      e.level = "error";
      e.event = "source_error";
      const auto msg = current.stats.last_error.find(source);
      e.message = fmt::format("source {} failed: {}", source,
                              msg == current.stats.last_error.end() ? "" : msg->second);
      e.numbers = {{"failures", static_cast<double>(errors)}};
      out.push_back(std::move(e));
    }
  }
  const std::uint64_t dropped_before = previous != nullptr ? previous->stats.dropped_readings : 0;
  if (current.stats.dropped_readings > dropped_before) {
    Event e;
    e.time_unix_nanos = current.time_unix_nanos;
    e.level = "warning";
    e.event = "readings_dropped";
    e.message = fmt::format("{} reading(s) outside their physical range were left out",
                            current.stats.dropped_readings - dropped_before);
    e.numbers = {{"dropped_total", static_cast<double>(current.stats.dropped_readings)}};
    out.push_back(std::move(e));
  }
  return out;
}

Event governor_event(const power::Action& a, std::int64_t time_unix_nanos) {
  Event e;
  e.time_unix_nanos = time_unix_nanos;
  e.event = std::string("governor_") + power::to_string(a.kind);
  const bool alarming =
      (a.kind == power::ActionKind::kNoNewWork || a.kind == power::ActionKind::kDrain) &&
      a.value > 0;
  e.level = !a.error.empty() ? "warning" : alarming ? "warning" : "info";
  e.device = a.device;
  std::string outcome;
  const bool scheduler = a.kind == power::ActionKind::kSetWeight ||
                         a.kind == power::ActionKind::kNoNewWork ||
                         a.kind == power::ActionKind::kDrain;
  if (a.kind != power::ActionKind::kLog) {
    outcome = a.applied          ? " (applied)"
              : !a.error.empty() ? " (failed: " + a.error + ")"
              : scheduler        ? " (no scheduler in this process)"
                                 : " (dry-run: not applied)";
  }
  e.message = a.reason + outcome;
  for (const auto& [name, value] : a.numbers) {
    e.numbers[name] = value;
  }
  if (a.kind != power::ActionKind::kLog && a.kind != power::ActionKind::kRestore &&
      a.kind != power::ActionKind::kUnlockClocks) {
    e.numbers["value"] = a.value;
  }
  return e;
}

std::string to_json_line(const Event& e) {
  nlohmann::ordered_json j = {
      {"time", rfc3339(e.time_unix_nanos)}, {"level", e.level}, {"event", e.event}};
  if (!e.device.empty()) {
    j["device"] = e.device;
  }
  j["message"] = e.message;
  for (const auto& [name, value] : e.numbers) {
    if (std::isfinite(value)) {
      j[name] = value;
    }
  }
  // A message quoting bytes that are not UTF-8 (a path, a sensor's text) must not end the daemon.
  return core::dump_replacing_invalid_utf8(j);
}

}  // namespace acco::analyze
