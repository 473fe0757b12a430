// PCIe checks: links that trained below what both ends support, slots that cap a device, links
// above a device that narrow its path to the CPU, switch uplinks that host-bound devices
// oversubscribe, and ACS on the bridges that peer traffic crosses.
#include <algorithm>
#include <cstdint>
#include <map>

#include <fmt/format.h>

#include "acco/core/units.hpp"
#include "acco/topo/link_model.hpp"

#include "checks/check_support.hpp"
#include "checks/rule_checks.hpp"

namespace acco::topo::detail {
namespace {

using units::format_rate;

}  // namespace

void check_pcie_link_downtrained(const Machine& m, std::vector<Finding>& out) {
  for (const auto& d : m.pci_devices) {
    if (!d.current.known() || !d.max.known() || !owns_its_link(m, d)) {
      continue;
    }
    const PciDevice* port = m.find(d.parent);
    PcieLink capable = d.max;
    if (port != nullptr && port->max.known()) {
      capable.speed_gts = std::min(capable.speed_gts, port->max.speed_gts);
      capable.width = std::min(capable.width, port->max.width);
    }
    const bool narrow = d.current.width < capable.width;
    const bool slow = d.current.speed_gts + 0.01 < capable.speed_gts;
    if (!narrow && !slow) {
      continue;
    }
    Finding f;
    f.devices = {d.address};
    f.evidence = {{attr(d.address, "current_link_speed"), speed_text(d.current.speed_gts)},
                  {attr(d.address, "current_link_width"), std::to_string(d.current.width)},
                  {attr(d.address, "max_link_speed"), speed_text(d.max.speed_gts)},
                  {attr(d.address, "max_link_width"), std::to_string(d.max.width)}};
    if (port != nullptr && port->max.known()) {
      f.evidence.push_back(
          {attr(port->address, "max_link_width"), std::to_string(port->max.width)});
    }
    const auto summary =
        fmt::format("{} runs at {} of a possible {} ({} of {})", name_of(d), describe(d.current),
                    describe(capable), format_rate(d.current_bytes_per_second),
                    format_rate(link_bytes_per_second(capable)));
    if (narrow) {
      // Width never changes with power state, so a narrow link is a physical problem.
      f.severity = d.current.width * 2 <= capable.width ? Severity::kCritical : Severity::kWarning;
      f.message = summary + ": the link trained with fewer lanes than both ends support";
      f.recommendation =
          "Reseat the card and check the riser or cable and the slot's bifurcation setting in "
          "the BIOS; confirm with `lspci -vv -s " +
          d.address + " | grep -E 'LnkCap|LnkSta'`";
    } else if (d.kind == DeviceKind::kGpu) {
      const NvmlGpu* g = m.nvml_gpu(d.address);
      if (g != nullptr && g->pstate && *g->pstate == 0) {
        f.severity = Severity::kWarning;
        f.message = summary + " while busy (performance state P0): a real speed downtrain";
        f.evidence.push_back({"nvml:nvmlDeviceGetPerformanceState", "P0"});
        f.recommendation =
            "Check the slot, riser and BIOS PCIe speed setting (Auto or the card's generation); "
            "confirm under load with `nvidia-smi -q -d PCIE`";
      } else {
        f.severity = Severity::kInfo;
        f.message =
            summary +
            (g != nullptr && g->pstate
                 ? fmt::format(" in performance state P{}: possibly idle power saving", *g->pstate)
                 : std::string(": possibly idle power saving (no evidence that the GPU is busy)"));
        if (g != nullptr && g->pstate) {
          f.evidence.push_back(
              {"nvml:nvmlDeviceGetPerformanceState", fmt::format("P{}", *g->pstate)});
        }
        f.recommendation =
            "GPUs lower their link speed when idle; re-check while the GPU is busy (`nvidia-smi "
            "--query-gpu=pstate,pcie.link.gen.gpucurrent,pcie.link.gen.max --format=csv` under "
            "load) before acting";
      }
    } else {
      f.severity = Severity::kWarning;
      f.message = summary + ": the link trained at a lower speed than both ends support";
      f.recommendation =
          "Check the slot and the BIOS PCIe speed setting for this port; confirm "
          "with `lspci -vv -s " +
          d.address + " | grep -E 'LnkCap|LnkSta'`";
    }
    out.push_back(std::move(f));
  }
}

void check_pcie_slot_limited(const Machine& m, std::vector<Finding>& out) {
  for (const auto& d : m.pci_devices) {
    const PciDevice* port = m.find(d.parent);
    if (port == nullptr || !d.max.known() || !port->max.known() || !owns_its_link(m, d) ||
        d.kind == DeviceKind::kBridge) {
      continue;
    }
    if (d.max.speed_gts <= port->max.speed_gts + 0.01 && d.max.width <= port->max.width) {
      continue;
    }
    Finding f;
    f.severity = Severity::kWarning;
    f.devices = {d.address, port->address};
    f.evidence = {{attr(d.address, "max_link_speed"), speed_text(d.max.speed_gts)},
                  {attr(d.address, "max_link_width"), std::to_string(d.max.width)},
                  {attr(port->address, "max_link_speed"), speed_text(port->max.speed_gts)},
                  {attr(port->address, "max_link_width"), std::to_string(port->max.width)}};
    if (const auto internal = internal_link_reason(m, d); !internal.empty()) {
      // A function built into a chipset or SoC: there is no slot, and the port's figures are
      // the chipset's emulation, not a limit its traffic meets.
      f.severity = Severity::kInfo;
      f.evidence.push_back(
          {attr(d.address, "current_link_speed"), speed_text(d.current.speed_gts)});
      f.evidence.push_back(
          {attr(port->address, "current_link_speed"), speed_text(port->current.speed_gts)});
      // In a guest the same two readings mean a passed-through device behind a port the
      // hypervisor emulates (QEMU's root and switch ports show fixed figures).
      f.message = m.hypervisor
                      ? fmt::format(
                            "{} sits behind a port the hypervisor emulates ({}): its traffic "
                            "crosses the host's physical link, which this guest cannot read, so "
                            "{}'s {} is not a limit on it",
                            name_of(d), internal, port->address, describe(port->max))
                      : fmt::format(
                            "{} is built into the chipset or SoC ({}): its traffic does not cross "
                            "a PCIe slot, so its port {}'s {} is not a limit on it and there is "
                            "no slot to change",
                            name_of(d), internal, port->address, describe(port->max));
      // In a guest the shared rewrite for virtual machines gives the recommendation.
      f.recommendation =
          "Nothing to move; to know what it carries, measure its ports themselves (iperf3, "
          "ib_write_bw)";
      out.push_back(std::move(f));
      continue;
    }
    f.message = fmt::format(
        "{} supports {} but its port {} supports only {}: the slot caps it at {} instead of {}",
        name_of(d), describe(d.max), port->address, describe(port->max),
        format_rate(d.capable_bytes_per_second), format_rate(link_bytes_per_second(d.max)));
    f.recommendation =
        d.slot.empty()
            ? "Move the card to a slot wired for its full generation and width (see the board "
              "manual), or check the BIOS link speed and bifurcation settings for this port"
            : fmt::format(
                  "Move the card out of slot {} to a slot wired for {}, or check the BIOS "
                  "link speed and bifurcation settings for this port",
                  d.slot, describe(d.max));
    out.push_back(std::move(f));
  }
}

void check_pcie_path_bottleneck(const Machine& m, std::vector<Finding>& out) {
  for (const auto& d : m.pci_devices) {
    if (!is_endpoint_of_interest(d) || d.path_bytes_per_second <= 0 ||
        d.path_limited_by == d.address || d.path_limited_by.empty()) {
      continue;
    }
    const double own =
        d.capable_bytes_per_second > 0 ? d.capable_bytes_per_second : d.current_bytes_per_second;
    if (d.path_bytes_per_second >= own * 0.999) {
      continue;
    }
    const PciDevice* at = m.find(d.path_limited_by);
    Finding f;
    f.severity = Severity::kWarning;
    f.devices = {d.address, d.path_limited_by};
    f.evidence = {{attr(d.address, "current_link_width"), std::to_string(d.current.width)},
                  {attr(at->address, "current_link_speed"), speed_text(at->current.speed_gts)},
                  {attr(at->address, "current_link_width"), std::to_string(at->current.width)}};
    f.message = fmt::format(
        "{} can carry {} on its own link, but the path to the CPU is limited to {} by the {} link "
        "of {}",
        name_of(d), format_rate(own), format_rate(d.path_bytes_per_second), describe(at->current),
        at->address);
    f.recommendation = fmt::format(
        "Check why {} trained at {} (reseat, cable, BIOS bifurcation) or move the device under a "
        "wider uplink; `lspci -vv -s {} | grep LnkSta`",
        at->address, describe(at->current), at->address);
    out.push_back(std::move(f));
  }
}

void check_pcie_uplink_oversubscribed(const Machine& m, std::vector<Finding>& out) {
  for (const auto& up : m.pci_devices) {
    if (role_of(m, up) != PortRole::kUpstream) {
      continue;
    }
    const double uplink =
        up.current_bytes_per_second > 0 ? up.current_bytes_per_second : up.capable_bytes_per_second;
    if (uplink <= 0) {
      continue;
    }
    // Host-bound traffic crosses the uplink. GPU<->NIC traffic goes device to device through
    // the switch when a GPUDirect RDMA peer-memory client is loaded, so a NIC counts only
    // without one, or when no GPU sits below this switch to take its traffic. The dma-buf path
    // is not counted: sysfs shows only that the kernel could use it. A multi-function card (a
    // dual-port NIC) shares one link and counts once.
    const auto below_up = [&](const PciDevice& d) {
      const auto chain = ancestors(m, d.address);
      return std::find(chain.begin(), chain.end(), up.address) != chain.end();
    };
    std::vector<PhysicalDevice> consumers;
    bool gpu_below = false;
    for (auto& card : physical_devices(m)) {
      if (below_up(card.first())) {
        const auto kind = card.first().kind;
        gpu_below = gpu_below || kind == DeviceKind::kGpu || kind == DeviceKind::kAccelerator;
        consumers.push_back(std::move(card));
      }
    }
    const bool gdr = m.gpudirect.rdma_loaded && gpu_below;
    double demand = 0;
    std::vector<std::string> below;
    std::map<DeviceKind, int> counts;
    for (const auto& card : consumers) {
      const auto& d = card.first();
      if (d.kind == DeviceKind::kNic && gdr) {
        continue;
      }
      demand += d.capable_bytes_per_second;
      const auto addresses = card.addresses();
      below.insert(below.end(), addresses.begin(), addresses.end());
      ++counts[d.kind];
    }
    const double ratio = demand / uplink;
    if (below.empty() || ratio <= 1.01) {
      continue;
    }
    std::string what;
    for (const auto& [kind, n] : counts) {
      what +=
          fmt::format("{}{} {}{}", what.empty() ? "" : " + ", n, to_string(kind), n > 1 ? "s" : "");
    }
    Finding f;
    f.severity = Severity::kWarning;
    f.devices = {up.address};
    f.devices.insert(f.devices.end(), below.begin(), below.end());
    f.evidence = {{attr(up.address, "current_link_speed"), speed_text(up.current.speed_gts)},
                  {attr(up.address, "current_link_width"), std::to_string(up.current.width)}};
    f.message = fmt::format(
        "{} behind switch uplink {} ({}, {}) can demand {} of host traffic: {:.1f}x "
        "oversubscribed",
        what, up.address, describe(up.current), format_rate(uplink), format_rate(demand), ratio);
    f.recommendation =
        "Spread host-bound devices over switches or root ports, or schedule host transfers of "
        "devices behind this switch so they do not overlap";
    out.push_back(std::move(f));
  }
}

void check_acs_p2p_redirect(const Machine& m, std::vector<Finding>& out) {
  if (!m.sysfs_read) {
    return;  // no configuration space in an hwloc XML export
  }
  // Bridges that peer traffic between accelerators and NICs crosses: every bridge above two or
  // more such devices.
  std::map<std::string, int> below;
  for (const auto& d : m.pci_devices) {
    if (d.kind == DeviceKind::kGpu || d.kind == DeviceKind::kAccelerator ||
        d.kind == DeviceKind::kNic) {
      for (const auto& up : ancestors(m, d.address)) {
        ++below[up];
      }
    }
  }
  std::vector<const PciDevice*> shared;
  for (const auto& d : m.pci_devices) {
    // A downstream port holds one device but its ACS decides whether that device's peer
    // requests go up to the root complex, so every bridge on a shared subtree counts.
    if (d.kind != DeviceKind::kBridge) {
      continue;
    }
    const auto chain = ancestors(m, d.address);
    bool on_shared = below[d.address] >= 2;
    for (const auto& up : chain) {
      on_shared = on_shared || (below[up] >= 2 && role_of(m, m.find(up)) != PortRole::kRoot);
    }
    if (on_shared && below[d.address] >= 1 && role_of(m, d) != PortRole::kRoot) {
      shared.push_back(&d);
    }
  }
  if (shared.empty()) {
    return;
  }
  constexpr std::uint16_t kRedirect = (1U << 2) | (1U << 3);  // ReqRedir | CmpltRedir
  Finding redirect;
  redirect.severity = Severity::kWarning;
  std::vector<std::string> unreadable;
  for (const auto* b : shared) {
    if (!b->config_extended_readable) {
      unreadable.push_back(b->address);
    } else if (b->acs_control && (*b->acs_control & kRedirect) != 0) {
      redirect.devices.push_back(b->address);
      redirect.evidence.push_back(
          {attr(b->address, "config"), fmt::format("ACSCtl 0x{:04x}", *b->acs_control)});
    }
  }
  if (!redirect.devices.empty()) {
    redirect.message = fmt::format(
        "ACS request/completion redirect is on at {} bridge(s) between GPUs and NICs: "
        "peer-to-peer traffic is sent up to the root complex instead of across the switch",
        redirect.devices.size());
    redirect.recommendation = fmt::format(
        "On bare metal disable ACS redirect: `setpci -s {} ECAP_ACS+0x6.w=0000` per bridge (lost "
        "on reboot; persist with a udev rule or the BIOS ACS setting). On a virtualization host "
        "that passes devices to VMs keep ACS and enable ATS instead",
        redirect.devices.front());
    out.push_back(std::move(redirect));
  }
  if (!unreadable.empty()) {
    Finding f;
    f.severity = Severity::kInfo;
    f.devices = unreadable;
    f.evidence = {{attr(unreadable.front(), "config"), "64 bytes readable (needs root for 4096)"}};
    f.message = fmt::format(
        "ACS could not be checked on {} bridge(s) between GPUs and NICs: the extended "
        "configuration space is readable only by root",
        unreadable.size());
    f.recommendation = "Run `sudo acco probe` to check ACS, or `sudo lspci -vvv | grep ACSCtl`";
    out.push_back(std::move(f));
  }
}

}  // namespace acco::topo::detail
