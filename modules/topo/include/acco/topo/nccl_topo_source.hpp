// NCCL's topology XML (version 1: what NCCL_TOPO_DUMP_FILE dumps of a machine, and the seed files
// cloud VMs give NCCL_TOPO_FILE) read into the machine model, so a machine nobody here has can be
// assessed and simulated from the file its users already share. The file holds NUMA nodes with
// their CPU masks, the PCI tree (bridges, GPUs, NICs) with each function's link, the GPUs' NVLinks
// and the NICs' ports and speeds; it holds no drivers, IOMMU, kernel modules or InfiniBand port
// state, and NCCL fills what a seed leaves out from the live machine, so a seed's missing
// attributes stay unknown here.
#pragma once

#include <string_view>

#include "acco/core/result.hpp"
#include "acco/topo/machine.hpp"

namespace acco::topo {

// The largest file read (NCCL caps a topology at 256 nodes a level; real dumps are under 100 KB).
inline constexpr std::size_t kMaxNcclTopoBytes = 16U << 20U;

// The machine of `xml`: `numa_nodes` from each <cpu numaid affinity> (a node id of -1, as KVM
// guests dump, leaves the devices below it on no node), `pci_devices` from the nested <pci>
// elements (parent from the nesting, class, ids, link_speed and link_width as both the current
// and the maximum link: NCCL dumps one figure), `nvml.gpus` from each <gpu> (its <nvlink count>
// entries as active links, their version from the GPU's sm), `net_interfaces` from each <net>
// (speed in Mb/s). `sysfs_read` is false. kInvalidArgument naming the element when the text is not
// XML, its root is not <system>, or an attribute acco needs is malformed.
[[nodiscard]] Result<Machine> machine_from_nccl_topo(std::string_view xml);

}  // namespace acco::topo
