#include "acco/bench/machine_summary.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "acco/topo/link_model.hpp"

namespace acco::bench {
namespace {

bool is_accelerator(const topo::PciDevice& d) {
  return d.kind == topo::DeviceKind::kGpu || d.kind == topo::DeviceKind::kAccelerator;
}

std::string ids(const topo::PciDevice& d) {
  return fmt::format("{:04x}:{:04x}", d.vendor_id, d.device_id);
}

bool iequal(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

}  // namespace

nlohmann::json machine_summary(const topo::Machine& machine) {
  std::size_t cpus = 0;
  std::uint64_t memory = 0;
  for (const auto& node : machine.numa_nodes) {
    cpus += node.cpus.size();
    memory += node.memory_bytes;
  }
  nlohmann::json accelerators = nlohmann::json::array();
  for (const auto& d : machine.pci_devices) {
    if (!is_accelerator(d)) {
      continue;
    }
    // NVML's name, else the PCI ID database's (topo::name_devices puts NVML's in model too,
    // but a machine built by hand may have only NVML's), else the ids.
    const auto* nvml = machine.nvml_gpu(d.address);
    const std::string name = nvml != nullptr && !nvml->name.empty() ? nvml->name
                             : !d.model.empty()                     ? d.model
                                                                    : ids(d);
    accelerators.push_back({{"pci", d.address},
                            {"name", name},
                            {"vendor_id", fmt::format("0x{:04x}", d.vendor_id)},
                            {"device_id", fmt::format("0x{:04x}", d.device_id)},
                            {"numa_node", d.numa_node},
                            {"link_current", topo::describe(d.current)},
                            {"link_max", topo::describe(d.max)},
                            {"path_bytes_per_second", d.path_bytes_per_second > 0
                                                          ? nlohmann::json(d.path_bytes_per_second)
                                                          : nlohmann::json(nullptr)}});
  }
  return {
      {"hostname", machine.hostname},
      {"kernel", machine.kernel},
      {"hypervisor", machine.hypervisor},
      {"numa_nodes", machine.numa_nodes.size()},
      {"cpus", cpus},
      {"memory_bytes", memory},
      {"nvml_driver_version", machine.nvml.available ? nlohmann::json(machine.nvml.driver_version)
                                                     : nlohmann::json(nullptr)},
      {"iommu_enabled", machine.iommu.enabled},
      {"accelerators", std::move(accelerators)}};
}

void name_from_devices(nlohmann::json& summary, const std::vector<device::DeviceInfo>& devices) {
  const auto accelerators = summary.find("accelerators");
  if (accelerators == summary.end() || !accelerators->is_array()) {
    return;
  }
  for (auto& a : *accelerators) {
    const auto pci = a.value("pci", std::string());
    for (const auto& d : devices) {
      // The driver's bus ids are lower case as sysfs's are; compare without case all the same.
      if (!d.pci.empty() && !d.name.empty() && iequal(d.pci, pci)) {
        a["name"] = d.name;
        break;
      }
    }
  }
}

std::string machine_fingerprint(const topo::Machine& machine) {
  // FNV-1a: tiny, stable across platforms and releases, unlike std::hash.
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  const auto mix = [&hash](std::string_view text) {
    for (const char c : text) {
      hash ^= static_cast<unsigned char>(c);
      hash *= 0x100000001b3ULL;
    }
  };
  for (const auto& d : machine.pci_devices) {
    if (is_accelerator(d)) {
      mix(fmt::format("{}={};", d.address, ids(d)));
    }
  }
  return fmt::format("{}-{:016x}", machine.hostname.empty() ? "unknown-host" : machine.hostname,
                     hash);
}

}  // namespace acco::bench
