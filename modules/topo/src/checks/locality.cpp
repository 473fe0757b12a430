// Locality checks: GPUs whose nearest NIC sits on another socket, and devices whose socket the
// kernel does not know.
#include <string>

#include <fmt/format.h>

#include "checks/check_support.hpp"
#include "checks/rule_checks.hpp"

namespace acco::topo::detail {

void check_gpu_nic_remote(const Machine& m, std::vector<Finding>& out) {
  for (const auto& [gpu, nic] : gpus_with_remote_nearest(m, DeviceKind::kNic)) {
    Finding f;
    f.severity = Severity::kWarning;
    f.devices = {gpu->address, nic->address};
    f.evidence = {{attr(gpu->address, "numa_node"), std::to_string(gpu->numa_node)},
                  {attr(nic->address, "numa_node"), std::to_string(nic->numa_node)}};
    f.message = fmt::format(
        "gpu {} has no NIC on its socket: the nearest, {}, is across the CPU interconnect "
        "(SYS), so GPUDirect RDMA traffic crosses sockets",
        gpu->address, nic->address);
    f.recommendation =
        "Install a NIC on the GPU's socket (ideally under the same PCIe switch), or pin the "
        "rank using this GPU to the NIC's NUMA node with `numactl --cpunodebind=" +
        std::to_string(nic->numa_node) + "` and pick NICs with NCCL_IB_HCA";
    out.push_back(std::move(f));
  }
}

void check_numa_unknown(const Machine& m, std::vector<Finding>& out) {
  if (m.numa_nodes.size() <= 1) {
    return;
  }
  Finding f;
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

}  // namespace acco::topo::detail
