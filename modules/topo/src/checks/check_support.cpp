#include "checks/check_support.hpp"

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "acco/topo/link_model.hpp"

namespace acco::topo::detail {
namespace {

// Walks up the bridges to the first whose role is known (a root port has no parent; below a
// non-bridge sits an upstream port), then back down: below a root or downstream port sits an
// upstream port, below an upstream port downstream ports. The bound stops a snapshot edited by
// hand into a loop.
PortRole bridge_role(const Machine& m, const PciDevice& d) {
  if (d.kind != DeviceKind::kBridge) {
    return PortRole::kNone;
  }
  constexpr std::size_t kMaxDepth = 64;
  std::vector<const PciDevice*> chain = {&d};
  PortRole role = PortRole::kRoot;
  while (true) {
    const PciDevice* parent = m.find(chain.back()->parent);
    if (parent == nullptr || chain.size() > kMaxDepth + 1) {
      role = PortRole::kRoot;
      break;
    }
    if (parent->kind != DeviceKind::kBridge) {
      role = PortRole::kUpstream;
      break;
    }
    chain.push_back(parent);
  }
  for (std::size_t i = chain.size() - 1; i > 0; --i) {
    role = role == PortRole::kUpstream ? PortRole::kDownstream : PortRole::kUpstream;
  }
  return role;
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

std::vector<Evidence> numa_evidence(const PciDevice& d) {
  if (!d.numa_evidence.empty()) {
    return d.numa_evidence;
  }
  return {{attr(d.address, "numa_node"), std::to_string(d.numa_node)}};
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

std::vector<std::string> gdr_gpus(const Machine& m) {
  std::vector<std::string> gpus;
  for (const auto& d : m.pci_devices) {
    const std::uint32_t sub_class = d.class_code >> 8;
    const bool amd = d.vendor_id == 0x1002 &&
                     (sub_class == 0x0302 || sub_class == 0x0380 || (d.class_code >> 16) == 0x12);
    if ((d.kind == DeviceKind::kGpu && d.vendor_id == 0x10de) ||
        (amd && (d.kind == DeviceKind::kGpu || d.kind == DeviceKind::kAccelerator))) {
      gpus.push_back(d.address);
    }
  }
  return gpus;
}

std::vector<Evidence> dmabuf_rdma_evidence(const Machine& m) {
  // osrelease: "5.15.0-1063-nvidia", "6.1.0-28-amd64".
  int major = 0;
  int minor = 0;
  const char* const end = m.kernel.data() + m.kernel.size();
  const auto [dot, major_error] = std::from_chars(m.kernel.data(), end, major);
  if (major_error != std::errc() || dot == end || *dot != '.' ||
      std::from_chars(dot + 1, end, minor).ec != std::errc() ||
      std::pair{major, minor} < std::pair{5, 12}) {
    return {};
  }
  std::vector<Evidence> evidence = {{"/proc/sys/kernel/osrelease", m.kernel}};
  std::set<std::string> seen;
  for (const auto& p : m.ib_ports) {
    const PciDevice* nic = m.find(p.pci);
    if (nic == nullptr || nic->driver != "mlx5_core") {
      return {};
    }
    if (seen.insert(nic->address).second) {
      evidence.push_back({attr(nic->address, "driver"), nic->driver});
    }
  }
  return seen.empty() ? std::vector<Evidence>{} : evidence;
}

std::string name_of(const PhysicalDevice& d) {
  if (d.functions.size() == 1) {
    return name_of(d.first());
  }
  return fmt::format("{} ({} functions: {})", name_of(d.first()), d.functions.size(),
                     fmt::join(d.addresses(), ", "));
}

PortRole role_of(const Machine& m, const PciDevice& d) {
  return bridge_role(m, d);
}

PortRole role_of(const Machine& m, const PciDevice* d) {
  return d == nullptr ? PortRole::kNone : bridge_role(m, *d);
}

bool owns_its_link(const Machine& m, const PciDevice& d) {
  const auto role = role_of(m, d);
  return role == PortRole::kNone || role == PortRole::kUpstream;
}

std::string internal_link_reason(const Machine& m, const PciDevice& d) {
  if (!internal_link(m, d)) {
    return {};
  }
  const PciDevice* port = m.find(d.parent);
  return fmt::format("{} reports {} and its port {} reports {} for the one link between them",
                     d.address, describe(d.current), port->address, describe(port->current));
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
