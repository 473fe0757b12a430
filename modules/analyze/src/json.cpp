#include "acco/analyze/json.hpp"

#include <ctime>
#include <string>

#include <fmt/format.h>

namespace acco::analyze {
namespace {

using Json = nlohmann::ordered_json;

template <typename T>
void put(Json& j, const char* name, const std::optional<T>& value) {
  if (value) {
    j[name] = *value;
  }
}

}  // namespace

std::string rfc3339(std::int64_t time_unix_nanos) {
  const std::time_t seconds = static_cast<std::time_t>(time_unix_nanos / 1'000'000'000);
  const auto millis = (time_unix_nanos / 1'000'000) % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                     millis < 0 ? 0 : millis);
}

Json to_json(const power::DeviceSample& s) {
  Json j = {{"device", s.device}, {"uuid", s.uuid},     {"pci_bus_id", s.pci_bus_id},
            {"model", s.model},   {"source", s.source}, {"time_unix_nanos", s.time_unix_nanos}};
  if (s.lost || s.suspended) {
    j["lost"] = s.lost;
    j["suspended"] = s.suspended;
    return j;
  }
  put(j, "temperature_gpu_celsius", s.temperature_gpu_celsius);
  put(j, "temperature_memory_celsius", s.temperature_memory_celsius);
  put(j, "threshold_gpu_max_celsius", s.threshold_gpu_max_celsius);
  put(j, "threshold_slowdown_celsius", s.threshold_slowdown_celsius);
  put(j, "threshold_shutdown_celsius", s.threshold_shutdown_celsius);
  put(j, "threshold_memory_max_celsius", s.threshold_memory_max_celsius);
  put(j, "thermal_margin_celsius", s.thermal_margin_celsius);
  put(j, "power_watts", s.power_watts);
  put(j, "power_limit_enforced_watts", s.power_limit_enforced_watts);
  put(j, "power_limit_requested_watts", s.power_limit_requested_watts);
  put(j, "power_limit_default_watts", s.power_limit_default_watts);
  put(j, "power_limit_min_watts", s.power_limit_min_watts);
  put(j, "power_limit_max_watts", s.power_limit_max_watts);
  put(j, "energy_joules", s.energy_joules);
  put(j, "sm_clock_hertz", s.sm_clock_hertz);
  put(j, "memory_clock_hertz", s.memory_clock_hertz);
  put(j, "sm_clock_max_hertz", s.sm_clock_max_hertz);
  put(j, "memory_clock_max_hertz", s.memory_clock_max_hertz);
  put(j, "pstate", s.pstate);
  put(j, "utilization_ratio", s.utilization_ratio);
  put(j, "memory_utilization_ratio", s.memory_utilization_ratio);
  put(j, "memory_total_bytes", s.memory_total_bytes);
  put(j, "memory_used_bytes", s.memory_used_bytes);
  put(j, "memory_free_bytes", s.memory_free_bytes);
  put(j, "pcie_tx_bytes_per_second", s.pcie_tx_bytes_per_second);
  put(j, "pcie_rx_bytes_per_second", s.pcie_rx_bytes_per_second);
  put(j, "pcie_replays", s.pcie_replays);
  put(j, "pcie_gen_current", s.pcie_gen_current);
  put(j, "pcie_width_current", s.pcie_width_current);
  put(j, "pcie_gen_max", s.pcie_gen_max);
  put(j, "pcie_width_max", s.pcie_width_max);
  if (s.clock_event_reasons) {
    j["clock_event_reasons"] = *s.clock_event_reasons;
    Json active = Json::array();
    for (const auto& e : power::clock_event_names()) {
      if ((*s.clock_event_reasons & e.bit) != 0) {
        active.push_back(e.name);
      }
    }
    j["clock_events"] = active;
  }
  if (!s.throttle_seconds.empty()) {
    j["throttle_seconds"] = s.throttle_seconds;
  }
  if (!s.nvlinks.empty()) {
    Json links = Json::array();
    for (const auto& l : s.nvlinks) {
      Json link = {{"link", l.link}, {"up", l.up}};
      put(link, "speed_bytes_per_second", l.speed_bytes_per_second);
      put(link, "tx_bytes", l.tx_bytes);
      put(link, "rx_bytes", l.rx_bytes);
      links.push_back(link);
    }
    j["nvlinks"] = links;
  }
  if (!s.xids.empty()) {
    Json xids = Json::array();
    for (const auto& x : s.xids) {
      xids.push_back({{"xid", x.xid}, {"time_unix_nanos", x.time_unix_nanos}});
    }
    j["xids"] = xids;
  }
  if (s.dropped_readings > 0) {
    j["dropped_readings"] = s.dropped_readings;
  }
  return j;
}

Json to_json(const power::HostSample& h) {
  Json j = {{"time_unix_nanos", h.time_unix_nanos},
            {"cpu", {{"cpus", h.cpu.cpus}, {"seconds", h.cpu.seconds}}},
            {"memory_bytes", h.memory_bytes}};
  Json pressure = Json::array();
  for (const auto& p : h.pressure) {
    pressure.push_back({{"resource", p.resource},
                        {"kind", p.kind},
                        {"stalled_seconds", p.stalled_seconds},
                        {"avg10_ratio", p.avg10_ratio}});
  }
  j["pressure"] = pressure;
  Json disks = Json::array();
  for (const auto& d : h.disks) {
    disks.push_back({{"name", d.name},
                     {"read_bytes", d.read_bytes},
                     {"written_bytes", d.written_bytes},
                     {"reads", d.reads},
                     {"writes", d.writes},
                     {"io_seconds", d.io_seconds}});
    if (!d.members.empty()) {
      disks.back()["members"] = d.members;
    }
  }
  j["disks"] = disks;
  Json net = Json::array();
  for (const auto& n : h.net) {
    net.push_back({{"name", n.name},
                   {"rx_bytes", n.rx_bytes},
                   {"tx_bytes", n.tx_bytes},
                   {"rx_errors", n.rx_errors},
                   {"tx_errors", n.tx_errors},
                   {"physical", n.physical}});
  }
  j["net"] = net;
  Json ib = Json::array();
  for (const auto& p : h.ib_ports) {
    Json port = {{"device", p.device}, {"port", p.port}};
    put(port, "rx_bytes", p.rx_bytes);
    put(port, "tx_bytes", p.tx_bytes);
    put(port, "symbol_errors", p.symbol_errors);
    put(port, "link_downed", p.link_downed);
    ib.push_back(port);
  }
  j["ib_ports"] = ib;
  Json hwmon = Json::array();
  for (const auto& t : h.hwmon) {
    hwmon.push_back({{"chip", t.chip}, {"sensor", t.sensor}, {"celsius", t.celsius}});
  }
  j["hwmon"] = hwmon;
  Json rapl = Json::array();
  for (const auto& r : h.rapl) {
    Json zone = {{"zone", r.zone}, {"name", r.name}, {"joules", r.joules}};
    put(zone, "power_limit_watts", r.power_limit_watts);
    rapl.push_back(zone);
  }
  j["rapl"] = rapl;
  j["issues"] = h.issues;
  return j;
}

Json to_json(const Snapshot& s) {
  Json devices = Json::array();
  for (const auto& d : s.devices) {
    devices.push_back(to_json(d));
  }
  Json j = {{"time", rfc3339(s.time_unix_nanos)},
            {"time_unix_nanos", s.time_unix_nanos},
            {"devices", devices}};
  if (s.host) {
    j["host"] = to_json(*s.host);
  }
  j["sampler"] = {{"rounds", s.stats.rounds},
                  {"interval_seconds", s.stats.interval_seconds},
                  {"last_round_seconds", s.stats.last_round_seconds},
                  {"cpu_seconds", s.stats.cpu_seconds},
                  {"dropped_readings", s.stats.dropped_readings},
                  {"read_errors", s.stats.read_errors},
                  {"last_error", s.stats.last_error}};
  return j;
}

}  // namespace acco::analyze
