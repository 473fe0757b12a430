// Network checks: InfiniBand/RoCE port state and rate, whether a NIC's PCIe path carries its
// ports, GPUDirect RDMA between GPUs and NICs, and NVLinks between GPUs.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "acco/core/units.hpp"
#include "acco/topo/link_model.hpp"

#include "checks/check_support.hpp"
#include "checks/rule_checks.hpp"

namespace acco::topo::detail {
namespace {

using units::format_rate;

// The kernel's ib_port_state value of an ACTIVE port.
constexpr int kPortActive = 4;

std::string ib_attr(const IbPort& p, const char* file) {
  return fmt::format("/sys/class/infiniband/{}/ports/{}/{}", p.device, p.port, file);
}

std::string port_name(const IbPort& p) {
  return fmt::format("{} port {}", p.device, p.port);
}

// The IB device name, then its PCI function when known.
std::vector<std::string> port_devices(const IbPort& p) {
  std::vector<std::string> devices = {p.device};
  if (!p.pci.empty()) {
    devices.push_back(p.pci);
  }
  return devices;
}

}  // namespace

void check_ib_port_down(const Machine& m, std::vector<Finding>& out) {
  for (const auto& p : m.ib_ports) {
    if (p.state == kPortActive) {
      continue;
    }
    Finding f;
    f.severity = Severity::kCritical;
    f.devices = port_devices(p);
    f.evidence = {{ib_attr(p, "state"), p.state_text},
                  {ib_attr(p, "phys_state"), p.phys_state_text}};
    const char* cause = p.phys_state == 2   ? "no peer or cable detected (Polling)"
                        : p.phys_state == 3 ? "the port is disabled"
                        : p.phys_state == 5 ? "the physical link is up but no subnet manager "
                                              "has activated the port"
                                            : "the port is not active";
    f.message = fmt::format("{} ({}) is {}: {}", port_name(p), p.link_layer, p.state_text, cause);
    f.recommendation =
        p.phys_state == 5
            ? "Check that a subnet manager runs on the fabric (`sminfo`, `systemctl status "
              "opensm`) and see `ibstat " +
                  p.device + "`"
            : "Check the cable and the switch port, then `ibstat " + p.device +
                  "`; enable the port with `ibportstate` if it was disabled";
    out.push_back(std::move(f));
  }
}

void check_ib_rate_low(const Machine& m, std::vector<Finding>& out) {
  std::map<std::string, double> best_rate;  // per link layer
  for (const auto& p : m.ib_ports) {
    if (p.state == kPortActive) {
      best_rate[p.link_layer] = std::max(best_rate[p.link_layer], p.rate_gbps);
    }
  }
  for (const auto& p : m.ib_ports) {
    if (p.state != kPortActive) {
      continue;
    }
    const double best = best_rate[p.link_layer];
    if (p.rate_gbps + 0.01 < best || (p.lanes > 0 && p.lanes < 4 && p.link_layer == "InfiniBand")) {
      Finding f;
      f.severity = Severity::kWarning;
      f.devices = port_devices(p);
      f.evidence = {{ib_attr(p, "rate"), p.rate_text}};
      f.message = p.rate_gbps + 0.01 < best
                      ? fmt::format("{} runs at {} while other active {} ports here run at {} Gb/s",
                                    port_name(p), p.rate_text, p.link_layer, best)
                      : fmt::format("{} runs at {} with only {} lane(s)", port_name(p), p.rate_text,
                                    p.lanes);
      f.recommendation = "Check the cable type and the switch port configuration; `ibstat " +
                         p.device + "` shows the negotiated rate and `mlxlink -d " + p.device +
                         "` the cable";
      out.push_back(std::move(f));
    }
  }
}

void check_nic_pcie_limited(const Machine& m, std::vector<Finding>& out) {
  std::map<std::string, std::pair<double, std::vector<Evidence>>> port_bits;  // per PCI function
  std::set<std::string> has_ib;
  for (const auto& p : m.ib_ports) {
    if (p.state == kPortActive && !p.pci.empty()) {
      // The data rate, not the signalling rate: a 4X QDR port signals 40 Gb/s but carries 32,
      // which PCIe Gen2 x8 (4 GB/s) does carry. A port without one (a hand-built machine) is
      // taken at its signalling rate.
      const double data = p.data_rate_gbps > 0 ? p.data_rate_gbps : p.rate_gbps;
      port_bits[p.pci].first += data * 1e9;
      port_bits[p.pci].second.push_back(
          {ib_attr(p, "rate"), std::abs(data - p.rate_gbps) < 0.01
                                   ? p.rate_text
                                   : fmt::format("{} ({} of data after line encoding)", p.rate_text,
                                                 units::format_bit_rate(data * 1e9))});
      has_ib.insert(p.pci);
    }
  }
  for (const auto& n : m.net_interfaces) {
    if (!n.pci.empty() && n.speed_mbps && !has_ib.contains(n.pci) && n.operstate == "up") {
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
    // The relative slack keeps an exact fit (4X QDR's 32 Gb/s on Gen2 x8's 4 GB/s) from turning
    // into a finding through the rounding of the two rates.
    if (pcie <= 0 || pcie * (1 + 1e-9) >= needed) {
      continue;
    }
    Finding f;
    f.severity = Severity::kWarning;
    f.devices = {pci};
    f.evidence = entry.second;
    f.evidence.push_back({attr(pci, "current_link_speed"), speed_text(d->current.speed_gts)});
    f.evidence.push_back({attr(pci, "current_link_width"), std::to_string(d->current.width)});
    f.message = fmt::format(
        "nic {} has {} of network ports (data rate) but its PCIe path carries only {} ({}, {} "
        "needed): the host link, not the network, limits it",
        pci, units::format_bit_rate(entry.first), format_rate(pcie), describe(d->current),
        format_rate(needed));
    f.recommendation = fmt::format(
        "Move the NIC to a slot with at least {} or check its link training (`lspci -vv -s {} | "
        "grep LnkSta`)",
        needed > 31.5e9 ? "Gen5 x16" : "Gen4 x16", pci);
    out.push_back(std::move(f));
  }
}

void check_gpudirect_rdma_missing(const Machine& m, std::vector<Finding>& out) {
  if (m.gpudirect.rdma_loaded || !m.sysfs_read) {  // modules are not in an XML export
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

void check_nvlink_down(const Machine& m, std::vector<Finding>& out) {
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

}  // namespace acco::topo::detail
