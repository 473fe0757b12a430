#include "acco/monitor/fields.hpp"

#include <algorithm>

#include "acco/analyze/pcie_peak.hpp"

namespace acco::monitor {
namespace {

template <typename T>
std::optional<double> as_double(const std::optional<T>& v) {
  return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
}

}  // namespace

const std::vector<DeviceField>& device_fields() {
  using S = power::DeviceSample;
  // A macro-free table: each entry names the member once in the name and once in the getter.
  static const std::vector<DeviceField> fields = {
      {"temperature_gpu_celsius", "celsius",
       [](const S& s) { return as_double(s.temperature_gpu_celsius); }},
      {"temperature_memory_celsius", "celsius",
       [](const S& s) { return as_double(s.temperature_memory_celsius); }},
      {"thermal_margin_celsius", "celsius",
       [](const S& s) { return as_double(s.thermal_margin_celsius); }},
      {"threshold_gpu_max_celsius", "celsius",
       [](const S& s) { return as_double(s.threshold_gpu_max_celsius); }},
      {"threshold_slowdown_celsius", "celsius",
       [](const S& s) { return as_double(s.threshold_slowdown_celsius); }},
      {"power_watts", "watts", [](const S& s) { return as_double(s.power_watts); }},
      {"power_limit_enforced_watts", "watts",
       [](const S& s) { return as_double(s.power_limit_enforced_watts); }},
      {"power_limit_default_watts", "watts",
       [](const S& s) { return as_double(s.power_limit_default_watts); }},
      {"energy_joules", "joules", [](const S& s) { return as_double(s.energy_joules); }},
      {"sm_clock_hertz", "hertz", [](const S& s) { return as_double(s.sm_clock_hertz); }},
      {"sm_clock_max_hertz", "hertz", [](const S& s) { return as_double(s.sm_clock_max_hertz); }},
      {"memory_clock_hertz", "hertz", [](const S& s) { return as_double(s.memory_clock_hertz); }},
      {"utilization_ratio", "ratio", [](const S& s) { return as_double(s.utilization_ratio); }},
      {"memory_utilization_ratio", "ratio",
       [](const S& s) { return as_double(s.memory_utilization_ratio); }},
      {"memory_used_bytes", "bytes", [](const S& s) { return as_double(s.memory_used_bytes); }},
      {"memory_total_bytes", "bytes", [](const S& s) { return as_double(s.memory_total_bytes); }},
      {"pcie_rx_bytes_per_second", "bytes_per_second",
       [](const S& s) { return as_double(s.pcie_rx_bytes_per_second); }},
      {"pcie_tx_bytes_per_second", "bytes_per_second",
       [](const S& s) { return as_double(s.pcie_tx_bytes_per_second); }},
      {"pcie_rx_link_utilization_ratio", "ratio",
       [](const S& s) {
         const double peak = analyze::pcie_peak_bytes_per_second(s);
         return s.pcie_rx_bytes_per_second && peak > 0
                    ? std::optional<double>(*s.pcie_rx_bytes_per_second / peak)
                    : std::nullopt;
       }},
      {"pcie_tx_link_utilization_ratio", "ratio",
       [](const S& s) {
         const double peak = analyze::pcie_peak_bytes_per_second(s);
         return s.pcie_tx_bytes_per_second && peak > 0
                    ? std::optional<double>(*s.pcie_tx_bytes_per_second / peak)
                    : std::nullopt;
       }},
      {"pcie_replays", "count", [](const S& s) { return as_double(s.pcie_replays); }},
      {"clock_event_reasons", "bitmask",
       [](const S& s) { return as_double(s.clock_event_reasons); }},
  };
  return fields;
}

const DeviceField* find_device_field(std::string_view name) {
  const auto& fields = device_fields();
  const auto it = std::find_if(fields.begin(), fields.end(),
                               [&](const DeviceField& f) { return f.name == name; });
  return it == fields.end() ? nullptr : &*it;
}

}  // namespace acco::monitor
