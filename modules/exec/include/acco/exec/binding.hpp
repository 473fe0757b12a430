// Binding a process to one accelerator (`acco exec`): which device, which CPUs and memory node
// are near it, which NIC, and the environment CUDA, OpenMP, NCCL and UCX read. The plan is a pure
// function of a topo::Machine (live, a sysroot or a snapshot) and the mask the process inherited,
// so the rules are tested on any machine model; apply() then sets them on the live process as far
// as the live machine allows.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "acco/core/result.hpp"
#include "acco/report/document.hpp"
#include "acco/topo/machine.hpp"

namespace acco::exec {

using Environment = std::map<std::string, std::string>;

// Which process of its job on this node this is, as the launcher says.
struct LocalRank {
  int rank = 0;
  int size = 0;        // processes of the job on this node; 0 when the launcher does not say
  std::string source;  // the variable read: "OMPI_COMM_WORLD_LOCAL_RANK"
  bool operator==(const LocalRank&) const = default;
};

// The first launcher variable found, in this order: Open MPI (OMPI_COMM_WORLD_LOCAL_RANK/_SIZE,
// also under PRRTE/PMIx's prterun), MVAPICH2 (MV2_COMM_WORLD_LOCAL_RANK/_SIZE), MPICH's Hydra
// (MPI_LOCALRANKID/MPI_LOCALNRANKS), Cray PMI (PMI_LOCAL_RANK/PMI_LOCAL_SIZE), Slurm's srun
// (SLURM_LOCALID; the size from SLURM_STEP_TASKS_PER_NODE, "2(x3),1", at SLURM_NODEID) and
// torchrun (LOCAL_RANK/LOCAL_WORLD_SIZE). None: kNotFound naming what was looked for; a value
// that is not a count: kInvalidArgument naming the variable.
[[nodiscard]] Result<LocalRank> local_rank(const Environment& env);

// An accelerator as `acco exec` numbers them: NVML's index when NVML answered for it, else its
// place in PCI address order (what CUDA_DEVICE_ORDER=PCI_BUS_ID makes CUDA use).
struct Accelerator {
  int index = 0;
  std::string address;  // "0000:41:00.0"
  std::string uuid;     // "GPU-..." from NVML; empty without it
  std::string name;     // the model, or "10de:2330" when nothing names it
  int numa_node = -1;
  std::vector<std::string> mig_uuids = {};  // its MIG instances' UUIDs, when NVML listed them
  std::string mig = {};  // the MIG instance chosen (--device MIG-...); empty: the whole GPU
  bool operator==(const Accelerator&) const = default;
};
[[nodiscard]] std::vector<Accelerator> accelerators(const topo::Machine& machine);

// --device: an index ("1"), a PCI address ("41:00.0", "0000:41:00.0", any case) or a GPU UUID
// ("GPU-5f1c...") or a MIG instance's UUID ("MIG-..."; the GPU that holds it, with `mig` set:
// a CUDA process sees one MIG instance, binding follows its GPU). kNotFound naming the devices
// there are (and, for a MIG UUID, that NVML must have listed it).
[[nodiscard]] Result<Accelerator> select_device(const std::vector<Accelerator>& devices,
                                                std::string_view spec);

// --local-rank auto: rank r takes device r mod count; `note` says how ranks share when the node
// runs more ranks than it has devices. kNotFound when there is no device.
[[nodiscard]] Result<Accelerator> device_for_rank(const std::vector<Accelerator>& devices,
                                                  const LocalRank& rank, std::string& note);

struct Options {
  bool bind = true;  // --bind auto; false: --bind none (environment only)
  bool nic = false;  // --nic auto: the nearest NIC for NCCL and UCX
};

// One environment variable the binding sets, and why.
struct EnvVar {
  std::string name;
  std::string value;
  std::string reason;
  bool operator==(const EnvVar&) const = default;
};

struct Binding {
  Accelerator device;
  std::vector<int> device_cpus;     // the device's NUMA-local CPUs; empty when unknown
  std::vector<int> inherited_cpus;  // the mask the process was started with
  std::vector<int> cpus;            // the mask to apply; empty: left as inherited
  int memory_node = -1;             // bound with MPOL_BIND; -1: left alone
  std::string nic;                  // "mlx5_0:1" or "ens1f0np0"; empty without --nic or none
  std::vector<EnvVar> env;          // in the order they are set
  std::vector<std::string> notes;   // what was kept, shared or could not be bound, and why
  bool operator==(const Binding&) const = default;
};

// The binding of `device` on `machine` for a process that inherited `inherited_cpus` and runs
// with `env` (a launcher's CUDA_VISIBLE_DEVICES or OMP_NUM_THREADS is reported, never silently
// replaced). Rules:
// - CPUs: the device's local CPUs (PCI local_cpulist, else its NUMA node's) within the inherited
//   mask; a mask with none of them is kept as it is, and a narrower one is kept and said.
// - Memory: MPOL_BIND to the device's NUMA node when that node has CPUs or memory of its own.
// - CUDA_VISIBLE_DEVICES (the UUID when known, else the PCI-order index) with
//   CUDA_DEVICE_ORDER=PCI_BUS_ID; OMP_NUM_THREADS = the CPUs bound (unless the launcher set it).
// - --nic: the active RDMA port nearest the device (PIX < PXB < PHB < NODE < SYS), NCCL_IB_HCA
//   and UCX_NET_DEVICES; without one, the nearest up Ethernet interface of a physical function
//   as NCCL_SOCKET_IFNAME. Pure.
[[nodiscard]] Binding plan_binding(const topo::Machine& machine, const Accelerator& device,
                                   const std::vector<int>& inherited_cpus, const Environment& env,
                                   const Options& options);

// Sets the binding on this process: sched_setaffinity, set_mempolicy(MPOL_BIND) and the
// environment. A CPU or node the live machine lacks (a binding planned from a sysroot) is left
// out and said in `notes`; kUnavailable when nothing of the CPU mask exists here.
[[nodiscard]] Status apply_binding(const Binding& binding, std::vector<std::string>& notes);

// The CPUs this process may run on now (sched_getaffinity).
[[nodiscard]] std::vector<int> current_cpus();

// {"schema": "acco.exec-binding/1", "device": {...}, "device_cpus", "inherited_cpus", "cpus",
//  "memory_node", "nic", "env": [{"name","value","reason"}], "notes"}; CPU lists as cpulists.
[[nodiscard]] nlohmann::ordered_json to_json(const Binding& binding);
[[nodiscard]] report::Document binding_report(const Binding& binding);

}  // namespace acco::exec
