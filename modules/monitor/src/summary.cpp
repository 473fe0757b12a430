#include "acco/monitor/summary.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "acco/analyze/json.hpp"
#include "acco/analyze/pcie_peak.hpp"
#include "acco/core/json.hpp"
#include "acco/core/units.hpp"
#include "acco/monitor/host_rates.hpp"
#include "acco/topo/link_model.hpp"

namespace acco::monitor {
namespace {

using Json = nlohmann::ordered_json;

template <typename T>
void put_if(Json& j, const char* key, const std::optional<T>& v) {
  if (v) {
    j[key] = *v;
  }
}

Json device_json(const power::DeviceSample& d) {
  Json j = {
      {"device", d.device},         {"uuid", d.uuid},
      {"model", d.model},           {"source", d.source},
      {"pci_bus_id", d.pci_bus_id}, {"state", d.lost ? "lost" : d.suspended ? "suspended" : "ok"}};
  put_if(j, "power_limit_watts", d.power_limit_enforced_watts);
  put_if(j, "power_limit_max_watts", d.power_limit_max_watts);
  // NVML's thresholds: max operating is where the SW thermal slowdown starts, slowdown the HW
  // one, shutdown where the GPU turns itself off; memory max bounds the HBM's temperature.
  std::vector<std::pair<const char*, double>> limits;
  const auto limit = [&](const char* name, const std::optional<double>& celsius) {
    if (celsius) {
      limits.emplace_back(name, *celsius);
    }
  };
  limit("max operating", d.threshold_gpu_max_celsius);
  limit("slowdown", d.threshold_slowdown_celsius);
  limit("shutdown", d.threshold_shutdown_celsius);
  if (d.temperature_memory_celsius) {
    limit("memory max", d.threshold_memory_max_celsius);
  }
  std::stable_sort(limits.begin(), limits.end(),
                   [](const auto& a, const auto& b) { return a.second < b.second; });
  if (!limits.empty()) {
    Json list = Json::array();
    for (const auto& [name, celsius] : limits) {
      list.push_back({{"name", name}, {"celsius", celsius}});
    }
    j["temperature_limits"] = std::move(list);
  }
  put_if(j, "memory_total_bytes", d.memory_total_bytes);
  const double peak = analyze::pcie_peak_bytes_per_second(d);
  if (peak > 0) {
    j["pcie_link"] = "PCIe " + topo::describe({topo::pcie_speed_of_generation(*d.pcie_gen_current),
                                               *d.pcie_width_current});
    j["pcie_peak_bytes_per_second"] = peak;
    j["pcie_peak"] = units::format_rate(peak);
  }
  return j;
}

Json host_json(const HostRates& r) {
  Json j = {{"cpus", r.cpus}};
  put_if(j, "cpu_busy_ratio", r.cpu_busy_ratio);
  // Whole bytes, as /proc/meminfo has them.
  const auto bytes = [](const std::optional<double>& v) {
    return v ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(*v)) : std::nullopt;
  };
  put_if(j, "memory_used_bytes", bytes(r.memory_used_bytes));
  put_if(j, "memory_total_bytes", bytes(r.memory_total_bytes));
  put_if(j, "network_receive_bytes_per_second", r.network_receive_bytes_per_second);
  put_if(j, "network_transmit_bytes_per_second", r.network_transmit_bytes_per_second);
  j["interfaces"] = r.interfaces;
  j["interfaces_left_out"] = r.interfaces_left_out;
  put_if(j, "disk_read_bytes_per_second", r.disk_read_bytes_per_second);
  put_if(j, "disk_written_bytes_per_second", r.disk_written_bytes_per_second);
  j["disks"] = r.disks;
  j["disks_left_out"] = r.disks_left_out;
  return j;
}

}  // namespace

SourcesInfo sources_info(const SourceOptions& options, const std::string& sysroot,
                         const std::string& nvml_note) {
  return {.nvml_mode = options.nvml_mode,
          .nvml_library = options.nvml_library,
          .nvml = nvml_note,
          .simulated = options.simulate,
          .rapl = options.rapl,
          .host = options.host,
          .sysroot = sysroot};
}

std::string summary_json(const analyze::Snapshot& now, const analyze::Snapshot* previous,
                         const SourcesInfo* sources) {
  Json j = {{"time", analyze::rfc3339(now.time_unix_nanos)},
            {"time_unix_nanos", now.time_unix_nanos}};
  if (sources != nullptr) {
    j["sources"] = {{"nvml_mode", sources->nvml_mode}, {"nvml_library", sources->nvml_library},
                    {"nvml", sources->nvml},           {"simulated", sources->simulated},
                    {"rapl", sources->rapl},           {"host", sources->host},
                    {"sysroot", sources->sysroot}};
  } else {
    j["sources"] = nullptr;
  }
  Json devices = Json::array();
  for (const auto& d : now.devices) {
    devices.push_back(device_json(d));
  }
  j["devices"] = std::move(devices);
  if (now.host) {
    const power::HostSample* before =
        previous != nullptr && previous->host ? &*previous->host : nullptr;
    j["host"] = host_json(host_rates(*now.host, before));
  } else {
    j["host"] = nullptr;
  }
  return core::dump_replacing_invalid_utf8(j) + "\n";
}

}  // namespace acco::monitor
