#include "acco/exec/check.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "acco/core/units.hpp"
#include "acco/topo/link_model.hpp"

namespace acco::exec {
namespace {

std::string gpu_label(const Accelerator& d) {
  return fmt::format("GPU{}", d.index);
}

// The NUMA nodes holding `cpus`, in order.
std::vector<int> nodes_of(const topo::Machine& machine, const std::vector<int>& cpus) {
  std::set<int> nodes;
  for (const topo::NumaNode& node : machine.numa_nodes) {
    for (const int cpu : node.cpus) {
      if (std::binary_search(cpus.begin(), cpus.end(), cpu)) {
        nodes.insert(node.id);
        break;
      }
    }
  }
  return {nodes.begin(), nodes.end()};
}

const topo::NumaNode* node_with_id(const topo::Machine& machine, int id) {
  for (const topo::NumaNode& node : machine.numa_nodes) {
    if (node.id == id) {
      return &node;
    }
  }
  return nullptr;
}

std::string nodes_text(const std::vector<int>& nodes) {
  return nodes.size() == 1 ? fmt::format("NUMA node {}", nodes[0])
                           : fmt::format("NUMA nodes {}", fmt::join(nodes, ","));
}

// The GPU the process will use, and the item that says how it was told.
CheckItem which_gpu(const topo::Machine& machine, const std::vector<Accelerator>& devices,
                    const Environment& env, std::optional<Accelerator>& device) {
  CheckItem item{.name = "GPU"};
  const auto visible = env.find("CUDA_VISIBLE_DEVICES");
  const auto order = env.find("CUDA_DEVICE_ORDER");
  const bool pci_order = order != env.end() && order->second == "PCI_BUS_ID";
  if (visible != env.end()) {
    const std::string first = units::split(visible->second, ',').empty()
                                  ? std::string()
                                  : units::split(visible->second, ',').front();
    if (first.empty()) {
      item.value = "none: CUDA_VISIBLE_DEVICES is empty";
      return item;
    }
    const bool by_index = units::parse_int(first).has_value();
    if (auto found = select_device(devices, first)) {
      device = *found;
      item.value = fmt::format("{} {} ({}, CUDA_VISIBLE_DEVICES={})", gpu_label(*found),
                               found->address, found->name, units::excerpt(visible->second));
    } else {
      item.value = fmt::format("CUDA_VISIBLE_DEVICES={}: not a GPU of this machine",
                               units::excerpt(visible->second));
      item.problem = found.error().message;
      item.fix = "name a GPU acco lists (acco exec --device N sets it)";
      return item;
    }
    if (by_index && !pci_order && devices.size() > 1) {
      item.problem =
          "CUDA_VISIBLE_DEVICES holds an index while CUDA_DEVICE_ORDER is not PCI_BUS_ID: CUDA "
          "numbers the fastest GPU first, so its device " +
          first + " may not be nvidia-smi's (or acco's)";
      item.fix = "export CUDA_DEVICE_ORDER=PCI_BUS_ID (acco exec sets it), or name the GPU by UUID";
    }
    return item;
  }
  if (auto rank = local_rank(env)) {
    std::string note;
    if (auto found = device_for_rank(devices, *rank, note)) {
      device = *found;
      item.value = fmt::format(
          "{} GPUs visible; local rank {} ({}): {} if the program picks its GPU by local rank "
          "(checked below as that)",
          devices.size(), rank->rank, rank->source, gpu_label(*found));
      if (devices.size() > 1 && rank->size != 1) {
        item.problem = fmt::format(
            "every rank sees all {} GPUs: unless the program picks its GPU by local rank, all "
            "ranks use GPU0",
            devices.size());
        item.fix = "acco exec --local-rank auto -- CMD (each rank its own GPU, CPUs and memory)";
      }
      return item;
    }
  }
  item.value = devices.empty() ? "none: this machine has no NVIDIA GPU"
                               : fmt::format("not chosen: all {} GPU(s) visible", devices.size());
  (void)machine;
  return item;
}

CheckItem cpu_item(const topo::Machine& machine, const std::optional<Accelerator>& device,
                   const std::optional<ProcessMasks>& masks) {
  CheckItem item{.name = "CPUs"};
  if (!masks || masks->cpus.empty()) {
    item.value = "unknown (/proc/self/status has no Cpus_allowed_list)";
    return item;
  }
  const std::vector<int> nodes = nodes_of(machine, masks->cpus);
  item.value = fmt::format("{} ({})", units::format_cpulist(masks->cpus),
                           nodes.empty() ? "NUMA node unknown" : nodes_text(nodes));
  if (!device || device->numa_node < 0) {
    return item;
  }
  const topo::NumaNode* node = node_with_id(machine, device->numa_node);
  if (node == nullptr || node->cpus.empty()) {
    return item;
  }
  std::vector<int> near;
  std::set_intersection(masks->cpus.begin(), masks->cpus.end(), node->cpus.begin(),
                        node->cpus.end(), std::back_inserter(near));
  const std::string gpu = gpu_label(*device);
  if (near.empty()) {
    item.problem = fmt::format(
        "none of them is on {}'s NUMA node {} (CPUs {}): every copy to the GPU crosses the "
        "socket link",
        gpu, device->numa_node, units::format_cpulist(node->cpus));
    item.fix = fmt::format(
        "acco exec --device {} -- CMD; under mpirun --bind-to none or srun --cpu-bind=none so "
        "acco can bind",
        device->index);
  } else if (near.size() < masks->cpus.size()) {
    item.problem = fmt::format(
        "not bound: they span {}, and {} is on node {}; threads and memory may land on the "
        "far socket",
        nodes_text(nodes), gpu, device->numa_node);
    item.fix = fmt::format("acco exec --device {} -- CMD (binds to CPUs {})", device->index,
                           units::format_cpulist(near));
  }
  return item;
}

CheckItem memory_item(const std::optional<Accelerator>& device,
                      const std::optional<ProcessMasks>& masks) {
  CheckItem item{.name = "memory nodes"};
  if (!masks || masks->mems.empty()) {
    item.value = "unknown (/proc/self/status has no Mems_allowed_list)";
    return item;
  }
  item.value = units::format_cpulist(masks->mems);
  if (device && device->numa_node >= 0 &&
      !std::binary_search(masks->mems.begin(), masks->mems.end(), device->numa_node)) {
    item.problem = fmt::format(
        "the process's cpuset leaves out GPU{}'s NUMA node {}: its host buffers are all remote",
        device->index, device->numa_node);
    item.fix = "widen the job's cpuset.mems (Slurm: --mem-bind=local or a node-local allocation)";
  }
  return item;
}

CheckItem nic_item(const topo::Machine& machine, const std::optional<Accelerator>& device,
                   const Environment& env) {
  CheckItem item{.name = "NIC"};
  if (!device) {
    item.value = "not checked: no GPU chosen";
    return item;
  }
  Binding nearest;
  // The nearest port as acco exec --nic auto would choose it.
  nearest = plan_binding(machine, *device, {}, {}, {.bind = false, .nic = true});
  if (nearest.nic.empty()) {
    item.value = "none near the GPU (no active RDMA port or PCI network interface)";
    return item;
  }
  std::string reason;
  for (const EnvVar& var : nearest.env) {
    if (var.name == "NCCL_IB_HCA" || var.name == "NCCL_SOCKET_IFNAME") {
      reason = var.reason;
    }
  }
  item.value = fmt::format("{} ({})", nearest.nic, reason);
  const auto hca = env.find("NCCL_IB_HCA");
  if (hca != env.end() && nearest.nic.find(':') != std::string::npos) {
    const std::string port = nearest.nic;
    const std::string name = port.substr(0, port.find(':'));
    std::string list = hca->second;
    const bool exact = list.starts_with('=');
    const bool exclude = list.starts_with('^');
    if (exact || exclude) {
      list.erase(0, 1);
    }
    bool listed = false;
    for (const std::string& entry : units::split(list, ',')) {
      const std::string entry_name = entry.substr(0, entry.find(':'));
      listed =
          listed || entry == port || entry_name == name || (!exact && name.starts_with(entry_name));
    }
    if (listed == exclude) {
      item.problem = fmt::format("NCCL_IB_HCA={} leaves out {}, the port nearest GPU{}",
                                 units::excerpt(hca->second), port, device->index);
      item.fix = fmt::format("acco exec --device {} --nic auto -- CMD (NCCL_IB_HCA==={})",
                             device->index, port);
    }
  }
  return item;
}

CheckItem shm_item(const topo::Machine& machine) {
  CheckItem item{.name = "/dev/shm"};
  const auto& limits = machine.limits;
  if (!limits.shm_bytes) {
    item.value = "unknown (not a mount here)";
    return item;
  }
  item.value = fmt::format("{} ({})", units::format_bytes(*limits.shm_bytes), limits.shm_evidence);
  if (*limits.shm_bytes < kMinShmBytes) {
    item.problem =
        "below 1 GiB: NCCL's shared-memory transport fails (\"Error while creating shared "
        "memory segment\") and DataLoader workers run out";
    item.fix =
        "docker/podman run --shm-size=1g (or --ipc=host); Kubernetes: an emptyDir with medium: "
        "Memory at /dev/shm";
  }
  return item;
}

CheckItem memlock_item(const topo::Machine& machine) {
  CheckItem item{.name = "locked memory"};
  const auto& limits = machine.limits;
  if (!limits.memlock_unlimited) {
    item.value = "unknown (/proc/self/limits not read)";
    return item;
  }
  item.value = *limits.memlock_unlimited ? "unlimited"
                                         : units::format_bytes(limits.memlock_bytes.value_or(0));
  const bool rdma = std::any_of(machine.ib_ports.begin(), machine.ib_ports.end(),
                                [](const topo::IbPort& p) { return p.state == 4; });
  if (!*limits.memlock_unlimited && rdma) {
    item.problem =
        "limited on a machine with active RDMA ports: registering GPU and host buffers for "
        "InfiniBand/RoCE fails or falls back";
    item.fix =
        "ulimit -l unlimited; docker/podman run --ulimit memlock=-1:-1; Slurm: "
        "PropagateResourceLimitsExcept=MEMLOCK";
  }
  return item;
}

}  // namespace

int BindingCheck::problems() const {
  return static_cast<int>(std::count_if(items.begin(), items.end(),
                                        [](const CheckItem& i) { return !i.problem.empty(); }));
}

Result<ProcessMasks> read_process_masks(const core::Fs& fs) {
  ACCO_ASSIGN_OR_RETURN(const std::string status, fs.read_file("/proc/self/status"),
                        "/proc/self/status");
  ProcessMasks masks;
  for (const std::string& line : units::split(status, '\n')) {
    for (const auto& [key, target] : {std::pair{"Cpus_allowed_list:", &masks.cpus},
                                      std::pair{"Mems_allowed_list:", &masks.mems}}) {
      if (!line.starts_with(key)) {
        continue;
      }
      const std::string text(
          units::trim(std::string_view(line).substr(std::string_view(key).size())));
      auto list = units::parse_cpulist(text);
      if (!list) {
        return fail(Errc::kInvalidArgument,
                    fmt::format("/proc/self/status: {} '{}' is not a list like 0-3,8",
                                std::string_view(key).substr(0, std::string_view(key).size() - 1),
                                units::excerpt(text)));
      }
      *target = std::move(*list);
    }
  }
  return masks;
}

BindingCheck check_binding(const topo::Machine& machine, const std::optional<ProcessMasks>& masks,
                           const Environment& env) {
  BindingCheck check;
  const std::vector<Accelerator> devices = accelerators(machine);
  check.items.push_back(which_gpu(machine, devices, env, check.device));
  check.items.push_back(cpu_item(machine, check.device, masks));
  check.items.push_back(memory_item(check.device, masks));
  check.items.push_back(nic_item(machine, check.device, env));
  check.items.push_back(shm_item(machine));
  check.items.push_back(memlock_item(machine));
  return check;
}

nlohmann::ordered_json to_json(const BindingCheck& check) {
  nlohmann::ordered_json out;
  out["schema"] = "acco.exec-check/1";
  if (check.device) {
    out["device"] = {{"index", check.device->index},
                     {"pci", check.device->address},
                     {"numa_node", check.device->numa_node < 0
                                       ? nlohmann::ordered_json()
                                       : nlohmann::ordered_json(check.device->numa_node)}};
  } else {
    out["device"] = nullptr;
  }
  out["problems"] = check.problems();
  out["items"] = nlohmann::ordered_json::array();
  for (const CheckItem& item : check.items) {
    out["items"].push_back({{"name", item.name},
                            {"value", item.value},
                            {"ok", item.problem.empty()},
                            {"problem", item.problem},
                            {"fix", item.fix}});
  }
  return out;
}

report::Document check_report(const BindingCheck& check) {
  report::Document doc;
  doc.add(report::Heading{"acco exec --check: this process's binding"});
  report::Table table;
  table.columns = {
      {"", report::Align::kLeft}, {"what", report::Align::kLeft}, {"found", report::Align::kLeft}};
  for (const CheckItem& item : check.items) {
    table.rows.push_back({item.problem.empty() ? "ok" : "FIX", item.name, item.value});
  }
  doc.add(std::move(table));
  report::Preformatted fixes;
  for (const CheckItem& item : check.items) {
    if (!item.problem.empty()) {
      fixes.text += fmt::format("{}  {}: {}\n    fix: {}", fixes.text.empty() ? "" : "\n",
                                item.name, item.problem, item.fix);
    }
  }
  if (!fixes.text.empty()) {
    doc.add(report::Heading{fmt::format("{} to fix", check.problems())});
    doc.add(std::move(fixes));
  } else {
    doc.add(report::Note{"nothing to fix"});
  }
  return doc;
}

}  // namespace acco::exec
