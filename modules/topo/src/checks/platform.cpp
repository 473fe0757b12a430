// Platform checks: IOMMU groups that translate DMA, a virtual machine's emulated topology, an
// NVIDIA driver that NVML cannot reach, and inputs that could not be understood.
#include <string>

#include <fmt/format.h>

#include "checks/check_support.hpp"
#include "checks/rule_checks.hpp"

namespace acco::topo::detail {

void check_iommu_translated(const Machine& m, std::vector<Finding>& out) {
  if (!m.iommu.enabled) {
    return;
  }
  const bool pt_cmdline = m.iommu.cmdline.find("iommu=pt") != std::string::npos;
  Finding f;
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

void check_virtualized_topology(const Machine& m, std::vector<Finding>& out) {
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

void check_nvml_unavailable(const Machine& m, std::vector<Finding>& out) {
  if (m.nvml.available || !m.sysfs_read) {  // an XML export never holds NVML's answers
    return;
  }
  const auto gpus = nvidia_gpus(m);
  if (gpus.empty()) {
    return;
  }
  Finding f;
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

void check_input_unreadable(const Machine& m, std::vector<Finding>& out) {
  for (const auto& issue : m.input_issues) {
    Finding f;
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

}  // namespace acco::topo::detail
