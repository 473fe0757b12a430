// Discovers a machine from Linux sysfs and procfs under a sysroot: NUMA nodes and sockets, the
// PCIe tree with link states, NICs, InfiniBand ports, NVMe, IOMMU groups, GPUDirect RDMA.
#pragma once

#include "acco/core/fs.hpp"
#include "acco/core/result.hpp"
#include "acco/topo/machine.hpp"

namespace acco::topo {

// Reads everything through `fs`. Files that exist but cannot be parsed become
// Machine::input_issues and the probe goes on; only a tree without /sys is an error
// (kNotFound). The result is not yet annotated: callers run annotate_links().
[[nodiscard]] Result<Machine> discover_sysfs(const core::Fs& fs);

// Classifies a PCI function by class code and vendor (BMC display adapters are not GPUs).
[[nodiscard]] DeviceKind classify_pci(std::uint32_t class_code, std::uint16_t vendor_id);

// True for "DDDD:BB:DD.F" PCI addresses.
[[nodiscard]] bool is_pci_address(std::string_view text);

}  // namespace acco::topo
