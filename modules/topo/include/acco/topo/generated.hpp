// Machines acco can describe without reading one: the reference designs clusters are bought as,
// for `acco sim --node` (what would 64 of these do?). Each is the machine model a probe of such
// a node gives: the PCIe tree from the root ports down (switches, GPUs, NICs), NVML's NVLinks
// and the InfiniBand ports, with every link at its trained rate. CPUs, memory, drives and
// software are left out: nothing that uses these needs them, and nothing here read them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/topo/machine.hpp"

namespace acco::topo {

struct GeneratedMachineInfo {
  std::string_view name;  // "dgx-h100"
  std::string_view what;  // one line: GPUs, NVLink, NICs
};
// dgx-h100, hgx-a100, pcie-4gpu, in that order.
[[nodiscard]] const std::vector<GeneratedMachineInfo>& generated_machines();

// The machine called `name` (origin "generated NAME"), its links annotated as a probe's are.
// kInvalidArgument naming the known names otherwise.
[[nodiscard]] Result<Machine> generated_machine(std::string_view name);

}  // namespace acco::topo
