#include "acco/topo/json.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "acco/core/units.hpp"
#include "acco/topo/link_model.hpp"
#include "acco/topo/nvml.hpp"

namespace acco::topo {
namespace {

nlohmann::ordered_json rate_or_null(double bytes_per_second) {
  return bytes_per_second > 0 ? nlohmann::ordered_json(bytes_per_second)
                              : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json link_json(const PcieLink& link) {
  if (!link.known()) {
    return nullptr;
  }
  const int gen = pcie_generation(link.speed_gts);
  return {{"speed_gts", link.speed_gts},
          {"width", link.width},
          {"generation", gen > 0 ? nlohmann::ordered_json(gen) : nlohmann::ordered_json(nullptr)},
          {"bytes_per_second", rate_or_null(link_bytes_per_second(link))}};
}

template <typename T>
nlohmann::ordered_json or_null(const std::optional<T>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json namespace_json(const NvmeNamespace& ns) {
  return {{"name", ns.name},
          {"controller", ns.controller.empty() ? nlohmann::ordered_json(nullptr)
                                               : nlohmann::ordered_json(ns.controller)},
          {"scheduler", or_null(ns.scheduler)},
          {"scheduler_text", ns.scheduler_text},
          {"nr_requests", or_null(ns.nr_requests)},
          {"max_sectors_kb", or_null(ns.max_sectors_kb)},
          {"max_hw_sectors_kb", or_null(ns.max_hw_sectors_kb)},
          {"read_ahead_kb", or_null(ns.read_ahead_kb)},
          {"logical_block_size", or_null(ns.logical_block_size)},
          {"io_poll", or_null(ns.io_poll)},
          {"hw_queues", or_null(ns.hw_queues)}};
}

nlohmann::ordered_json string_or_null(const std::string& text) {
  return text.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(text);
}

nlohmann::ordered_json direct_io_json(const std::optional<DirectIo>& d) {
  if (!d) {
    return nullptr;
  }
  const auto bytes = [](std::uint32_t v) {
    return v > 0 ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
  };
  return {{"o_direct", d->o_direct},
          {"o_direct_error", string_or_null(d->o_direct_error)},
          {"io_uring", d->io_uring},
          {"io_uring_error", string_or_null(d->io_uring_error)},
          {"memory_alignment", bytes(d->memory_alignment)},
          {"offset_alignment", bytes(d->offset_alignment)},
          {"alignment_source", string_or_null(d->alignment_source)}};
}

nlohmann::ordered_json data_dir_json(const std::optional<DataDir>& d) {
  if (!d) {
    return nullptr;
  }
  nlohmann::ordered_json mount = nullptr;
  if (d->unavailable.empty()) {
    mount = {{"mount_point", d->mount.mount_point},
             {"root", d->mount.root},
             {"device", d->mount.device},
             {"fs_type", d->mount.fs_type},
             {"source", d->mount.source},
             {"options", d->mount.options},
             {"super_options", d->mount.super_options}};
  }
  return {
      {"path", d->path},
      {"unavailable", d->unavailable.empty() ? nlohmann::ordered_json(nullptr)
                                             : nlohmann::ordered_json(d->unavailable)},
      {"mount", mount},
      {"device_evidence", d->device_evidence.empty() ? nlohmann::ordered_json(nullptr)
                                                     : nlohmann::ordered_json(d->device_evidence)},
      {"nvme_namespaces", d->nvme_namespaces},
      {"direct_io", direct_io_json(d->direct_io)},
      {"direct_io_untried", string_or_null(d->direct_io_untried)}};
}

nlohmann::ordered_json software_components_json(const SoftwareStack& s) {
  auto out = nlohmann::ordered_json::array();
  for (const auto& c : s.components) {
    out.push_back({{"name", c.name},
                   {"version", c.version},
                   {"cuda", string_or_null(c.cuda)},
                   {"path", c.path}});
  }
  return out;
}

nlohmann::ordered_json limits_json(const HostLimits& l) {
  const auto text_or_null = [](const std::string& s) {
    return s.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s);
  };
  return {{"rmem_max_bytes", or_null(l.rmem_max)},
          {"wmem_max_bytes", or_null(l.wmem_max)},
          {"tcp_rmem_max_bytes", or_null(l.tcp_rmem_max)},
          {"tcp_wmem_max_bytes", or_null(l.tcp_wmem_max)},
          {"tcp_rmem", text_or_null(l.tcp_rmem_text)},
          {"tcp_wmem", text_or_null(l.tcp_wmem_text)},
          {"shm_bytes", or_null(l.shm_bytes)},
          {"shm_evidence", text_or_null(l.shm_evidence)},
          {"memlock_unlimited", or_null(l.memlock_unlimited)},
          {"memlock_bytes", or_null(l.memlock_bytes)},
          {"memlock", text_or_null(l.memlock_text)}};
}

std::string hex(unsigned value, int digits) {
  return fmt::format("0x{:0{}x}", value, digits);
}

}  // namespace

std::vector<const PciDevice*> endpoints(const Machine& machine) {
  std::vector<const PciDevice*> out;
  for (const auto& d : machine.pci_devices) {
    if (d.kind == DeviceKind::kGpu || d.kind == DeviceKind::kAccelerator ||
        d.kind == DeviceKind::kNic || d.kind == DeviceKind::kNvme) {
      out.push_back(&d);
    }
  }
  return out;
}

nlohmann::ordered_json to_json(const PciDevice& d, const Machine& machine) {
  nlohmann::ordered_json j = {
      {"pci", d.address},
      {"kind", to_string(d.kind)},
      {"class", hex(d.class_code, 6)},
      {"vendor_id", hex(d.vendor_id, 4)},
      {"device_id", hex(d.device_id, 4)},
      {"driver",
       d.driver.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(d.driver)},
      {"parent",
       d.parent.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(d.parent)},
      {"root_bus", d.root_bus},
      {"numa_node", d.numa_node},
      {"local_cpus", units::format_cpulist(d.local_cpus)},
      {"link", {{"current", link_json(d.current)}, {"max", link_json(d.max)}}},
      {"capable_bytes_per_second", rate_or_null(d.capable_bytes_per_second)},
      {"current_bytes_per_second", rate_or_null(d.current_bytes_per_second)},
      {"path_bytes_per_second", rate_or_null(d.path_bytes_per_second)},
      {"path_limited_by", d.path_limited_by.empty() ? nlohmann::ordered_json(nullptr)
                                                    : nlohmann::ordered_json(d.path_limited_by)},
      {"iommu_group",
       d.iommu_group ? nlohmann::ordered_json(*d.iommu_group) : nlohmann::ordered_json(nullptr)},
      {"slot", d.slot.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(d.slot)},
      {"numa_source", d.numa_source.empty() ? nlohmann::ordered_json(nullptr)
                                            : nlohmann::ordered_json(d.numa_source)},
      {"subsystem_vendor_id", hex(d.subsystem_vendor_id, 4)},
      {"subsystem_device_id", hex(d.subsystem_device_id, 4)},
  };
  // Names only where something named the device: the ids above are what was read.
  for (const auto& [key, name] : {std::pair<const char*, const std::string&>{"model", d.model},
                                  {"vendor_name", d.vendor_name},
                                  {"subsystem_name", d.subsystem_name}}) {
    if (!name.empty()) {
      j[key] = name;
    }
  }
  if (const NvmlGpu* g = machine.nvml_gpu(d.address)) {
    nlohmann::ordered_json gpu =
        nlohmann::ordered_json(to_json(NvmlReport{true, "", "", "", {*g}}))["gpus"][0];
    j["nvml"] = gpu;
  }
  std::vector<std::string> nets;
  for (const auto& n : machine.net_interfaces) {
    if (n.pci == d.address) {
      nets.push_back(n.name);
    }
  }
  if (!nets.empty()) {
    j["net_interfaces"] = nets;
  }
  if (!d.irqs.empty()) {
    nlohmann::ordered_json irqs = nlohmann::ordered_json::array();
    for (const auto& irq : d.irqs) {
      irqs.push_back(
          {{"irq", irq.irq},
           {"affinity", irq.affinity_text.empty() ? nlohmann::ordered_json(nullptr)
                                                  : nlohmann::ordered_json(irq.affinity_text)}});
    }
    j["irqs"] = irqs;
  }
  for (const auto& card : physical_devices(machine)) {
    if (card.functions.size() > 1 &&
        std::find(card.functions.begin(), card.functions.end(), &d) != card.functions.end()) {
      std::vector<std::string> others;
      for (const auto* f : card.functions) {
        if (f != &d) {
          others.push_back(f->address);
        }
      }
      j["shares_link_with"] = others;
    }
  }
  return j;
}

nlohmann::ordered_json to_json(const Finding& f) {
  nlohmann::ordered_json evidence = nlohmann::ordered_json::array();
  for (const auto& e : f.evidence) {
    evidence.push_back({{"source", e.source}, {"value", e.value}});
  }
  return {{"rule", f.rule},       {"severity", to_string(f.severity)},
          {"devices", f.devices}, {"evidence", evidence},
          {"message", f.message}, {"recommendation", f.recommendation}};
}

nlohmann::ordered_json paths_json(const Machine& machine) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  const auto eps = endpoints(machine);
  for (std::size_t i = 0; i < eps.size(); ++i) {
    for (std::size_t k = i + 1; k < eps.size(); ++k) {
      const auto p = classify_path(machine, eps[i]->address, eps[k]->address);
      out.push_back(
          {{"a", eps[i]->address},
           {"b", eps[k]->address},
           {"class", to_string(p)},
           {"bottleneck_bytes_per_second", rate_or_null(p.bottleneck_bytes_per_second)},
           {"bottleneck_at", p.bottleneck_at.empty() ? nlohmann::ordered_json(nullptr)
                                                     : nlohmann::ordered_json(p.bottleneck_at)}});
    }
  }
  return out;
}

nlohmann::ordered_json probe_json(const Machine& m, const std::vector<Finding>& findings) {
  nlohmann::ordered_json numa = nlohmann::ordered_json::array();
  for (const auto& n : m.numa_nodes) {
    const auto scaled = [](const std::optional<std::uint64_t>& v, double factor) {
      return v ? nlohmann::ordered_json(static_cast<double>(*v) * factor)
               : nlohmann::ordered_json(nullptr);
    };
    numa.push_back({{"id", n.id},
                    {"cpus", units::format_cpulist(n.cpus)},
                    {"distances", n.distances},
                    {"package", n.package},
                    {"memory_bytes", n.memory_bytes},
                    {"memory_only", n.memory_only()},
                    {"initiators", n.initiators},
                    {"near_cpus", units::format_cpulist(n.near_cpus)},
                    {"memory_tier", or_null(n.memory_tier)},
                    {"memory_side_cache_bytes", n.memory_side_cache_bytes},
                    // HMAT gives MB/s and nanoseconds; the report's units are bytes/s and seconds.
                    {"hmat",
                     {{"read_bandwidth_bytes_per_second", scaled(n.read_bandwidth_mbps, 1e6)},
                      {"write_bandwidth_bytes_per_second", scaled(n.write_bandwidth_mbps, 1e6)},
                      {"read_latency_seconds", scaled(n.read_latency_ns, 1e-9)},
                      {"write_latency_seconds", scaled(n.write_latency_ns, 1e-9)}}}});
  }
  nlohmann::ordered_json nets = nlohmann::ordered_json::array();
  for (const auto& n : m.net_interfaces) {
    nets.push_back(
        {{"name", n.name},
         {"pci", n.pci.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(n.pci)},
         {"speed_bits_per_second", n.speed_mbps ? nlohmann::ordered_json(*n.speed_mbps * 1000000)
                                                : nlohmann::ordered_json(nullptr)},
         {"operstate", n.operstate},
         {"mtu", or_null(n.mtu)}});
  }
  nlohmann::ordered_json ib = nlohmann::ordered_json::array();
  for (const auto& p : m.ib_ports) {
    ib.push_back(
        {{"device", p.device},
         {"port", p.port},
         {"pci", p.pci.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(p.pci)},
         {"state", p.state_text},
         {"phys_state", p.phys_state_text},
         {"rate_bits_per_second", p.rate_gbps * 1e9},
         {"rate", p.rate_text},
         {"link_layer", p.link_layer},
         {"data_rate_bits_per_second", p.data_rate_gbps * 1e9},
         {"netdev",
          p.netdev.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(p.netdev)},
         {"gid_types", p.gid_types},
         {"roce_v2_gid_index", or_null(p.roce_v2_gid_index)}});
  }
  nlohmann::ordered_json nvme = nlohmann::ordered_json::array();
  for (const auto& c : m.nvme_controllers) {
    nvme.push_back(
        {{"name", c.name},
         {"pci", c.pci.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(c.pci)},
         {"model", c.model},
         {"transport", c.transport},
         {"namespaces", c.namespaces}});
  }
  nlohmann::ordered_json namespaces = nlohmann::ordered_json::array();
  for (const auto& ns : m.nvme_namespaces) {
    namespaces.push_back(namespace_json(ns));
  }
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (const auto& g : m.iommu.groups) {
    groups.push_back({{"id", g.id}, {"type", g.type}, {"devices", g.devices}});
  }
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const auto& d : m.pci_devices) {
    devices.push_back(to_json(d, m));
  }
  nlohmann::ordered_json found = nlohmann::ordered_json::array();
  for (const auto& f : findings) {
    found.push_back(to_json(f));
  }
  nlohmann::ordered_json issues = nlohmann::ordered_json::array();
  for (const auto& i : m.input_issues) {
    issues.push_back({{"path", i.path}, {"problem", i.problem}});
  }
  nlohmann::ordered_json caches = nlohmann::ordered_json::array();
  for (const auto& c : m.cpu.caches) {
    caches.push_back({{"name", c.name}, {"bytes", c.bytes}, {"count", c.count}});
  }
  const auto text_or_null = [](const std::string& s) {
    return s.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s);
  };
  const auto count_or_null = [&](int n) {
    return m.cpu.source.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(n);
  };
  nlohmann::ordered_json cpu = {{"source", text_or_null(m.cpu.source)},
                                {"unavailable", text_or_null(m.cpu.unavailable)},
                                {"packages", count_or_null(m.cpu.packages)},
                                {"cores", count_or_null(m.cpu.cores)},
                                {"pus", count_or_null(m.cpu.pus)},
                                {"numa_nodes", count_or_null(m.cpu.numa_nodes)},
                                {"caches", caches},
                                {"disagreements", m.cpu.disagreements}};
  nlohmann::ordered_json nvml = nlohmann::ordered_json(to_json(m.nvml));
  nvml.erase("gpus");  // per-GPU answers are under each device
  return {
      {"schema", kProbeSchema},
      {"machine",
       {{"origin", m.origin},
        {"hostname", m.hostname},
        {"kernel", m.kernel},
        {"hypervisor", m.hypervisor},
        {"sysfs_read", m.sysfs_read},
        {"cpu", cpu},
        {"numa_nodes", numa},
        {"net_interfaces", nets},
        {"ib_ports", ib},
        {"nvme_controllers", nvme},
        {"nvme_namespaces", namespaces},
        {"nvme_poll_queues", or_null(m.nvme_poll_queues)},
        {"data_dir", data_dir_json(m.data_dir)},
        {"iommu", {{"enabled", m.iommu.enabled}, {"cmdline", m.iommu.cmdline}, {"groups", groups}}},
        {"gpudirect_rdma",
         {{"loaded", m.gpudirect.rdma_loaded}, {"evidence", m.gpudirect.evidence}}},
        {"nvml", nvml},
        {"pci_ids",
         {{"path", text_or_null(m.pci_ids.path)},
          {"version", text_or_null(m.pci_ids.version)},
          {"unavailable", text_or_null(m.pci_ids.unavailable)},
          {"unlisted", m.pci_ids.unlisted}}},
        {"input_issues", issues},
        {"limits", limits_json(m.limits)},
        {"container",
         {{"runtime", text_or_null(m.container.runtime)},
          {"evidence", text_or_null(m.container.evidence)},
          {"nvidia_nodes", m.container.nvidia_nodes},
          {"rdma_nodes", m.container.rdma_nodes}}},
        {"software",
         {{"nvidia_kernel_module", text_or_null(m.software.kernel_module)},
          {"nvidia_kernel_module_line", text_or_null(m.software.kernel_module_line)},
          {"cdi_specs", m.software.cdi_specs},
          {"components", software_components_json(m.software)}}},
        {"online_cpus", units::format_cpulist(m.online_cpus)},
        {"packages", m.packages},
        {"possible_nodes", units::format_cpulist(m.possible_nodes)},
        {"online_nodes", units::format_cpulist(m.online_nodes)}}},
      {"devices", devices},
      {"paths", paths_json(m)},
      {"findings", found}};
}

}  // namespace acco::topo
