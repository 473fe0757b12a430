// What a bench run records about the machine it ran on: a short JSON summary for reports and the
// history (host, kernel, NUMA, accelerators and their links), and a fingerprint that tells
// whether two runs were made on the same hardware, so `--compare` only compares like with like.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "acco/device/device.hpp"
#include "acco/topo/machine.hpp"

namespace acco::bench {

// {"hostname", "kernel", "hypervisor", "numa_nodes", "cpus", "memory_bytes",
//  "nvml_driver_version" (null without NVML), "iommu_enabled",
//  "accelerators": [{"pci", "name", "vendor_id", "device_id", "numa_node", "link_current",
//                    "link_max", "path_bytes_per_second" (null when unknown)}]}.
// Accelerators are GPUs and processing accelerators, in address order; "name" is NVML's when
// known, else the PCI ID database's (topo::PciDevice::model), else "vendor:device" ids. Pure.
[[nodiscard]] nlohmann::json machine_summary(const topo::Machine& machine);

// Names each accelerator of `summary` (machine_summary's) that one of `devices` sits at (same PCI
// address) by that device's name: the CUDA driver's "NVIDIA H200" is the name NVML gives, and the
// bench's probe does not query NVML, so without this a GPU newer than the PCI ID database went by
// "NVIDIA Corporation Device 2335". Devices without an address (emulated) name nothing. Pure.
void name_from_devices(nlohmann::json& summary, const std::vector<device::DeviceInfo>& devices);

// "<hostname>-<16 hex digits>": the host name plus a hash (FNV-1a, 64 bit) of every accelerator's
// PCI address and vendor:device id. Stable across reboots, kernel and driver updates and link
// retraining (those are what a comparison should reveal); changes when an accelerator is added,
// removed, replaced by another model or moved to another slot. Pure.
[[nodiscard]] std::string machine_fingerprint(const topo::Machine& machine);

}  // namespace acco::bench
