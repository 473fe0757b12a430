// What the checks of several themes share: the sysfs paths they cite as evidence, the port roles
// inferred from the PCI nesting, and the devices they look at.
#pragma once

#include <string>
#include <vector>

#include "acco/topo/link_model.hpp"
#include "acco/topo/machine.hpp"

namespace acco::topo::detail {

// "/sys/bus/pci/devices/<address>/<file>": where a PCI fact was read.
[[nodiscard]] std::string attr(const std::string& address, const char* file);
// "16.0 GT/s PCIe", as sysfs writes a link speed.
[[nodiscard]] std::string speed_text(double gts);
// The files that placed a device on its NUMA node and what they held (numa_node, or the
// local_cpulist or parent bridge that stood in for it); "numa_node" = its value for a machine
// built without them.
[[nodiscard]] std::vector<Evidence> numa_evidence(const PciDevice& d);
// GPUs, accelerators, NICs and NVMe drives: the devices whose links and placement matter.
[[nodiscard]] bool is_endpoint_of_interest(const PciDevice& d);
// "<kind> <address>", e.g. "gpu 0000:1b:00.0".
[[nodiscard]] std::string name_of(const PciDevice& d);
// The PCI addresses of NVIDIA GPUs, in machine order.
[[nodiscard]] std::vector<std::string> nvidia_gpus(const Machine& m);
// The GPUs that GPUDirect RDMA serves, in machine order: NVIDIA GPUs and AMD accelerators
// (vendor 0x1002 with class 0x0302 3D controller, 0x0380 display other as Instinct MI100-MI250
// report, or 0x12xx processing accelerator as MI300 reports). AMD VGA (0x0300) is a Radeon.
[[nodiscard]] std::vector<std::string> gdr_gpus(const Machine& m);

// The kernel side of GPUDirect RDMA through dma-buf, which needs no peer-memory module: Linux
// 5.12 or later (ib_umem_dmabuf) and every RDMA NIC driven by mlx5_core (mlx5_ib registers
// dma-buf memory regions since 5.12). The GPU driver's export (NVIDIA open kernel modules,
// amdgpu) and user space (rdma-core 34+, NCCL 2.13+) leave no trace in sysfs, so this says the
// path can work, not that it does. Empty when it cannot; else the evidence that it can.
[[nodiscard]] std::vector<Evidence> dmabuf_rdma_evidence(const Machine& m);

// "nic 0000:41:00.0", or "nic 0000:41:00.0 (2 functions: 0000:41:00.0, 0000:41:00.1)".
[[nodiscard]] std::string name_of(const PhysicalDevice& d);

// guest.cpp: what the guest's PCI tree is made of.
// Why acco believes it runs in a virtual machine: the "hypervisor" CPU flag, else (arm64 guests
// have no such flag) the vendor and device files of a bridge only a hypervisor makes. Empty on
// bare metal.
[[nodiscard]] std::vector<Evidence> guest_evidence(const Machine& m);
// What made bridge `d` when the hypervisor did: "QEMU pcie-root-port" for the ids QEMU and
// VMware use, "a bridge of the virtual machine (8086:7000)" for any other bridge of a guest;
// empty for a device that is not a bridge and for every bridge on bare metal.
[[nodiscard]] std::string emulated_bridge_model(const Machine& m, const PciDevice& d);
// Every bridge of a guest (all of them are the hypervisor's), in machine order; empty on bare
// metal.
[[nodiscard]] std::vector<const PciDevice*> emulated_bridges(const Machine& m);

enum class PortRole {
  kNone,
  kRoot,
  kUpstream,
  kDownstream
};

// Without root the PCIe capability's port type is unreadable, so the role is inferred from the
// nesting: a bridge on a root bus is a root port; below a root or downstream port sits an
// upstream port; below an upstream port sit downstream ports. Non-bridges have no role, and so
// has a device that is not in the machine (nullptr: a snapshot edited by hand).
[[nodiscard]] PortRole role_of(const Machine& m, const PciDevice& d);
[[nodiscard]] PortRole role_of(const Machine& m, const PciDevice* d);

// Devices whose own link reading describes a physical link to their parent port: endpoints and
// switch upstream ports. Root and downstream ports report the same link as the device below.
[[nodiscard]] bool owns_its_link(const Machine& m, const PciDevice& d);

// Why the link between `d` and its parent port is one inside a chipset or SoC (topo's
// internal_link), in words with both readings; empty when it is not.
[[nodiscard]] std::string internal_link_reason(const Machine& m, const PciDevice& d);

struct RemotePeer {
  const PciDevice* gpu = nullptr;
  const PciDevice* nearest = nullptr;
};

// GPUs whose nearest device of `peer_kind` is across the CPU interconnect (path class SYS), each
// with that nearest device, in machine order. Empty when the machine has no device of that kind.
[[nodiscard]] std::vector<RemotePeer> gpus_with_remote_nearest(const Machine& m,
                                                               DeviceKind peer_kind);

}  // namespace acco::topo::detail
