// Storage checks: GPUs whose nearest NVMe drive sits on another socket.
#include <string>

#include <fmt/format.h>

#include "checks/check_support.hpp"
#include "checks/rule_checks.hpp"

namespace acco::topo::detail {

void check_nvme_gpu_remote(const Machine& m, std::vector<Finding>& out) {
  for (const auto& [gpu, drive] : gpus_with_remote_nearest(m, DeviceKind::kNvme)) {
    Finding f;
    f.severity = Severity::kWarning;
    f.devices = {gpu->address, drive->address};
    f.evidence = numa_evidence(*gpu);
    const auto theirs = numa_evidence(*drive);
    f.evidence.insert(f.evidence.end(), theirs.begin(), theirs.end());
    f.message = fmt::format(
        "gpu {} has no NVMe drive on its socket: the nearest, {}, is across the CPU "
        "interconnect (SYS), so storage-to-GPU reads (GPUDirect Storage) cross sockets",
        gpu->address, drive->address);
    f.recommendation =
        "Place an NVMe drive on each GPU socket, or stage data for this GPU from a drive on "
        "NUMA node " +
        std::to_string(gpu->numa_node);
    out.push_back(std::move(f));
  }
}

}  // namespace acco::topo::detail
