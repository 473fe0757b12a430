#include "acco/topo/checks.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "acco/core/units.hpp"
#include "acco/topo/link_model.hpp"

namespace acco::topo {
namespace {

using units::format_rate;

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

enum class PortRole {
  kNone,
  kRoot,
  kUpstream,
  kDownstream
};

// Without root the PCIe capability's port type is unreadable, so infer it from the nesting: a
// bridge on a root bus is a root port; below a root or downstream port sits an upstream port;
// below an upstream port sit downstream ports.
PortRole role_of(const Machine& m, const PciDevice* d, int depth = 0);

PortRole role_of(const Machine& m, const PciDevice& d, int depth = 0) {
  if (d.kind != DeviceKind::kBridge) {
    return PortRole::kNone;
  }
  const PciDevice* parent = m.find(d.parent);
  if (parent == nullptr || depth > 64) {
    return PortRole::kRoot;
  }
  const auto parent_role = role_of(m, *parent, depth + 1);
  return parent_role == PortRole::kUpstream ? PortRole::kDownstream : PortRole::kUpstream;
}

// A device that is not in the machine (a snapshot edited by hand) has no role.
PortRole role_of(const Machine& m, const PciDevice* d, int depth) {
  return d == nullptr ? PortRole::kNone : role_of(m, *d, depth);
}

// Devices whose own link reading describes a physical link to their parent port: endpoints and
// switch upstream ports. Root and downstream ports report the same link as the device below.
bool owns_its_link(const Machine& m, const PciDevice& d) {
  const auto role = role_of(m, d);
  return role == PortRole::kNone || role == PortRole::kUpstream;
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

void check_downtrained(const Machine& m, std::vector<Finding>& out) {
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
    f.rule = "pcie-link-downtrained";
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

void check_slot_limited(const Machine& m, std::vector<Finding>& out) {
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
    f.rule = "pcie-slot-limited";
    f.severity = Severity::kWarning;
    f.devices = {d.address, port->address};
    f.evidence = {{attr(d.address, "max_link_speed"), speed_text(d.max.speed_gts)},
                  {attr(d.address, "max_link_width"), std::to_string(d.max.width)},
                  {attr(port->address, "max_link_speed"), speed_text(port->max.speed_gts)},
                  {attr(port->address, "max_link_width"), std::to_string(port->max.width)}};
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

void check_path_bottleneck(const Machine& m, std::vector<Finding>& out) {
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
    f.rule = "pcie-path-bottleneck";
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

void check_oversubscription(const Machine& m, std::vector<Finding>& out) {
  for (const auto& up : m.pci_devices) {
    if (role_of(m, up) != PortRole::kUpstream) {
      continue;
    }
    const double uplink =
        up.current_bytes_per_second > 0 ? up.current_bytes_per_second : up.capable_bytes_per_second;
    if (uplink <= 0) {
      continue;
    }
    // Host-bound traffic crosses the uplink; GPU<->NIC traffic stays under the switch when
    // GPUDirect RDMA is loaded, so NICs only count without it.
    double demand = 0;
    std::vector<std::string> below;
    std::map<DeviceKind, int> counts;
    for (const auto& d : m.pci_devices) {
      if (!is_endpoint_of_interest(d)) {
        continue;
      }
      const auto chain = ancestors(m, d.address);
      if (std::find(chain.begin(), chain.end(), up.address) == chain.end()) {
        continue;
      }
      if (d.kind == DeviceKind::kNic && m.gpudirect.rdma_loaded) {
        continue;
      }
      demand += d.capable_bytes_per_second;
      below.push_back(d.address);
      ++counts[d.kind];
    }
    const double ratio = demand / uplink;
    if (below.size() < 1 || ratio <= 1.01) {
      continue;
    }
    std::string what;
    for (const auto& [kind, n] : counts) {
      what +=
          fmt::format("{}{} {}{}", what.empty() ? "" : " + ", n, to_string(kind), n > 1 ? "s" : "");
    }
    Finding f;
    f.rule = "pcie-uplink-oversubscribed";
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

int rank(const Path& p) {
  return static_cast<int>(p.path_class);
}

void check_remote(const Machine& m, DeviceKind peer_kind, const char* rule,
                  std::vector<Finding>& out) {
  std::vector<const PciDevice*> peers;
  for (const auto& d : m.pci_devices) {
    if (d.kind == peer_kind) {
      peers.push_back(&d);
    }
  }
  if (peers.empty()) {
    return;
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
    if (best_path.path_class != PathClass::kSys) {
      continue;
    }
    Finding f;
    f.rule = rule;
    f.severity = Severity::kWarning;
    f.devices = {g.address, best->address};
    f.evidence = {{attr(g.address, "numa_node"), std::to_string(g.numa_node)},
                  {attr(best->address, "numa_node"), std::to_string(best->numa_node)}};
    if (peer_kind == DeviceKind::kNic) {
      f.message = fmt::format(
          "gpu {} has no NIC on its socket: the nearest, {}, is across the CPU interconnect "
          "(SYS), so GPUDirect RDMA traffic crosses sockets",
          g.address, best->address);
      f.recommendation =
          "Install a NIC on the GPU's socket (ideally under the same PCIe switch), or pin the "
          "rank using this GPU to the NIC's NUMA node with `numactl --cpunodebind=" +
          std::to_string(best->numa_node) + "` and pick NICs with NCCL_IB_HCA";
    } else {
      f.message = fmt::format(
          "gpu {} has no NVMe drive on its socket: the nearest, {}, is across the CPU "
          "interconnect (SYS), so storage-to-GPU reads (GPUDirect Storage) cross sockets",
          g.address, best->address);
      f.recommendation =
          "Place an NVMe drive on each GPU socket, or stage data for this GPU from a drive on "
          "NUMA node " +
          std::to_string(g.numa_node);
    }
    out.push_back(std::move(f));
  }
}

void check_numa_unknown(const Machine& m, std::vector<Finding>& out) {
  if (m.numa_nodes.size() <= 1) {
    return;
  }
  Finding f;
  f.rule = "numa-unknown";
  f.severity = Severity::kWarning;
  for (const auto& d : m.pci_devices) {
    if (is_endpoint_of_interest(d) && d.numa_node < 0) {
      f.devices.push_back(d.address);
      if (f.evidence.size() < 4) {
        f.evidence.push_back({attr(d.address, "numa_node"), "-1"});
      }
    }
  }
  if (f.devices.empty()) {
    return;
  }
  f.message = fmt::format(
      "{} device(s) report numa_node -1 on a host with {} NUMA nodes: the kernel does not know "
      "which socket they hang off, so CPU and memory placement for them is a guess",
      f.devices.size(), m.numa_nodes.size());
  f.recommendation =
      m.hypervisor
          ? "Expose virtual NUMA to the guest with vCPU pinning (libvirt <numa> and <numatune>), "
            "and give NCCL a topology file (NCCL_TOPO_FILE)"
          : "Enable NUMA/SRAT reporting in the BIOS (ACPI _PXM) and update the firmware; until "
            "then bind by `local_cpulist` of each device";
  out.push_back(std::move(f));
}

std::string ib_attr(const IbPort& p, const char* file) {
  return fmt::format("/sys/class/infiniband/{}/ports/{}/{}", p.device, p.port, file);
}

void check_ib(const Machine& m, std::vector<Finding>& out) {
  std::map<std::string, double> best_rate;  // per link layer
  for (const auto& p : m.ib_ports) {
    if (p.state == 4) {
      best_rate[p.link_layer] = std::max(best_rate[p.link_layer], p.rate_gbps);
    }
  }
  for (const auto& p : m.ib_ports) {
    const std::string who = fmt::format("{} port {}", p.device, p.port);
    std::vector<std::string> devices = {p.device};
    if (!p.pci.empty()) {
      devices.push_back(p.pci);
    }
    if (p.state != 4) {
      Finding f;
      f.rule = "ib-port-down";
      f.severity = Severity::kCritical;
      f.devices = devices;
      f.evidence = {{ib_attr(p, "state"), p.state_text},
                    {ib_attr(p, "phys_state"), p.phys_state_text}};
      const char* cause = p.phys_state == 2   ? "no peer or cable detected (Polling)"
                          : p.phys_state == 3 ? "the port is disabled"
                          : p.phys_state == 5 ? "the physical link is up but no subnet manager "
                                                "has activated the port"
                                              : "the port is not active";
      f.message = fmt::format("{} ({}) is {}: {}", who, p.link_layer, p.state_text, cause);
      f.recommendation =
          p.phys_state == 5
              ? "Check that a subnet manager runs on the fabric (`sminfo`, `systemctl status "
                "opensm`) and see `ibstat " +
                    p.device + "`"
              : "Check the cable and the switch port, then `ibstat " + p.device +
                    "`; enable the port with `ibportstate` if it was disabled";
      out.push_back(std::move(f));
      continue;
    }
    const double best = best_rate[p.link_layer];
    if (p.rate_gbps + 0.01 < best || (p.lanes > 0 && p.lanes < 4 && p.link_layer == "InfiniBand")) {
      Finding f;
      f.rule = "ib-rate-low";
      f.severity = Severity::kWarning;
      f.devices = devices;
      f.evidence = {{ib_attr(p, "rate"), p.rate_text}};
      f.message =
          p.rate_gbps + 0.01 < best
              ? fmt::format("{} runs at {} while other active {} ports here run at {} Gb/s", who,
                            p.rate_text, p.link_layer, best)
              : fmt::format("{} runs at {} with only {} lane(s)", who, p.rate_text, p.lanes);
      f.recommendation = "Check the cable type and the switch port configuration; `ibstat " +
                         p.device + "` shows the negotiated rate and `mlxlink -d " + p.device +
                         "` the cable";
      out.push_back(std::move(f));
    }
  }
}

void check_nic_pcie(const Machine& m, std::vector<Finding>& out) {
  std::map<std::string, std::pair<double, std::vector<Evidence>>> port_bits;  // per PCI function
  std::set<std::string> has_ib;
  for (const auto& p : m.ib_ports) {
    if (p.state == 4 && !p.pci.empty()) {
      port_bits[p.pci].first += p.rate_gbps * 1e9;
      port_bits[p.pci].second.push_back({ib_attr(p, "rate"), p.rate_text});
      has_ib.insert(p.pci);
    }
  }
  for (const auto& n : m.net_interfaces) {
    if (!n.pci.empty() && n.speed_mbps && has_ib.count(n.pci) == 0 && n.operstate == "up") {
      port_bits[n.pci].first += static_cast<double>(*n.speed_mbps) * 1e6;
      port_bits[n.pci].second.push_back(
          {fmt::format("/sys/class/net/{}/speed", n.name), std::to_string(*n.speed_mbps)});
    }
  }
  for (const auto& [pci, entry] : port_bits) {
    const PciDevice* d = m.find(pci);
    if (d == nullptr) {
      continue;
    }
    const double pcie =
        d->path_bytes_per_second > 0 ? d->path_bytes_per_second : d->current_bytes_per_second;
    const double needed = entry.first / 8;
    if (pcie <= 0 || pcie >= needed) {
      continue;
    }
    Finding f;
    f.rule = "nic-pcie-limited";
    f.severity = Severity::kWarning;
    f.devices = {pci};
    f.evidence = entry.second;
    f.evidence.push_back({attr(pci, "current_link_speed"), speed_text(d->current.speed_gts)});
    f.evidence.push_back({attr(pci, "current_link_width"), std::to_string(d->current.width)});
    f.message = fmt::format(
        "nic {} has {} of network ports but its PCIe path carries only {} ({}, {} needed): the "
        "host link, not the network, limits it",
        pci, units::format_bit_rate(entry.first), format_rate(pcie), describe(d->current),
        format_rate(needed));
    f.recommendation = fmt::format(
        "Move the NIC to a slot with at least {} or check its link training (`lspci -vv -s {} | "
        "grep LnkSta`)",
        needed > 31.5e9 ? "Gen5 x16" : "Gen4 x16", pci);
    out.push_back(std::move(f));
  }
}

void check_iommu(const Machine& m, std::vector<Finding>& out) {
  if (!m.iommu.enabled) {
    return;
  }
  const bool pt_cmdline = m.iommu.cmdline.find("iommu=pt") != std::string::npos;
  Finding f;
  f.rule = "iommu-translated";
  f.severity = Severity::kWarning;
  for (const auto& g : m.iommu.groups) {
    if (g.type != "DMA" && g.type != "DMA-FQ") {
      continue;
    }
    for (const auto& address : g.devices) {
      const PciDevice* d = m.find(address);
      if (d != nullptr && (d->kind == DeviceKind::kGpu || d->kind == DeviceKind::kNic ||
                           d->kind == DeviceKind::kAccelerator)) {
        f.devices.push_back(address);
        if (f.evidence.size() < 4) {
          f.evidence.push_back({fmt::format("/sys/kernel/iommu_groups/{}/type", g.id), g.type});
        }
      }
    }
  }
  if (f.devices.empty()) {
    return;
  }
  f.evidence.push_back({"/proc/cmdline", m.iommu.cmdline});
  f.message = fmt::format(
      "{} GPU/NIC device(s) sit in IOMMU groups that translate DMA: every peer-to-peer and RDMA "
      "access pays an IOMMU lookup and P2P may be routed through the root complex",
      f.devices.size());
  f.recommendation =
      pt_cmdline ? "The cmdline has iommu=pt but these groups still translate; check for a "
                   "per-group override (`echo identity > /sys/kernel/iommu_groups/N/type` "
                   "with the devices unbound)"
                 : "Boot with `iommu=pt` (add it to GRUB_CMDLINE_LINUX in /etc/default/grub, "
                   "run `update-grub`, reboot) so host devices bypass translation";
  out.push_back(std::move(f));
}

void check_gpudirect(const Machine& m, std::vector<Finding>& out) {
  if (m.gpudirect.rdma_loaded) {
    return;
  }
  const auto gpus = nvidia_gpus(m);
  std::vector<std::string> rdma_nics;
  for (const auto& p : m.ib_ports) {
    if (!p.pci.empty() && std::find(rdma_nics.begin(), rdma_nics.end(), p.pci) == rdma_nics.end()) {
      rdma_nics.push_back(p.pci);
    }
  }
  if (gpus.empty() || rdma_nics.empty()) {
    return;
  }
  Finding f;
  f.rule = "gpudirect-rdma-missing";
  f.severity = Severity::kWarning;
  f.devices = gpus;
  f.devices.insert(f.devices.end(), rdma_nics.begin(), rdma_nics.end());
  f.evidence = {{"/sys/module/nvidia_peermem/version", "absent"},
                {"/sys/kernel/mm/memory_peers/nv_mem/version", "absent"}};
  f.message = fmt::format(
      "{} NVIDIA GPU(s) and {} RDMA NIC(s) but no GPUDirect RDMA module is loaded: NCCL and MPI "
      "stage every GPU<->network transfer through host memory",
      gpus.size(), rdma_nics.size());
  f.recommendation =
      "`modprobe nvidia_peermem` (and add it to /etc/modules-load.d/ to persist), or use a NCCL "
      "and driver with DMA-BUF support";
  out.push_back(std::move(f));
}

void check_acs(const Machine& m, std::vector<Finding>& out) {
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
  redirect.rule = "acs-p2p-redirect";
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
    f.rule = "acs-p2p-redirect";
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

void check_nvlink(const Machine& m, std::vector<Finding>& out) {
  for (const auto& g : m.nvml.gpus) {
    int active = 0;
    std::vector<int> down;
    for (const auto& l : g.nvlinks) {
      if (l.active) {
        ++active;
      } else {
        down.push_back(l.link);
      }
    }
    if (down.empty()) {
      continue;
    }
    Finding f;
    f.rule = "nvlink-down";
    f.severity = active == 0 ? Severity::kCritical : Severity::kWarning;
    f.devices = {g.pci};
    std::string list;
    for (const int l : down) {
      list += (list.empty() ? "" : ",") + std::to_string(l);
      f.evidence.push_back({fmt::format("nvml:nvmlDeviceGetNvLinkState(link {})", l), "inactive"});
    }
    f.message = fmt::format(
        "gpu {} ({}): {} of {} NVLinks are down (links {}), so GPU-to-GPU "
        "bandwidth drops by {:.0f}%",
        g.pci, g.name, down.size(), g.nvlinks.size(), list,
        100.0 * static_cast<double>(down.size()) / static_cast<double>(g.nvlinks.size()));
    f.recommendation =
        "Check `nvidia-smi nvlink -s -i " + std::to_string(g.index) +
        "` and the fabric manager (`systemctl status nvidia-fabricmanager`); reset the GPU or "
        "reseat the board if links stay down";
    out.push_back(std::move(f));
  }
}

void check_virtualized(const Machine& m, std::vector<Finding>& out) {
  if (!m.hypervisor) {
    return;
  }
  std::vector<std::string> flat;
  int accelerators = 0;
  int bridges = 0;
  bool numa_unknown = false;
  for (const auto& d : m.pci_devices) {
    if (d.kind == DeviceKind::kBridge) {
      ++bridges;
    }
    if (d.kind == DeviceKind::kGpu || d.kind == DeviceKind::kAccelerator) {
      ++accelerators;
      if (d.parent.empty() || role_of(m, m.find(d.parent)) == PortRole::kRoot) {
        flat.push_back(d.address);
      }
      numa_unknown = numa_unknown || d.numa_node < 0;
    }
  }
  Finding f;
  f.rule = "virtualized-topology";
  f.devices = flat;
  f.evidence = {{"/proc/cpuinfo", "flags: hypervisor"}};
  if (accelerators == 0) {
    f.severity = Severity::kInfo;
    f.message = fmt::format(
        "this is a virtual machine ({} PCI functions, {} bridges): link and NUMA facts are the "
        "hypervisor's emulation, not the host's hardware",
        m.pci_devices.size(), bridges);
    f.recommendation = "Run acco on the host to assess the physical links";
  } else {
    f.severity = accelerators > 1 ? Severity::kWarning : Severity::kInfo;
    f.message = fmt::format(
        "this is a virtual machine and {} of {} accelerator(s) sit directly on emulated root "
        "ports{}: the guest sees a flattened topology, so NCCL's path search and acco's path "
        "classes describe the emulation, not the host's switches and sockets",
        flat.size(), accelerators, numa_unknown ? " with unknown NUMA nodes" : "");
    f.recommendation =
        "Give NCCL the host's real topology with NCCL_TOPO_FILE (cloud images ship one), expose "
        "virtual NUMA with vCPU pinning, and run `acco probe` on the host for link facts";
  }
  out.push_back(std::move(f));
}

void check_nvml(const Machine& m, std::vector<Finding>& out) {
  if (m.nvml.available) {
    return;
  }
  const auto gpus = nvidia_gpus(m);
  if (gpus.empty()) {
    return;
  }
  Finding f;
  f.rule = "nvml-unavailable";
  f.severity = Severity::kInfo;
  f.devices = gpus;
  f.evidence = {{"nvml", m.nvml.reason}};
  f.message = fmt::format(
      "{} NVIDIA GPU(s) found but NVML is not available ({}): NVLink, P2P and performance-state "
      "checks were skipped",
      gpus.size(), m.nvml.reason.empty() ? "not queried" : m.nvml.reason);
  f.recommendation = "Install or load the NVIDIA driver (`nvidia-smi` must work), then re-run";
  out.push_back(std::move(f));
}

void check_input(const Machine& m, std::vector<Finding>& out) {
  for (const auto& issue : m.input_issues) {
    Finding f;
    f.rule = "input-unreadable";
    f.severity = Severity::kInfo;
    f.evidence = {{issue.path, issue.problem}};
    f.message = fmt::format("could not use {}: {}; facts that depend on it are unknown", issue.path,
                            issue.problem);
    f.recommendation =
        "If this is a live system, check the kernel version and permissions; if it is a "
        "recorded sysroot or snapshot, re-capture it with `acco probe --snapshot FILE`";
    out.push_back(std::move(f));
  }
}

}  // namespace

const char* to_string(Severity severity) {
  switch (severity) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarning:
      return "warning";
    case Severity::kCritical:
      return "critical";
  }
  return "info";
}

bool parse_severity(std::string_view text, Severity& out) {
  for (const auto s : {Severity::kInfo, Severity::kWarning, Severity::kCritical}) {
    if (text == to_string(s)) {
      out = s;
      return true;
    }
  }
  return false;
}

const std::vector<RuleInfo>& rules() {
  static const std::vector<RuleInfo> kRules = {
      {"pcie-link-downtrained", "PCIe link trained below what device and port support"},
      {"pcie-slot-limited", "device supports more than its slot or port"},
      {"pcie-path-bottleneck", "a link above the device is narrower than its own"},
      {"pcie-uplink-oversubscribed", "host-bound devices behind a switch exceed its uplink"},
      {"gpu-nic-remote", "a GPU's nearest NIC is across sockets"},
      {"nvme-gpu-remote", "a GPU's nearest NVMe drive is across sockets"},
      {"numa-unknown", "devices report numa_node -1 on a multi-node host"},
      {"ib-port-down", "an InfiniBand/RoCE port is not ACTIVE"},
      {"ib-rate-low", "an InfiniBand/RoCE port runs below its peers or with few lanes"},
      {"nic-pcie-limited", "a NIC's PCIe path cannot carry its port rate"},
      {"iommu-translated", "GPUs/NICs sit in translating IOMMU groups"},
      {"gpudirect-rdma-missing", "GPUs and RDMA NICs without GPUDirect RDMA"},
      {"acs-p2p-redirect", "ACS redirects peer-to-peer traffic to the root complex"},
      {"nvlink-down", "NVLinks reported inactive by NVML"},
      {"virtualized-topology", "a VM's flattened, emulated topology"},
      {"nvml-unavailable", "NVIDIA GPUs present but NVML could not be used"},
      {"input-unreadable", "a sysfs/procfs file exists but could not be understood"},
  };
  return kRules;
}

std::vector<Finding> check(const Machine& machine) {
  std::vector<Finding> out;
  check_downtrained(machine, out);
  check_slot_limited(machine, out);
  check_path_bottleneck(machine, out);
  check_oversubscription(machine, out);
  check_remote(machine, DeviceKind::kNic, "gpu-nic-remote", out);
  check_remote(machine, DeviceKind::kNvme, "nvme-gpu-remote", out);
  check_numa_unknown(machine, out);
  check_ib(machine, out);
  check_nic_pcie(machine, out);
  check_iommu(machine, out);
  check_gpudirect(machine, out);
  check_acs(machine, out);
  check_nvlink(machine, out);
  check_virtualized(machine, out);
  check_nvml(machine, out);
  check_input(machine, out);
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) {
      return a.severity > b.severity;
    }
    if (a.rule != b.rule) {
      return a.rule < b.rule;
    }
    return a.devices < b.devices;
  });
  return out;
}

}  // namespace acco::topo
