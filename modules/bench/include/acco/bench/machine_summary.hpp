// What a bench run records about the machine it ran on: a short JSON summary for reports and the
// history (host, kernel, NUMA, accelerators and their links), and a fingerprint that tells
// whether two runs were made on the same hardware, so `--compare` only compares like with like.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "acco/topo/machine.hpp"

namespace acco::bench {

// {"hostname", "kernel", "hypervisor", "numa_nodes", "cpus", "memory_bytes",
//  "nvml_driver_version" (null without NVML), "iommu_enabled",
//  "accelerators": [{"pci", "name", "vendor_id", "device_id", "numa_node", "link_current",
//                    "link_max", "path_bytes_per_second" (null when unknown)}]}.
// Accelerators are GPUs and processing accelerators, in address order; "name" is NVML's when
// known, else "vendor:device" ids. Pure.
[[nodiscard]] nlohmann::json machine_summary(const topo::Machine& machine);

// "<hostname>-<16 hex digits>": the host name plus a hash (FNV-1a, 64 bit) of every accelerator's
// PCI address and vendor:device id. Stable across reboots, kernel and driver updates and link
// retraining (those are what a comparison should reveal); changes when an accelerator is added,
// removed, replaced by another model or moved to another slot. Pure.
[[nodiscard]] std::string machine_fingerprint(const topo::Machine& machine);

}  // namespace acco::bench
