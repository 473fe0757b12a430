// Platform checks: IOMMU groups that translate DMA, a virtual machine's emulated topology, an
// NVIDIA driver that NVML cannot reach, firmware NUMA tables that contradict themselves, and
// inputs that could not be understood.
#include <algorithm>
#include <cctype>
#include <iterator>
#include <numeric>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "acco/core/units.hpp"

#include "checks/check_support.hpp"
#include "checks/rule_checks.hpp"

namespace acco::topo::detail {

void check_iommu_translated(const Machine& m, std::vector<Finding>& out) {
  if (!m.iommu.enabled) {
    return;
  }
  const bool pt_cmdline = m.iommu.cmdline.find("iommu=pt") != std::string::npos;
  Finding f;
  f.severity = Severity::kWarning;
  for (const auto& g : m.iommu.groups) {
    if (g.type != "DMA" && g.type != "DMA-FQ") {
      continue;
    }
    for (const auto& address : g.devices) {
      const PciDevice* d = m.find(address);
      if (d != nullptr && (d->kind == DeviceKind::kGpu || d->kind == DeviceKind::kNic ||
                           d->kind == DeviceKind::kAccelerator)) {
        f.devices.push_back(address);
        if (f.evidence.size() < 4) {
          f.evidence.push_back({fmt::format("/sys/kernel/iommu_groups/{}/type", g.id), g.type});
        }
      }
    }
  }
  if (f.devices.empty()) {
    return;
  }
  f.evidence.push_back({"/proc/cmdline", m.iommu.cmdline});
  f.message = fmt::format(
      "{} GPU/NIC device(s) sit in IOMMU groups that translate DMA: every peer-to-peer and RDMA "
      "access pays an IOMMU lookup and P2P may be routed through the root complex",
      f.devices.size());
  f.recommendation =
      pt_cmdline ? "The cmdline has iommu=pt but these groups still translate; check for a "
                   "per-group override (`echo identity > /sys/kernel/iommu_groups/N/type` "
                   "with the devices unbound)"
                 : "Boot with `iommu=pt` (add it to GRUB_CMDLINE_LINUX in /etc/default/grub, "
                   "run `update-grub`, reboot) so host devices bypass translation";
  out.push_back(std::move(f));
}

void check_virtualized_topology(const Machine& m, std::vector<Finding>& out) {
  const auto guest = guest_evidence(m);
  if (guest.empty()) {
    return;
  }
  std::vector<std::string> flat;
  int accelerators = 0;
  bool numa_unknown = false;
  for (const auto& d : m.pci_devices) {
    if (d.kind == DeviceKind::kGpu || d.kind == DeviceKind::kAccelerator) {
      ++accelerators;
      if (d.parent.empty() || role_of(m, m.find(d.parent)) == PortRole::kRoot) {
        flat.push_back(d.address);
      }
      numa_unknown = numa_unknown || d.numa_node < 0;
    }
  }
  // What the guest's bridges are, by model: "4 QEMU pcie-root-port, 1 TI XIO3130 ...".
  const auto bridges = emulated_bridges(m);
  std::vector<std::pair<std::string, int>> models;
  for (const auto* b : bridges) {
    const auto model = emulated_bridge_model(m, *b);
    auto it = std::find_if(models.begin(), models.end(),
                           [&](const auto& entry) { return entry.first == model; });
    if (it == models.end()) {
      models.emplace_back(model, 1);
    } else {
      ++it->second;
    }
  }
  std::string made;
  for (const auto& [model, n] : models) {
    made += fmt::format("{}{} {}", made.empty() ? "" : ", ", n, model);
  }
  const std::string links =
      bridges.empty()
          ? std::string("PCIe link speeds and widths are the hypervisor's emulation")
          : fmt::format(
                "its {} bridge(s) ({}) are emulated, so every PCIe link speed and width "
                "it reports is the hypervisor's choice (link findings are info here)",
                bridges.size(), made);
  Finding f;
  f.devices = flat;
  f.evidence = guest;
  for (const auto* b : bridges) {
    if (f.evidence.size() >= 4) {
      break;
    }
    f.evidence.push_back({attr(b->address, "device"),
                          fmt::format("0x{:04x} (vendor 0x{:04x})", b->device_id, b->vendor_id)});
  }
  if (accelerators == 0) {
    f.severity = Severity::kInfo;
    f.message = fmt::format(
        "this is a virtual machine ({} PCI functions): {}; NUMA facts are the guest's too, not "
        "the host's hardware",
        m.pci_devices.size(), links);
    f.recommendation = "Run acco on the host to assess the physical links";
  } else {
    f.severity = accelerators > 1 ? Severity::kWarning : Severity::kInfo;
    f.message = fmt::format(
        "this is a virtual machine and {} of {} accelerator(s) sit directly on emulated root "
        "ports{}: the guest sees a flattened topology, so NCCL's path search and acco's path "
        "classes describe the emulation, not the host's switches and sockets; {}. What the guest "
        "can know: device counts, NIC port states and rates, NVLink states, and what a transfer "
        "measures",
        flat.size(), accelerators, numa_unknown ? " with unknown NUMA nodes" : "", links);
    f.recommendation =
        "Give NCCL the host's real topology with NCCL_TOPO_FILE (cloud images ship one), expose "
        "virtual NUMA with vCPU pinning, and run `acco probe` on the host for link facts";
  }
  out.push_back(std::move(f));
}

namespace {

// NVML_ERROR_LIB_RM_VERSION_MISMATCH (18): "Driver/library version mismatch", what nvidia-smi
// prints after a driver upgrade until the old kernel module is unloaded.
bool nvml_version_mismatch(const Machine& m) {
  return !m.nvml.available && (m.nvml.reason.find("(18)") != std::string::npos ||
                               m.nvml.reason.find("version mismatch") != std::string::npos);
}

}  // namespace

void check_nvidia_driver_mismatch(const Machine& m, std::vector<Finding>& out) {
  if (!nvml_version_mismatch(m)) {
    return;
  }
  Finding f;
  f.severity = Severity::kCritical;
  f.devices = nvidia_gpus(m);
  f.evidence = {{"nvml", m.nvml.reason}};
  if (!m.software.kernel_module_line.empty()) {
    f.evidence.push_back({"/proc/driver/nvidia/version", m.software.kernel_module_line});
  }
  f.message = fmt::format(
      "the NVIDIA user-space libraries do not match the loaded kernel module{}: NVML, CUDA and "
      "nvidia-smi fail until they do (a driver upgraded without a reboot)",
      m.software.kernel_module.empty() ? std::string()
                                       : fmt::format(" ({})", m.software.kernel_module));
  f.recommendation =
      "Reboot, or stop every GPU process and reload the modules (rmmod nvidia_uvm nvidia_drm "
      "nvidia_modeset nvidia; modprobe nvidia); in a container, the host's libraries must be "
      "mounted (docker --gpus, CDI), not a copy baked into the image";
  out.push_back(std::move(f));
}

void check_nvml_unavailable(const Machine& m, std::vector<Finding>& out) {
  // An XML export never holds NVML's answers; a version mismatch is its own critical finding.
  if (m.nvml.available || !m.sysfs_read || nvml_version_mismatch(m)) {
    return;
  }
  const auto gpus = nvidia_gpus(m);
  if (gpus.empty()) {
    return;
  }
  Finding f;
  f.severity = Severity::kInfo;
  f.devices = gpus;
  f.evidence = {{"nvml", m.nvml.reason}};
  f.message = fmt::format(
      "{} NVIDIA GPU(s) found but NVML is not available ({}): NVLink, P2P and performance-state "
      "checks were skipped",
      gpus.size(), m.nvml.reason.empty() ? "not queried" : m.nvml.reason);
  f.recommendation = "Install or load the NVIDIA driver (`nvidia-smi` must work), then re-run";
  out.push_back(std::move(f));
}

// The flags that give a container the host's devices, per runtime.
std::string gpu_flags(const std::string& runtime) {
  if (runtime == "podman") {
    return "podman run --device nvidia.com/gpu=all (CDI; make the spec once with `nvidia-ctk cdi "
           "generate --output=/etc/cdi/nvidia.yaml`)";
  }
  if (runtime == "apptainer") {
    return "apptainer exec --nv (or --nvccli with the NVIDIA Container CLI)";
  }
  if (runtime == "kubernetes") {
    return "request resources.limits nvidia.com/gpu with the NVIDIA device plugin (or the GPU "
           "Operator) installed";
  }
  return "docker run --gpus all (the NVIDIA Container Toolkit; `nvidia-ctk runtime configure "
         "--runtime=docker` once)";
}

void check_container_devices_missing(const Machine& m, std::vector<Finding>& out) {
  const Container& c = m.container;
  if (c.runtime.empty() || !m.sysfs_read) {
    return;
  }
  const auto gpus = nvidia_gpus(m);
  const bool ctl =
      std::find(c.nvidia_nodes.begin(), c.nvidia_nodes.end(), "nvidiactl") != c.nvidia_nodes.end();
  const bool any_gpu =
      std::any_of(c.nvidia_nodes.begin(), c.nvidia_nodes.end(), [](const std::string& n) {
        return n.size() > 6 && std::all_of(n.begin() + 6, n.end(), [](char ch) {
                 return std::isdigit(static_cast<unsigned char>(ch)) != 0;
               });
      });
  if (!gpus.empty() && (!ctl || !any_gpu)) {
    Finding f;
    f.severity = Severity::kCritical;
    f.devices = gpus;
    f.evidence = {
        {"container", c.evidence},
        {"/dev", c.nvidia_nodes.empty() ? std::string("no nvidia* device nodes")
                                        : fmt::format("{}", fmt::join(c.nvidia_nodes, " "))}};
    f.message = fmt::format(
        "in a {} container that was given {} of the host's NVIDIA device nodes: the {} GPU(s) on "
        "PCI are invisible to CUDA and NVML here",
        c.runtime, c.nvidia_nodes.empty() ? "none" : "not all", gpus.size());
    f.recommendation = "Start the container with " + gpu_flags(c.runtime);
    out.push_back(std::move(f));
  }
  const bool rdma = std::any_of(m.ib_ports.begin(), m.ib_ports.end(),
                                [](const IbPort& p) { return p.state == 4; });
  const bool uverbs = std::any_of(c.rdma_nodes.begin(), c.rdma_nodes.end(),
                                  [](const std::string& n) { return n.starts_with("uverbs"); });
  if (rdma && !uverbs) {
    Finding f;
    f.severity = Severity::kWarning;
    for (const IbPort& p : m.ib_ports) {
      if (p.state == 4 && !p.pci.empty()) {
        f.devices.push_back(p.pci);
      }
    }
    f.evidence = {{"container", c.evidence},
                  {"/dev/infiniband", c.rdma_nodes.empty()
                                          ? std::string("absent or empty")
                                          : fmt::format("{}", fmt::join(c.rdma_nodes, " "))}};
    f.message = fmt::format(
        "in a {} container without /dev/infiniband/uverbs*: the host's active RDMA ports cannot "
        "be used, so NCCL and UCX fall back to TCP sockets",
        c.runtime);
    f.recommendation =
        c.runtime == "kubernetes"
            ? "Expose the HCAs with an RDMA device plugin (k8s-rdma-shared-dev-plugin or the "
              "Network Operator) and add the IPC_LOCK capability"
            : "Start the container with --device=/dev/infiniband --cap-add=IPC_LOCK --ulimit "
              "memlock=-1:-1 (Apptainer binds /dev already)";
    out.push_back(std::move(f));
  }
}

namespace {

std::string node_name(const NumaNode& n) {
  return fmt::format("node{}", n.id);
}

// The node's CPU list as read; a cpulist of just a newline reads as empty, said in words.
Evidence cpus_evidence(const NumaNode& n) {
  return {n.cpus_source, n.cpus_text.empty() ? "(empty: no CPUs)" : n.cpus_text};
}

std::vector<int> common_cpus(const NumaNode& a, const NumaNode& b) {
  std::vector<int> both;
  std::set_intersection(a.cpus.begin(), a.cpus.end(), b.cpus.begin(), b.cpus.end(),
                        std::back_inserter(both));
  return both;
}

// Groups of nodes joined by shared CPUs, each group in node order, only groups of two or more.
std::vector<std::vector<const NumaNode*>> overlapping_groups(const std::vector<NumaNode>& nodes) {
  std::vector<std::size_t> group(nodes.size());
  std::iota(group.begin(), group.end(), 0);
  const auto root = [&](std::size_t i) {
    while (group[i] != i) {
      i = group[i];
    }
    return i;
  };
  // Only the kernel's own lists count: CPUs filled in from hwloc (a node whose list could not be
  // read) or hwloc's locality of a memory-only node are not CPUs the firmware gave the node.
  const auto own = [&](std::size_t i) { return !nodes[i].cpus_source.empty(); };
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (std::size_t k = i + 1; k < nodes.size(); ++k) {
      if (own(i) && own(k) && !common_cpus(nodes[i], nodes[k]).empty()) {
        group[root(k)] = root(i);
      }
    }
  }
  std::vector<std::vector<const NumaNode*>> out;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (root(i) != i) {
      continue;
    }
    std::vector<const NumaNode*> members;
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      if (root(k) == i) {
        members.push_back(&nodes[k]);
      }
    }
    if (members.size() > 1) {
      out.push_back(std::move(members));
    }
  }
  return out;
}

