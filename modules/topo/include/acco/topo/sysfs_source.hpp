// Discovers a machine from Linux sysfs and procfs under a sysroot: NUMA nodes and sockets, the
// PCIe tree with link states, NICs, InfiniBand ports, NVMe, IOMMU groups, GPUDirect RDMA.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "acco/core/fs.hpp"
#include "acco/core/result.hpp"
#include "acco/topo/machine.hpp"

namespace acco::topo {

// Reads everything through `fs`. Files that exist but cannot be parsed become
// Machine::input_issues and the probe goes on; only a tree without /sys is an error
// (kNotFound). The result is not yet annotated: callers run annotate_links().
[[nodiscard]] Result<Machine> discover_sysfs(const core::Fs& fs);

// Classifies a PCI function by class code and vendor: display and 3D controllers are GPUs unless
// their vendor only makes console video (emulated VGA, BMCs); co-processors (0x0b40) and
// processing accelerators (0x12xx) are accelerators; network classes and InfiniBand (0x0c06)
// are NICs.
[[nodiscard]] DeviceKind classify_pci(std::uint32_t class_code, std::uint16_t vendor_id);

// The files whose presence shows a GPUDirect RDMA peer-memory client, in the order they are
// checked (NVIDIA's nvidia_peermem and legacy nv_mem, nv_mem_nc; AMD's amd_peermem module and
// the amdgpu driver's PeerDirect client "amdkfd"). GpuDirect::evidence names the one found.
[[nodiscard]] const std::vector<std::string>& gpudirect_paths();

// The active I/O scheduler in a queue/scheduler file: the name in brackets ("none" from
// "[none] mq-deadline kyber"), or "none" from a queue that offers no scheduler and prints
// "none" bare; nullopt when neither is there.
[[nodiscard]] std::optional<std::string> active_scheduler(std::string_view text);

// True for "DDDD:BB:DD.F" PCI addresses, with 16-bit or (VMD, Hyper-V) 32-bit domains.
[[nodiscard]] bool is_pci_address(std::string_view text);

}  // namespace acco::topo
