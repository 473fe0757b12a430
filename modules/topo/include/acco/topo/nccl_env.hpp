// What acco recommends NCCL, UCX and Open MPI use on this node (`acco probe --nccl-env`): the
// RDMA ports, the socket interfaces, and for a virtual machine whose flattened PCI tree misleads
// NCCL, an NCCL_TOPO_FILE that pairs each GPU with a NIC under one switch. Pure functions of an
// annotated Machine.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "acco/core/result.hpp"
#include "acco/topo/machine.hpp"

namespace acco::topo {

// One environment variable and why it has this value.
struct EnvSetting {
  std::string name;   // "NCCL_IB_HCA"
  std::string value;  // "=mlx5_0:1,mlx5_1:1"
  std::string reason;
  bool operator==(const EnvSetting&) const = default;
};

struct NcclEnv {
  std::vector<EnvSetting> settings;  // in a fixed order; a variable with nothing to say is absent
  std::vector<std::string> notes;    // what could not be chosen, and why
  // The "hypervisor" CPU flag or emulated bridges were found.
  bool virtual_machine = false;
  // A virtual machine with GPUs, where NCCL needs the topology file of nccl_topo_xml().
  bool wants_topo_file = false;
  bool operator==(const NcclEnv&) const = default;
};

// NCCL_IB_HCA and UCX_NET_DEVICES name the active InfiniBand/RoCE ports at the fastest rate
// ("=" makes NCCL match names exactly, so mlx5_1 does not also pick mlx5_10);
// NCCL_SOCKET_IFNAME and OMPI_MCA_btl_tcp_if_include the up interfaces of physical functions at
// the fastest speed (loopback, docker*, virbr*, veth*, br-* and other virtual interfaces left
// out); UCX_NET_DEVICES falls back to those without RDMA ports.
[[nodiscard]] NcclEnv nccl_env(const Machine& machine);

// NCCL's topology XML (NCCL_TOPO_FILE, version 1) for a virtual machine: per NUMA node a <cpu>
// holding, per GPU, a made-up PCIe switch (busid ffff:ff:NN.0) with that GPU and its NIC below
// it, GPU i with NIC i in address order (or i / k for k GPUs per NIC). NCCL fills in what the
// file leaves out (gpu, nic and net details) from NVML and the IB devices. Devices whose NUMA
// node is unknown are spread over the nodes in order. Links are the devices' own (max_link_*),
// not the emulated ports'. The comment at the top says how it was made.
[[nodiscard]] std::string nccl_topo_xml(const Machine& machine);

// Writes nccl_topo_xml(machine) to `path` (atomically) for a machine whose `env` wants one.
// kInvalidArgument otherwise: "ORIGIN is a virtual machine without GPUs; there is nothing for NCCL
// to pair", or "ORIGIN is not a virtual machine; NCCL reads its PCI topology from sysfs as it
// is"; kCannotWrite with the write's message when it fails.
[[nodiscard]] Status write_nccl_topo_file(const Machine& machine, const NcclEnv& env,
                                          const std::string& path);

// {"schema", "settings": [{"name", "value", "reason"}], "notes", "virtual_machine",
// "topo_file_advised", "topo_file": path or null}.
[[nodiscard]] nlohmann::ordered_json to_json(const NcclEnv& env, const std::string& topo_file);
// The settings as a POSIX shell sources them (`acco probe --nccl-env`): a heading naming the
// node, each setting's reason as a comment above its export line (values single-quoted), the
// notes, and NCCL_TOPO_FILE when `topo_file` was written (or, in a VM, how to write one).
[[nodiscard]] std::string nccl_env_text(const Machine& machine, const NcclEnv& env,
                                        const std::string& topo_file);

}  // namespace acco::topo
