// `acco exec --check`: the binding doctor for the process it runs in (or each rank, run under
// mpirun or srun): which GPU it will use, whether its CPUs, memory nodes and NIC are that GPU's,
// and the container limits NCCL trips on (/dev/shm, locked memory), each mismatch with its fix.
// Pure over a machine, the process's masks and its environment, so it is tested on recorded
// machines; the masks come from /proc/self/status through core::Fs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "acco/core/fs.hpp"
#include "acco/core/result.hpp"
#include "acco/exec/binding.hpp"
#include "acco/report/document.hpp"
#include "acco/topo/machine.hpp"

namespace acco::exec {

// What the kernel lets this process use: Cpus_allowed_list and Mems_allowed_list of
// /proc/self/status. Each empty when the line is absent (kernels without cpusets).
struct ProcessMasks {
  std::vector<int> cpus;
  std::vector<int> mems;
  bool operator==(const ProcessMasks&) const = default;
};
// kNotFound when /proc/self/status cannot be read; kInvalidArgument naming a line that does
// not parse.
[[nodiscard]] Result<ProcessMasks> read_process_masks(const core::Fs& fs);

// One line of the check.
struct CheckItem {
  std::string name;       // "GPU", "CPUs", "memory nodes", "NIC", "/dev/shm", "locked memory"
  std::string value{};    // what was found
  std::string problem{};  // empty when it fits
  std::string fix{};      // the command or flag that fixes it; empty when it fits
  bool operator==(const CheckItem&) const = default;
};

struct BindingCheck {
  std::optional<Accelerator> device;  // the GPU this process will use, when one can be told
  std::vector<CheckItem> items;
  [[nodiscard]] int problems() const;
  bool operator==(const BindingCheck&) const = default;
};

// The /dev/shm size below which NCCL's shared-memory transport fails in containers (Docker's
// default is 64 MiB; NVIDIA's container guides ask for --shm-size=1g or --ipc=host).
inline constexpr std::uint64_t kMinShmBytes = std::uint64_t{1} << 30;

// The GPU is the first entry of CUDA_VISIBLE_DEVICES (an index in PCI order when
// CUDA_DEVICE_ORDER=PCI_BUS_ID, or a UUID), else the local rank's (round robin), else none.
// Problems: CPUs none of which, or not all of which, are the GPU's NUMA node's; memory nodes that
// leave out the GPU's node; several GPUs visible to each of several local ranks; an index without
// CUDA_DEVICE_ORDER=PCI_BUS_ID on a machine with several GPUs; an NCCL_IB_HCA that leaves out the
// port nearest the GPU; /dev/shm under kMinShmBytes; locked memory limited on a machine with RDMA
// ports. What cannot be read is said as its value, never a problem.
[[nodiscard]] BindingCheck check_binding(const topo::Machine& machine,
                                         const std::optional<ProcessMasks>& masks,
                                         const Environment& env);

// {"schema": "acco.exec-check/1", "device": {...}|null, "problems": N,
//  "items": [{"name", "value", "ok", "problem", "fix"}]}.
[[nodiscard]] nlohmann::ordered_json to_json(const BindingCheck& check);
[[nodiscard]] report::Document check_report(const BindingCheck& check);

}  // namespace acco::exec
