#include "acco/topo/machine.hpp"

#include <algorithm>

namespace acco::topo {

const char* to_string(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kGpu:
      return "gpu";
    case DeviceKind::kAccelerator:
      return "accelerator";
    case DeviceKind::kNic:
      return "nic";
    case DeviceKind::kNvme:
      return "nvme";
    case DeviceKind::kStorage:
      return "storage";
    case DeviceKind::kBridge:
      return "bridge";
    case DeviceKind::kNvSwitch:
      return "nvswitch";
    case DeviceKind::kHostBridge:
      return "host-bridge";
    case DeviceKind::kOther:
      return "other";
  }
  return "other";
}

const PciDevice* Machine::find(const std::string& address) const {
  if (address.empty()) {
    return nullptr;
  }
  const auto it =
      std::lower_bound(pci_devices.begin(), pci_devices.end(), address,
                       [](const PciDevice& d, const std::string& a) { return d.address < a; });
  if (it != pci_devices.end() && it->address == address) {
    return &*it;
  }
  // Callers may build a machine by hand without sorting; fall back to a scan.
  const auto scan = std::find_if(pci_devices.begin(), pci_devices.end(),
                                 [&](const PciDevice& d) { return d.address == address; });
  return scan == pci_devices.end() ? nullptr : &*scan;
}

const NvmlGpu* Machine::nvml_gpu(const std::string& address) const {
  const auto it = std::find_if(nvml.gpus.begin(), nvml.gpus.end(),
                               [&](const NvmlGpu& g) { return g.pci == address; });
  return it == nvml.gpus.end() ? nullptr : &*it;
}

int Machine::package_of_node(int numa_node) const {
  const auto it = std::find_if(numa_nodes.begin(), numa_nodes.end(),
                               [&](const NumaNode& n) { return n.id == numa_node; });
  return it == numa_nodes.end() ? -1 : it->package;
}

}  // namespace acco::topo
