// Inside a virtual machine: which bridges the hypervisor made, why acco believes it runs in a
// guest, and what a link-derived finding becomes there. A guest reads the link registers of its
// bridges and of passed-through devices as the hypervisor emulates them (QEMU's pcie-root-port
// advertises 16 GT/s x32, its XIO3130 switch ports 2.5 GT/s x1, and a passed-through device's
// link status is negotiated against that emulated port), so no link figure read in a guest is
// evidence of a slow physical link.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "acco/topo/link_model.hpp"

#include "checks/check_support.hpp"
#include "checks/rule_checks.hpp"

namespace acco::topo::detail {
namespace {

struct EmulatedBridge {
  std::uint16_t vendor;
  std::uint16_t device;
  bool virtual_only;  // the vendor makes only virtual devices (Red Hat/QEMU 1b36, VMware 15ad)
  std::string_view model;
};

// The bridges hypervisors emulate (QEMU's docs/pcie.txt and hw/pci-bridge, VMware's vmxnet
// platform). TI's XIO3130 and Intel's 5520 root port are also real (old) silicon, so they count
// only when the machine is already known to be a guest.
constexpr std::array kEmulatedBridges = {
    EmulatedBridge{0x1b36, 0x000c, true, "QEMU pcie-root-port"},
    EmulatedBridge{0x1b36, 0x0001, true, "QEMU pci-bridge"},
    EmulatedBridge{0x1b36, 0x000e, true, "QEMU pcie-pci-bridge"},
    EmulatedBridge{0x1b36, 0x0009, true, "QEMU pxb expander bridge"},
    EmulatedBridge{0x1b36, 0x000b, true, "QEMU pxb-pcie expander bridge"},
    EmulatedBridge{0x15ad, 0x07a0, true, "VMware PCI Express root port"},
    EmulatedBridge{0x15ad, 0x0790, true, "VMware PCI bridge"},
    EmulatedBridge{0x104c, 0x8232, false, "TI XIO3130 upstream port (QEMU x3130-upstream)"},
    EmulatedBridge{0x104c, 0x8233, false, "TI XIO3130 downstream port (QEMU xio3130-downstream)"},
    EmulatedBridge{0x8086, 0x3420, false, "Intel 5520 root port (QEMU ioh3420)"},
};

const EmulatedBridge* emulated_bridge(const PciDevice& d) {
  if (d.kind != DeviceKind::kBridge) {
    return nullptr;
  }
  const auto* it = std::find_if(
      kEmulatedBridges.begin(), kEmulatedBridges.end(),
      [&](const EmulatedBridge& e) { return e.vendor == d.vendor_id && e.device == d.device_id; });
  return it == kEmulatedBridges.end() ? nullptr : it;
}

std::string id_text(const PciDevice& d) {
  return fmt::format("{:04x}:{:04x}", d.vendor_id, d.device_id);
}

}  // namespace

std::string emulated_bridge_model(const Machine& m, const PciDevice& d) {
  if (d.kind != DeviceKind::kBridge) {
    return {};
  }
  if (const auto* e = emulated_bridge(d); e != nullptr && (e->virtual_only || m.hypervisor)) {
    return std::string(e->model);
  }
  // No bridge of a guest is the host's: the hypervisor builds the guest's PCI tree (a physical
  // switch is never passed through on its own).
  return m.hypervisor ? fmt::format("a bridge of the virtual machine ({})", id_text(d))
                      : std::string();
}

std::vector<Evidence> guest_evidence(const Machine& m) {
  if (m.hypervisor) {
    return {{"/proc/cpuinfo", "flags: hypervisor"}};
  }
  // Guests on CPUs without the x86 flag (arm64) still show the hypervisor's own bridges.
  for (const auto& d : m.pci_devices) {
    if (const auto* e = emulated_bridge(d); e != nullptr && e->virtual_only) {
      return {{attr(d.address, "vendor"), fmt::format("0x{:04x}", d.vendor_id)},
              {attr(d.address, "device"), fmt::format("0x{:04x}", d.device_id)}};
    }
  }
  return {};
}

std::vector<const PciDevice*> emulated_bridges(const Machine& m) {
  std::vector<const PciDevice*> out;
  const bool guest = !guest_evidence(m).empty();
  for (const auto& d : m.pci_devices) {
    if (guest && d.kind == DeviceKind::kBridge) {
      out.push_back(&d);
    }
  }
  return out;
}

void reframe_link_finding_for_guest(const Machine& m, Finding& f) {
  const auto guest = guest_evidence(m);
  if (guest.empty()) {
    return;
  }
  // The emulated bridges the finding's devices read their links through: each device itself
  // when it is one, and every bridge above it.
  std::vector<const PciDevice*> ports;
  const auto note = [&](const PciDevice* d) {
    if (d != nullptr && d->kind == DeviceKind::kBridge &&
        std::find(ports.begin(), ports.end(), d) == ports.end()) {
      ports.push_back(d);
    }
  };
  for (const auto& address : f.devices) {
    note(m.find(address));
    for (const auto& up : ancestors(m, address)) {
      note(m.find(up));
    }
  }
  std::string which;
  for (std::size_t i = 0; i < ports.size() && i < 3; ++i) {
    const PciDevice& p = *ports[i];
    which += fmt::format("{}{} ({})", i == 0 ? "" : ", ", p.address, emulated_bridge_model(m, p));
  }
  if (ports.size() > 3) {
    which += fmt::format(" and {} more", ports.size() - 3);
  }
  f.severity = Severity::kInfo;
  f.message += fmt::format(
      "; but this is a virtual machine: {}, so the figures are what the hypervisor chose, not "
      "evidence of a slow physical link",
      ports.empty()
          ? std::string("a passed-through device's link registers are the "
                        "hypervisor's emulation")
          : fmt::format("the link{} read through {} {} emulated", ports.size() > 1 ? "s" : "",
                        which, ports.size() > 1 ? "are" : "is"));
  f.evidence.insert(f.evidence.end(), guest.begin(), guest.end());
  for (std::size_t i = 0; i < ports.size() && i < 2; ++i) {
    f.evidence.push_back(
        {attr(ports[i]->address, "vendor"), fmt::format("0x{:04x}", ports[i]->vendor_id)});
    f.evidence.push_back(
        {attr(ports[i]->address, "device"), fmt::format("0x{:04x}", ports[i]->device_id)});
  }
  f.recommendation =
      "Check the physical link where it is real: on the host (`lspci -vv -s <host BDF> | grep -E "
      "'LnkCap|LnkSta'` for the device passed through) or in the cloud's instance documentation; "
      "inside the guest only a measurement tells what the path carries (`acco bench --cases "
      "'h2d_pinned*,d2h_pinned*'` for a GPU)";
}

}  // namespace acco::topo::detail
