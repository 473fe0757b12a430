// Network checks: InfiniBand/RoCE port state and rate, whether a NIC's PCIe path carries its
// ports, GPUDirect RDMA between GPUs and NICs, and NVLinks between GPUs.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "acco/core/units.hpp"
#include "acco/topo/link_model.hpp"
#include "acco/topo/sysfs_source.hpp"

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
  // Like with like: a port is compared only with active ports of the same link layer on the same
  // NIC model (PCI device id), so a 25 GbE ConnectX-4 Lx management port is not judged against
  // the 200G data rails beside it. A port whose function is unknown has model 0.
  const auto model_of = [&](const IbPort& p) {
    const PciDevice* d = m.find(p.pci);
    return d == nullptr ? std::pair<std::uint16_t, std::uint16_t>{0, 0}
                        : std::pair<std::uint16_t, std::uint16_t>{d->vendor_id, d->device_id};
  };
  using Peers = std::tuple<std::string, std::uint16_t, std::uint16_t>;
  const auto peers_of = [&](const IbPort& p) {
    const auto [vendor, device] = model_of(p);
    return Peers{p.link_layer, vendor, device};
  };
  std::map<Peers, double> best_rate;
  for (const auto& p : m.ib_ports) {
    if (p.state == kPortActive) {
      auto& best = best_rate[peers_of(p)];
      best = std::max(best, p.rate_gbps);
    }
  }
  for (const auto& p : m.ib_ports) {
    if (p.state != kPortActive) {
      continue;
    }
    const double best = best_rate[peers_of(p)];
    if (p.rate_gbps + 0.01 < best || (p.lanes > 0 && p.lanes < 4 && p.link_layer == "InfiniBand")) {
      const auto [vendor, device] = model_of(p);
      Finding f;
      f.severity = Severity::kWarning;
      f.devices = port_devices(p);
      f.evidence = {{ib_attr(p, "rate"), p.rate_text}};
      if (device != 0) {
        f.evidence.push_back({attr(p.pci, "device"), fmt::format("0x{:04x}", device)});
      }
      f.message = p.rate_gbps + 0.01 < best
                      ? fmt::format(
                            "{} runs at {} while other active {} ports of the same NIC model "
                            "({:04x}:{:04x}) "
                            "here run at {} Gb/s",
                            port_name(p), p.rate_text, p.link_layer, vendor, device, best)
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
  // The functions of one card share its link, so their ports are summed per physical device: a
  // dual-port 100G ConnectX needs 25 GB/s of the one Gen4 x8 link (15.75 GB/s) both ports use.
  for (const auto& card : physical_devices(m)) {
    if (card.first().kind != DeviceKind::kNic) {
      continue;
    }
    double bits = 0;
    std::vector<Evidence> evidence;
    for (const auto* fn : card.functions) {
      if (const auto it = port_bits.find(fn->address); it != port_bits.end()) {
        bits += it->second.first;
        evidence.insert(evidence.end(), it->second.second.begin(), it->second.second.end());
      }
    }
    const PciDevice& d = card.first();
    const double pcie =
        d.path_bytes_per_second > 0 ? d.path_bytes_per_second : d.current_bytes_per_second;
    const double needed = bits / 8;
    // The relative slack keeps an exact fit (4X QDR's 32 Gb/s on Gen2 x8's 4 GB/s) from turning
    // into a finding through the rounding of the two rates.
    if (bits <= 0 || pcie <= 0 || pcie * (1 + 1e-9) >= needed) {
      continue;
    }
    // A NIC built into a chipset or SoC: its PCIe figures are not the path its traffic takes.
    if (!internal_link_reason(m, d).empty()) {
      continue;
    }
    // The link that sets the limit: a port above the NIC when the path is narrower than the
    // NIC's own link (path_limited_by), else the NIC's.
    const PciDevice* limit = d.path_bytes_per_second > 0 ? m.find(d.path_limited_by) : nullptr;
    if (limit == nullptr) {
      limit = &d;
    }
    Finding f;
    f.severity = Severity::kWarning;
    f.devices = card.addresses();
    if (limit != &d) {
      f.devices.push_back(limit->address);
    }
    f.evidence = std::move(evidence);
    f.evidence.push_back(
        {attr(limit->address, "current_link_speed"), speed_text(limit->current.speed_gts)});
    f.evidence.push_back(
        {attr(limit->address, "current_link_width"), std::to_string(limit->current.width)});
    const std::string where =
        limit == &d ? describe(d.current)
                    : fmt::format("the {} link of {}", describe(limit->current), limit->address);
    f.message = fmt::format(
        "{} has {} of network ports (data rate) but its PCIe path carries only {} ({}, {} "
        "needed): the host link, not the network, limits it",
        name_of(card), units::format_bit_rate(bits), format_rate(pcie), where, format_rate(needed));
    f.recommendation =
        limit == &d
            ? fmt::format(
                  "Move the NIC to a slot with at least {} or check its link training (`lspci -vv "
                  "-s {} | grep LnkSta`)",
                  needed > 31.5e9 ? "Gen5 x16" : "Gen4 x16", d.address)
            : fmt::format(
                  "Check why {} trained at {} (reseat, cable, BIOS bifurcation) or move the NIC "
                  "under a wider uplink (`lspci -vv -s {} | grep LnkSta`)",
                  limit->address, describe(limit->current), limit->address);
    out.push_back(std::move(f));
  }
}

void check_gpudirect_rdma_missing(const Machine& m, std::vector<Finding>& out) {
  if (m.gpudirect.rdma_loaded || !m.sysfs_read) {  // modules are not in an XML export
    return;
  }
  const auto gpus = gdr_gpus(m);
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
  f.devices = gpus;
  f.devices.insert(f.devices.end(), rdma_nics.begin(), rdma_nics.end());
  for (const auto& path : gpudirect_paths()) {
    f.evidence.push_back({path, "absent"});
  }
  const auto dmabuf = dmabuf_rdma_evidence(m);
  f.evidence.insert(f.evidence.end(), dmabuf.begin(), dmabuf.end());
  const auto what = fmt::format(
      "{} GPU(s) and {} RDMA NIC(s) but no GPUDirect RDMA peer-memory "
      "client is loaded (nvidia_peermem, amd_peermem, amdkfd)",
      gpus.size(), rdma_nics.size());
  if (dmabuf.empty()) {
    f.severity = Severity::kWarning;
    f.message =
        what + ": NCCL, RCCL and MPI stage every GPU<->network transfer through host memory";
    f.recommendation =
        "`modprobe nvidia_peermem` for NVIDIA GPUs, the amdgpu driver with PeerDirect (ROCm "
        "amdgpu-dkms) for AMD ones (persist in /etc/modules-load.d/), or a kernel (5.12+), NIC "
        "driver, GPU driver and NCCL with DMA-BUF support";
  } else {
    // sysfs shows the kernel side of dma-buf only; whether the GPU driver exports dma-buf and
    // NCCL uses it is known at run time alone (NCCL probes ibv_reg_dmabuf_mr).
    f.severity = Severity::kInfo;
    f.message = what + fmt::format(
                           "; kernel {} and the NICs' mlx5_core support GPUDirect RDMA through "
                           "dma-buf instead, which sysfs cannot confirm: it also needs a GPU "
                           "driver that exports dma-buf (NVIDIA open kernel modules, amdgpu) and "
                           "NCCL 2.13+ or RCCL",
                           m.kernel);
    f.recommendation =
        "Check that NCCL uses it: `NCCL_DEBUG=INFO` prints 'DMA-BUF' (or GDR 1) in its NET/IB "
        "lines; if not, `modprobe nvidia_peermem` (NVIDIA) or load the amdgpu PeerDirect client "
        "(AMD)";
  }
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

// nvidia-smi -i N -mig 1 (or 0) records the mode and applies it at the GPU's next reset: until
// then the GPU runs as before, so MIG instances a job expects are not there (or are still there).
void check_mig_pending_reset(const Machine& m, std::vector<Finding>& out) {
  for (const auto& g : m.nvml.gpus) {
    if (!g.mig_enabled || !g.mig_pending || *g.mig_enabled == *g.mig_pending) {
      continue;
    }
    Finding f;
    f.severity = Severity::kWarning;
    f.devices = {g.pci};
    f.evidence.push_back(
        {"nvml:nvmlDeviceGetMigMode",
         fmt::format("current {}, pending {}", *g.mig_enabled ? "enabled" : "disabled",
                     *g.mig_pending ? "enabled" : "disabled")});
    f.message = fmt::format(
        "gpu {} ({}): MIG mode is {} now and becomes {} only at the GPU's next reset, so jobs see "
        "{}",
        g.pci, g.name, *g.mig_enabled ? "on" : "off", *g.mig_pending ? "on" : "off",
        *g.mig_enabled ? "MIG instances that are meant to be gone"
                       : "the whole GPU, not the MIG instances they expect");
    f.recommendation = fmt::format(
        "Stop the GPU's processes and reset it: `nvidia-smi -i {} -r` (on some systems a reboot); "
        "then check `nvidia-smi -i {} --query-gpu=mig.mode.current,mig.mode.pending --format=csv`",
        g.index, g.index);
    out.push_back(std::move(f));
  }
}

}  // namespace acco::topo::detail
