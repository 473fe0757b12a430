#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "acco/core/units.hpp"
#include "acco/exec/binding.hpp"
#include "acco/topo/link_model.hpp"

namespace acco::exec {
namespace {

constexpr std::uint16_t kNvidia = 0x10de;

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::vector<int> intersect(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> sa = a;
  std::vector<int> sb = b;
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  std::vector<int> out;
  std::set_intersection(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(out));
  return out;
}

std::string label(const Accelerator& device) {
  return fmt::format("GPU{}", device.index);
}

// The CPUs near the device: its PCI local_cpulist, else its NUMA node's CPUs.
std::vector<int> device_cpus(const topo::Machine& machine, const topo::PciDevice& pci) {
  if (!pci.local_cpus.empty()) {
    return pci.local_cpus;
  }
  for (const topo::NumaNode& node : machine.numa_nodes) {
    if (node.id == pci.numa_node) {
      return node.cpus;
    }
  }
  return {};
}

// The nearest active RDMA port, else the nearest up interface of a physical function.
void choose_nic(const topo::Machine& machine, const Accelerator& device, Binding& binding) {
  const topo::IbPort* best_port = nullptr;
  topo::Path best_port_path;
  for (const topo::IbPort& port : machine.ib_ports) {
    if (port.state != 4 || port.pci.empty() || machine.find(port.pci) == nullptr) {
      continue;
    }
    const topo::Path path = topo::classify_path(machine, device.address, port.pci);
    if (best_port == nullptr || path.path_class < best_port_path.path_class) {
      best_port = &port;
      best_port_path = path;
    }
  }
  if (best_port != nullptr) {
    binding.nic = fmt::format("{}:{}", best_port->device, best_port->port);
    const std::string why =
        fmt::format("the active RDMA port nearest {}: {} from {}", label(device),
                    topo::to_string(best_port_path), device.address);
    binding.env.push_back({"NCCL_IB_HCA", "=" + binding.nic, why});
    binding.env.push_back({"UCX_NET_DEVICES", binding.nic, why});
    return;
  }
  const topo::NetInterface* best = nullptr;
  topo::Path best_path;
  for (const topo::NetInterface& nic : machine.net_interfaces) {
    if (nic.operstate != "up" || nic.pci.empty() || machine.find(nic.pci) == nullptr) {
      continue;
    }
    const topo::Path path = topo::classify_path(machine, device.address, nic.pci);
    if (best == nullptr || path.path_class < best_path.path_class) {
      best = &nic;
      best_path = path;
    }
  }
  if (best == nullptr) {
    binding.notes.push_back(
        "--nic auto: no active RDMA port and no up interface of a PCI network device: NCCL and "
        "UCX choose their own");
    return;
  }
  binding.nic = best->name;
  const std::string why =
      fmt::format("no active RDMA port; the up interface nearest {}: {} from {}", label(device),
                  topo::to_string(best_path), device.address);
  binding.env.push_back({"NCCL_SOCKET_IFNAME", "=" + best->name, why});
  binding.env.push_back({"UCX_NET_DEVICES", best->name, why});
}

}  // namespace

std::vector<Accelerator> accelerators(const topo::Machine& machine) {
  std::vector<Accelerator> out;
  for (const topo::PciDevice& pci : machine.pci_devices) {  // sorted by address: PCI_BUS_ID order
    if (pci.vendor_id != kNvidia ||
        (pci.kind != topo::DeviceKind::kGpu && pci.kind != topo::DeviceKind::kAccelerator)) {
      continue;
    }
    Accelerator a;
    a.index = static_cast<int>(out.size());
    a.address = pci.address;
    a.numa_node = pci.numa_node;
    a.name =
        pci.model.empty() ? fmt::format("{:04x}:{:04x}", pci.vendor_id, pci.device_id) : pci.model;
    if (const topo::NvmlGpu* gpu = machine.nvml_gpu(pci.address)) {
      a.index = gpu->index;
      a.uuid = gpu->uuid;
      for (const topo::MigDevice& mig : gpu->mig_devices) {
        a.mig_uuids.push_back(mig.uuid);
      }
    }
    out.push_back(std::move(a));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Accelerator& a, const Accelerator& b) { return a.index < b.index; });
  return out;
}

Result<Accelerator> select_device(const std::vector<Accelerator>& devices, std::string_view spec) {
  std::vector<std::string> there;
  there.reserve(devices.size());
  for (const Accelerator& d : devices) {
    there.push_back(fmt::format("{} {}", d.index, d.address));
  }
  const std::string known = devices.empty() ? "this machine has no NVIDIA GPU"
                                            : fmt::format("there are {}", fmt::join(there, ", "));
  if (lower(spec).starts_with("mig-")) {
    for (const Accelerator& d : devices) {
      for (const std::string& uuid : d.mig_uuids) {
        if (lower(uuid) == lower(spec)) {
          Accelerator instance = d;
          instance.mig = uuid;
          return instance;
        }
      }
    }
    return fail(Errc::kNotFound,
                fmt::format("--device {}: no such MIG instance (NVML lists each GPU's MIG "
                            "instances; `acco probe` shows them; {})",
                            spec, known));
  }
  const auto index = units::parse_int(spec);
  const std::string wanted = lower(spec);
  for (const Accelerator& d : devices) {
    if ((index && *index == d.index) || (!d.uuid.empty() && lower(d.uuid) == wanted) ||
        d.address == wanted || d.address == "0000:" + wanted) {
      return d;
    }
  }
  return fail(Errc::kNotFound,
              fmt::format("--device {}: no such GPU (an index, a PCI address or a GPU UUID; {})",
                          spec, known));
}