std::string node_ids(const std::vector<const NumaNode*>& nodes) {
  std::string out;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    out +=
        fmt::format("{}{}", i == 0 ? "" : (i + 1 == nodes.size() ? " and " : ", "), nodes[i]->id);
  }
  return out;
}

}  // namespace

void check_numa_topology_inconsistent(const Machine& m, std::vector<Finding>& out) {
  const auto& nodes = m.numa_nodes;
  for (const auto& group : overlapping_groups(nodes)) {
    std::vector<int> shared;
    std::vector<std::string> lists;
    bool identical = true;
    Finding f;
    f.severity = Severity::kWarning;
    for (std::size_t i = 0; i < group.size(); ++i) {
      f.devices.push_back(node_name(*group[i]));
      f.evidence.push_back(cpus_evidence(*group[i]));
      lists.push_back(fmt::format("node {} {}", group[i]->id, group[i]->cpus_text));
      identical = identical && group[i]->cpus == group.front()->cpus;
      for (std::size_t k = i + 1; k < group.size(); ++k) {
        const auto both = common_cpus(*group[i], *group[k]);
        shared.insert(shared.end(), both.begin(), both.end());
      }
    }
    std::sort(shared.begin(), shared.end());
    shared.erase(std::unique(shared.begin(), shared.end()), shared.end());
    // The lists as read: nodes holding 20-23 and 12-23 share CPUs, they do not list the same ones.
    const std::string what =
        identical ? fmt::format("list the same CPUs ({})", group.front()->cpus_text)
                  : fmt::format("list overlapping CPUs ({}; CPU(s) {} in more than one)",
                                fmt::join(lists, ", "), units::format_cpulist(shared));
    f.message = fmt::format(
        "NUMA nodes {} {}: the firmware's SRAT/SLIT describes overlapping "
        "proximity domains; hwloc merges such nodes (and warns), so hwloc-based tools (MPI "
        "launchers, lstopo) count fewer nodes than the kernel lists, and binding memory to one "
        "of them may not place it near those CPUs",
        node_ids(group), what);
    f.recommendation =
        "Update the BIOS/firmware and check its NUMA settings (SNC/NPS, node interleaving); "
        "compare `numactl -H` with `lstopo-no-graphics`; until it is fixed, bind to these nodes "
        "together (`numactl --cpunodebind` with all of them)";
    out.push_back(std::move(f));
  }

  for (const auto& n : nodes) {
    // Only a node whose CPU list was read and whose meminfo said 0 is known to be empty.
    if (!n.cpus.empty() || n.cpus_source.empty() || !n.memory_known || n.memory_bytes != 0) {
      continue;
    }
    Finding f;
    f.severity = Severity::kInfo;
    f.devices = {node_name(n)};
    f.evidence = {cpus_evidence(n),
                  {fmt::format("/sys/devices/system/node/node{}/meminfo", n.id), "MemTotal: 0 kB"}};
    f.message = fmt::format(
        "NUMA node {} has no CPUs and no memory: the firmware declares a proximity domain with "
        "nothing in it (a hot-plug or CXL placeholder, or a broken SRAT), and tools that count "
        "nodes count it",
        n.id);
    f.recommendation =
        "Nothing to do if memory is hot-plugged into it later; otherwise check the BIOS NUMA "
        "settings and update the firmware";
    out.push_back(std::move(f));
  }

  // CPUs in no node: only decidable when the kernel listed nodes and each one's CPUs were read.
  const bool all_read = std::all_of(nodes.begin(), nodes.end(),
                                    [](const NumaNode& n) { return !n.cpus_source.empty(); });
  if (nodes.empty() || !all_read || m.online_cpus.empty()) {
    return;
  }
  std::vector<int> homeless;
  for (const int cpu : m.online_cpus) {
    const bool placed = std::any_of(nodes.begin(), nodes.end(), [&](const NumaNode& n) {
      return std::binary_search(n.cpus.begin(), n.cpus.end(), cpu);
    });
    if (!placed) {
      homeless.push_back(cpu);
    }
  }
  if (homeless.empty()) {
    return;
  }
  Finding f;
  f.severity = Severity::kWarning;
  f.evidence.push_back({"/sys/devices/system/cpu/online", units::format_cpulist(m.online_cpus)});
  // A node the firmware declares (node/possible) that the kernel did not bring online has no
  // directory: its CPUs are online but listed nowhere.
  std::vector<int> offline;
  std::set_difference(m.possible_nodes.begin(), m.possible_nodes.end(), m.online_nodes.begin(),
                      m.online_nodes.end(), std::back_inserter(offline));
  if (!offline.empty()) {
    f.evidence.push_back(
        {"/sys/devices/system/node/possible", units::format_cpulist(m.possible_nodes)});
    f.evidence.push_back(
        {"/sys/devices/system/node/online", units::format_cpulist(m.online_nodes)});
  }
  for (const auto& n : nodes) {
    f.devices.push_back(node_name(n));
    if (f.evidence.size() < 5) {
      f.evidence.push_back(cpus_evidence(n));
    }
  }
  if (offline.empty()) {
    f.message = fmt::format(
        "online CPU(s) {} are in no NUMA node's CPU list: the firmware's SRAT gives them no "
        "proximity domain, so which memory is local to threads on them is unknown",
        units::format_cpulist(homeless));
    f.recommendation =
        "Update the BIOS/firmware and check its NUMA settings; meanwhile keep latency-sensitive "
        "threads off these CPUs (`taskset`/`numactl --physcpubind`)";
  } else {
    f.message = fmt::format(
        "online CPU(s) {} are in no online NUMA node's CPU list, and node(s) {} are possible but "
        "offline (node/possible {}, node/online {}): the kernel did not bring up the node these "
        "CPUs belong to, so no memory is local to threads on them",
        units::format_cpulist(homeless), units::format_cpulist(offline),
        units::format_cpulist(m.possible_nodes), units::format_cpulist(m.online_nodes));
    f.recommendation = fmt::format(
        "Check why node {} is offline: memory missing or failed on its socket (`dmesg | grep -i "
        "numa`, the BIOS memory population), or a kernel booted with `numa=off`/`mem=`; "
        "meanwhile keep latency-sensitive threads off these CPUs (`taskset`)",
        units::format_cpulist(offline));
  }
  out.push_back(std::move(f));
}

void check_input_unreadable(const Machine& m, std::vector<Finding>& out) {
  for (const auto& issue : m.input_issues) {
    Finding f;
    f.severity = Severity::kInfo;
    f.evidence = {{issue.path, issue.problem}};
    f.message = fmt::format("could not use {}: {}; facts that depend on it are unknown", issue.path,
                            issue.problem);
    f.recommendation =
        "If this is a live system, check the kernel version and permissions; if it is a "
        "recorded sysroot or snapshot, re-capture it with `acco probe --snapshot FILE`";
    out.push_back(std::move(f));
  }
}

}  // namespace acco::topo::detail
