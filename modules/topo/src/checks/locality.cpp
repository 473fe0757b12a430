// Locality checks: GPUs whose nearest NIC sits on another socket, and devices whose socket the
// kernel does not know.
#include <algorithm>
#include <cstddef>
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
    f.evidence = numa_evidence(*gpu);
    const auto theirs = numa_evidence(*nic);
    f.evidence.insert(f.evidence.end(), theirs.begin(), theirs.end());
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
  bool all_minus_one = true;  // every file said -1, rather than being absent or unreadable
  for (const auto& d : m.pci_devices) {
    if (!is_endpoint_of_interest(d) || d.numa_node >= 0) {
      continue;
    }
    f.devices.push_back(d.address);
    const auto said = numa_evidence(d);
    all_minus_one = all_minus_one && said.size() == 1 && said[0].value == "-1";
    if (f.evidence.size() < 4) {
      const auto room = std::min(said.size(), 4 - f.evidence.size());
      f.evidence.insert(f.evidence.end(), said.begin(),
                        said.begin() + static_cast<std::ptrdiff_t>(room));
    }
  }
  if (f.devices.empty()) {
    return;
  }
  f.message = fmt::format(
      "{} device(s) {} on a host with {} NUMA nodes: the kernel does not know which socket they "
      "hang off, so CPU and memory placement for them is a guess",
      f.devices.size(),
      all_minus_one ? "report numa_node -1"
                    : "have no NUMA node in sysfs (numa_node, local_cpulist and local_cpus do "
                      "not name one, nor does a bridge above them)",
      m.numa_nodes.size());
  f.recommendation =
      !guest_evidence(m).empty()
          ? "Expose virtual NUMA to the guest with vCPU pinning (libvirt <numa> and <numatune>), "
            "and give NCCL a topology file (NCCL_TOPO_FILE)"
          : "Enable NUMA/SRAT reporting in the BIOS (ACPI _PXM) and update the firmware; until "
            "then bind by `local_cpulist` of each device";
  out.push_back(std::move(f));
}

}  // namespace acco::topo::detail