Result<Accelerator> device_for_rank(const std::vector<Accelerator>& devices, const LocalRank& rank,
                                    std::string& note) {
  if (devices.empty()) {
    return fail(Errc::kNotFound, "--local-rank auto: this machine has no NVIDIA GPU to give ranks");
  }
  const auto count = static_cast<int>(devices.size());
  const int slot = rank.rank % count;
  const Accelerator& device = devices[static_cast<std::size_t>(slot)];
  if (rank.size > count || rank.rank >= count) {
    std::vector<std::string> sharing;
    for (int r = slot; r < std::max(rank.size, rank.rank + 1); r += count) {
      sharing.push_back(std::to_string(r));
    }
    if (rank.size == 0) {
      sharing.emplace_back("...");
    }
    note = fmt::format(
        "{} ranks on this node share {} GPU(s): rank {} takes GPU{} (local rank mod {}), which "
        "runs ranks {}",
        rank.size > 0 ? std::to_string(rank.size) : "more", count, rank.rank, device.index, count,
        fmt::join(sharing, ", "));
  }
  return device;
}

Binding plan_binding(const topo::Machine& machine, const Accelerator& device,
                     const std::vector<int>& inherited_cpus, const Environment& env,
                     const Options& options) {
  Binding b;
  b.device = device;
  b.inherited_cpus = inherited_cpus;
  const topo::PciDevice* pci = machine.find(device.address);
  if (pci != nullptr) {
    b.device_cpus = device_cpus(machine, *pci);
  }
  const std::string gpu = label(device);
  if (!options.bind) {
    b.notes.push_back("--bind none: CPUs and memory left as inherited");
  } else if (b.device_cpus.empty() || device.numa_node < 0) {
    // A local_cpulist of every CPU beside numa_node -1 (a VM's flat PCI tree) says nothing.
    b.notes.push_back(fmt::format(
        "{}'s NUMA node is unknown (the kernel says -1, as many VMs do): CPUs and memory left as "
        "inherited",
        gpu));
  } else {
    const std::vector<int> both = intersect(b.device_cpus, inherited_cpus);
    const std::string device_list = units::format_cpulist(b.device_cpus);
    const std::string inherited_list = units::format_cpulist(inherited_cpus);
    if (both.empty()) {
      b.notes.push_back(fmt::format(
          "the inherited CPU mask ({}) holds none of {}'s CPUs ({}): kept as it is (the launcher "
          "bound this process elsewhere; mpirun --bind-to none lets acco choose)",
          inherited_list, gpu, device_list));
    } else {
      b.cpus = both;
      if (both == inherited_cpus && both != b.device_cpus) {
        b.notes.push_back(
            fmt::format("the inherited CPU mask ({}) is narrower than {}'s CPUs ({}): kept",
                        inherited_list, gpu, device_list));
      } else if (both != b.device_cpus) {
        b.notes.push_back(fmt::format("{}'s CPUs ({}) within the inherited mask ({}): {}", gpu,
                                      device_list, inherited_list, units::format_cpulist(both)));
      }
    }
    if (device.numa_node >= 0) {
      b.memory_node = device.numa_node;
    }
  }
  const std::string visible = !device.mig.empty()   ? device.mig
                              : device.uuid.empty() ? std::to_string(device.index)
                                                    : device.uuid;
  if (const auto it = env.find("CUDA_VISIBLE_DEVICES"); it != env.end() && it->second != visible) {
    b.notes.push_back(fmt::format(
        "CUDA_VISIBLE_DEVICES was '{}' before acco exec: replaced by '{}' (acco numbers the "
        "machine's GPUs, not the ones a launcher left visible)",
        units::excerpt(it->second), visible));
  }
  b.env.push_back({"CUDA_DEVICE_ORDER", "PCI_BUS_ID",
                   "CUDA numbers GPUs fastest first otherwise, not as nvidia-smi does"});
  b.env.push_back(
      {"CUDA_VISIBLE_DEVICES", visible,
       !device.mig.empty()
           ? fmt::format("a MIG instance of {} at {}: the process sees that instance alone", gpu,
                         device.address)
           : fmt::format("{} at {}{}", gpu, device.address,
                         device.uuid.empty() ? "; no NVML, so its index in PCI order" : "")});
  if (!b.cpus.empty()) {
    if (const auto it = env.find("OMP_NUM_THREADS"); it != env.end()) {
      b.notes.push_back(fmt::format("OMP_NUM_THREADS={} was set before acco exec: kept",
                                    units::excerpt(it->second)));
    } else {
      b.env.push_back(
          {"OMP_NUM_THREADS", std::to_string(b.cpus.size()), "one OpenMP thread per CPU bound"});
    }
  }
  if (options.nic) {
    choose_nic(machine, device, b);
  }
  return b;
}

}  // namespace acco::exec
