#include "checks/check_support.hpp"

#include <fmt/format.h>

#include "acco/topo/link_model.hpp"

namespace acco::topo::detail {
namespace {

PortRole role_at_depth(const Machine& m, const PciDevice& d, int depth) {
  if (d.kind != DeviceKind::kBridge) {
    return PortRole::kNone;
  }
  const PciDevice* parent = m.find(d.parent);
  if (parent == nullptr || depth > 64) {
    return PortRole::kRoot;
  }
  const auto parent_role = role_at_depth(m, *parent, depth + 1);
  return parent_role == PortRole::kUpstream ? PortRole::kDownstream : PortRole::kUpstream;
}

int rank(const Path& p) {
  return static_cast<int>(p.path_class);
}

}  // namespace

std::string attr(const std::string& address, const char* file) {
  return fmt::format("/sys/bus/pci/devices/{}/{}", address, file);
}

std::string speed_text(double gts) {
  return fmt::format("{:.1f} GT/s PCIe", gts);
}

bool is_endpoint_of_interest(const PciDevice& d) {
  return d.kind == DeviceKind::kGpu || d.kind == DeviceKind::kAccelerator ||
         d.kind == DeviceKind::kNic || d.kind == DeviceKind::kNvme;
}

std::string name_of(const PciDevice& d) {
  return fmt::format("{} {}", to_string(d.kind), d.address);
}

std::vector<std::string> nvidia_gpus(const Machine& m) {
  std::vector<std::string> gpus;
  for (const auto& d : m.pci_devices) {
    if (d.kind == DeviceKind::kGpu && d.vendor_id == 0x10de) {
      gpus.push_back(d.address);
    }
  }
  return gpus;
}

PortRole role_of(const Machine& m, const PciDevice& d) {
  return role_at_depth(m, d, 0);
}

PortRole role_of(const Machine& m, const PciDevice* d) {
  return d == nullptr ? PortRole::kNone : role_at_depth(m, *d, 0);
}

bool owns_its_link(const Machine& m, const PciDevice& d) {
  const auto role = role_of(m, d);
  return role == PortRole::kNone || role == PortRole::kUpstream;
}

std::vector<RemotePeer> gpus_with_remote_nearest(const Machine& m, DeviceKind peer_kind) {
  std::vector<RemotePeer> remote;
  std::vector<const PciDevice*> peers;
  for (const auto& d : m.pci_devices) {
    if (d.kind == peer_kind) {
      peers.push_back(&d);
    }
  }
  if (peers.empty()) {
    return remote;
  }
  for (const auto& g : m.pci_devices) {
    if (g.kind != DeviceKind::kGpu) {
      continue;
    }
    const PciDevice* best = nullptr;
    Path best_path;
    for (const auto* p : peers) {
      const auto path = classify_path(m, g.address, p->address);
      if (best == nullptr || rank(path) < rank(best_path)) {
        best = p;
        best_path = path;
      }
    }
    if (best_path.path_class == PathClass::kSys) {
      remote.push_back({&g, best});
    }
  }
  return remote;
}

}  // namespace acco::topo::detail
