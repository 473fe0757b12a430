#include "acco/topo/probe_report.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "acco/core/units.hpp"
#include "acco/report/document.hpp"
#include "acco/report/table.hpp"
#include "acco/topo/json.hpp"
#include "acco/topo/link_model.hpp"

namespace acco::topo {
namespace {

std::string rate(double bytes_per_second) {
  return bytes_per_second > 0 ? units::format_rate(bytes_per_second) : "-";
}

std::string label_prefix(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kGpu:
      return "GPU";
    case DeviceKind::kAccelerator:
      return "ACC";
    case DeviceKind::kNic:
      return "NIC";
    case DeviceKind::kNvme:
      return "NVME";
    default:
      return "DEV";
  }
}

// Labels in nvidia-smi style: GPU0.., NIC0.., numbered per kind in address order.
std::vector<std::pair<std::string, const PciDevice*>> labelled(const Machine& m) {
  std::map<std::string, int> next;
  std::vector<std::pair<std::string, const PciDevice*>> out;
  auto eps = endpoints(m);
  // nvidia-smi lists GPUs first, then NICs; keep address order within a kind.
  std::stable_sort(eps.begin(), eps.end(), [](const PciDevice* a, const PciDevice* b) {
    return static_cast<int>(a->kind) < static_cast<int>(b->kind);
  });
  for (const auto* d : eps) {
    const auto prefix = label_prefix(d->kind);
    out.emplace_back(fmt::format("{}{}", prefix, next[prefix]++), d);
  }
  return out;
}

// The shown devices the database has no entry for (and NVML did not name), once per id: a
// database older than the hardware, which names them only "Vendor Device dddd" as lspci does.
std::string unlisted_note(const Machine& m) {
  if (m.pci_ids.unlisted.empty()) {
    return {};
  }
  std::vector<std::pair<std::string, int>> shown;  // id, devices
  for (const auto& [label, d] : labelled(m)) {
    if (const auto* g = m.nvml_gpu(d->address); g != nullptr && !g->name.empty()) {
      continue;
    }
    const auto id = fmt::format("{:04x}:{:04x}", d->vendor_id, d->device_id);
    if (std::find(m.pci_ids.unlisted.begin(), m.pci_ids.unlisted.end(), id) ==
        m.pci_ids.unlisted.end()) {
      continue;
    }
    const auto it =
        std::find_if(shown.begin(), shown.end(), [&id](const auto& s) { return s.first == id; });
    if (it == shown.end()) {
      shown.emplace_back(id, 1);
    } else {
      ++it->second;
    }
  }
  if (shown.empty()) {
    return {};
  }
  constexpr std::size_t kShownIds = 4;
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < shown.size() && i < kShownIds; ++i) {
    const auto& [id, devices] = shown[i];
    ids.push_back(devices > 1 ? fmt::format("{} ({} devices)", id, devices) : id);
  }
  if (shown.size() > kShownIds) {
    ids.push_back(fmt::format("{} more", shown.size() - kShownIds));
  }
  return fmt::format(
      "PCI names: {}{} does not list {}; a newer database may (update-pciids, or name one with "
      "--pci-ids)\n",
      m.pci_ids.path, m.pci_ids.version.empty() ? "" : fmt::format(" ({})", m.pci_ids.version),
      fmt::join(ids, ", "));
}

// The model (NVML's name, else the PCI ID database's), else the ids; then the device's
// interfaces, ports and controllers.
std::string name_of(const Machine& m, const PciDevice& d) {
  if (const auto* g = m.nvml_gpu(d.address); g != nullptr && !g->name.empty()) {
    return g->name;
  }
  std::string name =
      d.model.empty() ? fmt::format("{:04x}:{:04x}", d.vendor_id, d.device_id) : d.model;
  for (const auto& n : m.net_interfaces) {
    if (n.pci == d.address) {
      name += " " + n.name;
    }
  }
  for (const auto& p : m.ib_ports) {
    if (p.pci == d.address && name.find(p.device) == std::string::npos) {
      name += " " + p.device;
    }
  }
  for (const auto& c : m.nvme_controllers) {
    if (c.pci == d.address) {
      name += " " + c.name;
    }
  }
  return name;
}

// "CPU: 2 package(s), 112 core(s), 224 PU(s); L1d 48 KiB x112, ... (hwloc 2.9.0 (...))".
std::string cpu_line(const CpuTopology& cpu) {
  if (cpu.source.empty()) {
    return fmt::format("CPU: topology unknown ({})\n",
                       cpu.unavailable.empty() ? "hwloc was not used" : cpu.unavailable);
  }
  std::vector<std::string> caches;
  for (const auto& c : cpu.caches) {
    caches.push_back(fmt::format("{} {} x{}", c.name, units::format_bytes(c.bytes), c.count));
  }
  return fmt::format("CPU: {} package(s), {} core(s), {} PU(s){}{}; read by {}\n", cpu.packages,
                     cpu.cores, cpu.pus, caches.empty() ? "" : "; ", fmt::join(caches, ", "),
                     cpu.source);
}

// "Limits: /dev/shm 64.0 MiB, locked memory 8.0 MiB, rmem_max 208.0 KiB, ...": what NCCL, UCX
// and MPI run into, as far as it was read; empty when nothing was.
std::string limits_line(const HostLimits& l) {
  std::vector<std::string> parts;
  if (l.shm_bytes) {
    parts.push_back("/dev/shm " + units::format_bytes(*l.shm_bytes));
  }
  if (l.memlock_unlimited) {
    parts.push_back("locked memory " + (*l.memlock_unlimited ? std::string("unlimited")
                                        : l.memlock_bytes    ? units::format_bytes(*l.memlock_bytes)
                                                             : l.memlock_text));
  }
  const auto bytes = [&](const char* name, const std::optional<std::int64_t>& v) {
    if (v && *v >= 0) {
      parts.push_back(
          fmt::format("{} {}", name, units::format_bytes(static_cast<std::uint64_t>(*v))));
    }
  };
  bytes("rmem_max", l.rmem_max);
  bytes("wmem_max", l.wmem_max);
  bytes("tcp_rmem max", l.tcp_rmem_max);
  bytes("tcp_wmem max", l.tcp_wmem_max);
  return parts.empty() ? std::string() : fmt::format("Limits: {}\n", fmt::join(parts, ", "));
}

// The nodes with CPUs nearest to `n` by the firmware's distances, and that distance; empty when
// the distances are unknown.
std::pair<std::vector<int>, int> nearest_cpu_nodes(const Machine& m, const NumaNode& n) {
  std::vector<int> nearest;
  int best = 0;
  if (n.distances.size() != m.numa_nodes.size()) {
    return {nearest, best};
  }
  for (std::size_t i = 0; i < m.numa_nodes.size(); ++i) {
    const auto& other = m.numa_nodes[i];
    if (other.cpus.empty() || other.memory_only() || n.distances[i] <= 0) {
      continue;
    }
    if (nearest.empty() || n.distances[i] < best) {
      nearest = {other.id};
      best = n.distances[i];
    } else if (n.distances[i] == best) {
      nearest.push_back(other.id);
    }
  }
  return {nearest, best};
}

// A node whose memory has no CPUs of its own (CXL, HBM, NVDIMM, GPU memory): what the kernel says
// of it, and where it is near, from HMAT's initiators, else the distances, else hwloc.
std::string memory_only_node_line(const Machine& m, const NumaNode& n) {
  std::vector<std::string> parts = {
      "memory only (no CPUs)",
      n.memory_bytes > 0 ? units::format_bytes(n.memory_bytes) : std::string("memory unknown")};
  const auto [nearest, distance] = nearest_cpu_nodes(m, n);
  if (!n.initiators.empty()) {
    parts.push_back(
        fmt::format("initiators node(s) {} (HMAT)", units::format_cpulist(n.initiators)));
  }
  if (!nearest.empty()) {
    parts.push_back(
        fmt::format("nearest CPUs node(s) {} at distance {}", fmt::join(nearest, ","), distance));
  } else if (n.initiators.empty() && !n.near_cpus.empty()) {
    parts.push_back(fmt::format("near CPUs {} (hwloc)", units::format_cpulist(n.near_cpus)));
  }
  if (n.read_bandwidth_mbps || n.read_latency_ns) {
    std::vector<std::string> figures;
    if (n.read_bandwidth_mbps) {
      figures.push_back(units::format_rate(static_cast<double>(*n.read_bandwidth_mbps) * 1e6));
    }
    if (n.read_latency_ns) {
      figures.push_back(fmt::format("{} ns", *n.read_latency_ns));
    }
    parts.push_back(fmt::format("read {}", fmt::join(figures, ", ")));
  }
  if (n.memory_tier) {
    parts.push_back(fmt::format("memory tier {}", *n.memory_tier));
  }
  if (n.memory_side_cache_bytes > 0) {
    parts.push_back(
        fmt::format("memory-side cache {}", units::format_bytes(n.memory_side_cache_bytes)));
  }
  return fmt::format("  node {}: {}\n", n.id, fmt::join(parts, ", "));
}

// The PCI functions and bridges; what the machine's source did not hold, when it was a file.
std::string pci_line(const Machine& m) {
  int bridges = 0;
  for (const auto& d : m.pci_devices) {
    bridges += d.kind == DeviceKind::kBridge ? 1 : 0;
  }
  if (!m.sysfs_read && m.origin.starts_with("NCCL topology")) {
    return fmt::format(
        "PCI: {} function(s), {} bridge(s)\n"
        "Not in an NCCL topology file, so unknown: current links (its figure is taken for both), "
        "drivers, IOMMU groups, ACS, kernel modules (GPUDirect RDMA), InfiniBand port state; the "
        "checks that need them are skipped\n",
        m.pci_devices.size(), bridges);
  }
  if (!m.sysfs_read) {
    return fmt::format(
        "PCI: {} function(s), {} bridge(s)\n"
        "Not in an hwloc XML export, so unknown: link generation and width, maximum links, "
        "drivers, IOMMU groups, ACS, kernel modules (GPUDirect RDMA), InfiniBand ports; the "
        "checks that need them are skipped\n",
        m.pci_devices.size(), bridges);
  }
  return fmt::format(
      "PCI: {} function(s), {} bridge(s); IOMMU {}; GPUDirect RDMA {}\n", m.pci_devices.size(),
      bridges,
      m.iommu.enabled ? fmt::format("on ({} groups)", m.iommu.groups.size()) : std::string("off"),
      m.gpudirect.rdma_loaded ? "loaded" : "not loaded");
}

// The NUMA nodes on their sockets, a line each.
std::string numa_lines(const Machine& m) {
  std::string out;
  // Sockets are the packages of the online CPUs; a machine built without them (by hand, or from
  // a source that does not read CPUs) falls back to its nodes' packages. Memory-only nodes and
  // package id -1 (s390, POWER7) name no socket.
  std::set<int> sockets(m.packages.begin(), m.packages.end());
  bool any_cpus = false;
  for (const auto& n : m.numa_nodes) {
    any_cpus = any_cpus || !n.cpus.empty();
    if (m.packages.empty() && n.package >= 0) {
      sockets.insert(n.package);
    }
  }
  // The kernel's packages of the online CPUs; hwloc's count where no CPU reports one (hwloc then
  // groups CPUs by package_cpus). Where the two differ, hwloc-disagrees says how.
  const std::size_t socket_count = !sockets.empty() || m.cpu.source.empty()
                                       ? sockets.size()
                                       : static_cast<std::size_t>(m.cpu.packages);
  out += socket_count == 0 && any_cpus
             ? fmt::format(
                   "NUMA: {} node(s), socket count unknown (no CPU reports a "
                   "physical_package_id)\n",
                   m.numa_nodes.size())
             : fmt::format("NUMA: {} node(s) on {} socket(s)\n", m.numa_nodes.size(), socket_count);
  for (const auto& n : m.numa_nodes) {
    out += n.memory_only()
               ? memory_only_node_line(m, n)
               : fmt::format("  node {}: socket {}, CPUs {}, {}\n", n.id,
                             n.package < 0 ? std::string("?") : std::to_string(n.package),
                             n.cpus.empty() ? std::string("none") : units::format_cpulist(n.cpus),
                             n.memory_bytes > 0 ? units::format_bytes(n.memory_bytes)
                             : n.memory_known   ? "no memory"
                                                : "memory unknown");
  }
  return out;
}

std::string header(const Machine& m) {
  std::string out = fmt::format(
      "acco probe: {} (kernel {}), read from {}{}{}\n",
      m.hostname.empty() ? "unknown host" : m.hostname, m.kernel.empty() ? "unknown" : m.kernel,
      m.origin, m.hypervisor ? ", virtual machine" : "",
      m.container.runtime.empty()
          ? std::string()
          : fmt::format(", in a {} container ({})", m.container.runtime, m.container.evidence));
  out += cpu_line(m.cpu);
  out += numa_lines(m);
  out += limits_line(m.limits);
  out += pci_line(m);
  if (!m.pci_ids.unavailable.empty()) {
    out += fmt::format(
        "PCI names: none, devices are shown by vendor:device id ({}; install the pci.ids or "
        "hwdata package, or name a database with --pci-ids or ACCO_PCI_IDS)\n",
        m.pci_ids.unavailable);
  }
  out += unlisted_note(m);
  if (m.nvml.available) {
    out += fmt::format("NVML: driver {}, {} GPU(s)\n", m.nvml.driver_version, m.nvml.gpus.size());
  } else {
    out += fmt::format("NVML: unavailable ({})\n", m.nvml.reason);
  }
  if (!m.software.kernel_module.empty()) {
    out += fmt::format("NVIDIA kernel module: {} (/proc/driver/nvidia/version)\n",
                       m.software.kernel_module);
  }
  if (!m.software.cdi_specs.empty()) {
    out += fmt::format("CDI specs: {}\n", fmt::join(m.software.cdi_specs, ", "));
  }
  std::vector<std::string> mpi;
  for (const auto& c : m.software.components) {
    if (c.name == "openmpi" || c.name == "ucx") {
      mpi.push_back(fmt::format("{} {}", c.name == "openmpi" ? "Open MPI" : "UCX", c.version));
    }
  }
  if (mpi.size() < m.software.components.size()) {
    std::vector<std::string> parts;
    for (const auto& c : m.software.components) {
      if (c.name == "openmpi" || c.name == "ucx") {
        continue;
      }
      parts.push_back(fmt::format(
          "{} {}{}", c.name, c.version,
          c.name == "cuda-compat" || c.name == "cuda-runtime" || c.name == "cuda-toolkit"
              ? ""
              : (c.cuda.empty() ? (c.name == "torch" ? " (CPU)" : "")
                                : fmt::format(" (CUDA {})", c.cuda))));
    }
    out += fmt::format("CUDA stack: {}\n", fmt::join(parts, ", "));
  }
  if (!mpi.empty()) {
    out += fmt::format("MPI stack: {}\n", fmt::join(mpi, ", "));
  }
  return out;
}

void add_devices(report::Document& doc, const Machine& m,
                 const std::vector<std::pair<std::string, const PciDevice*>>& eps) {
  if (eps.empty()) {
    doc.add(report::Heading{"Devices: no GPU, accelerator, NIC or NVMe found on PCI"});
    return;
  }
  std::vector<std::vector<std::string>> rows = {{"ID", "PCI", "KIND", "NUMA", "NAME", "LINK NOW",
                                                 "LINK MAX", "CAPABLE", "PATH", "LIMITED BY"}};
  for (const auto& [label, d] : eps) {
    rows.push_back(
        {label, d->address, to_string(d->kind),
         d->numa_node < 0 ? "-1" : std::to_string(d->numa_node), name_of(m, *d),
         describe(d->current), describe(d->max), rate(d->capable_bytes_per_second),
         rate(d->path_bytes_per_second),
         internal_link(m, *d) ? (m.hypervisor ? "emulated port (VM)" : "chipset-internal link")
         : d->path_limited_by.empty() || d->path_limited_by == d->address ? "-"
                                                                          : d->path_limited_by});
  }
  doc.add(report::Heading{
      "Devices (bandwidth per direction: capable = min(device, port) maximum; path = "
      "narrowest current link to the CPU)"});
  doc.add(report::plain_table(rows));
}

// The MIG column: "on (2 instances)", "off", "-" when unknown, and a change waiting for a GPU
// reset ("off, on after reset").
std::string mig_cell(const NvmlGpu& g) {
  if (!g.mig_enabled) {
    return "-";
  }
  std::string cell =
      *g.mig_enabled ? fmt::format("on ({} instances)", g.mig_instances) : std::string("off");
  if (g.mig_pending && *g.mig_pending != *g.mig_enabled) {
    cell += fmt::format(", {} after reset", *g.mig_pending ? "on" : "off");
  }
  return cell;
}

void add_nvml(report::Document& doc, const Machine& m) {
  if (!m.nvml.available || m.nvml.gpus.empty()) {
    return;
  }
  const auto opt = [](const auto& v, auto format) -> std::string {
    return v ? format(*v) : std::string("-");
  };
  const auto on_off = [](bool b) { return std::string(b ? "on" : "off"); };
  std::vector<std::vector<std::string>> rows = {
      {"GPU", "PCI", "NAME", "MEMORY", "PSTATE", "PERSIST", "MIG", "NVLINK UP", "PCIE (NVML)"}};
  for (const auto& g : m.nvml.gpus) {
    int up = 0;
    for (const auto& l : g.nvlinks) {
      up += l.active ? 1 : 0;
    }
    rows.push_back({std::to_string(g.index), g.pci, g.name.empty() ? "-" : g.name,
                    g.memory_total_bytes > 0 ? units::format_bytes(g.memory_total_bytes) : "-",
                    opt(g.pstate, [](int p) { return fmt::format("P{}", p); }),
                    opt(g.persistence_mode, on_off), mig_cell(g),
                    g.nvlinks.empty() ? "-" : fmt::format("{}/{}", up, g.nvlinks.size()),
                    g.pcie_current_gen && g.pcie_current_width && g.pcie_max_gen && g.pcie_max_width
                        ? fmt::format("Gen{} x{} of Gen{} x{}", *g.pcie_current_gen,
                                      *g.pcie_current_width, *g.pcie_max_gen, *g.pcie_max_width)
                        : std::string("-")});
  }
  doc.add(report::Heading{"GPUs (NVML)"});
  doc.add(report::plain_table(rows));
  std::vector<std::vector<std::string>> migs = {
      {"GPU", "SLOT", "PROFILE", "MEMORY", "GI", "CI", "UUID (CUDA_VISIBLE_DEVICES)"}};
  for (const auto& g : m.nvml.gpus) {
    for (const MigDevice& d : g.mig_devices) {
      migs.push_back({std::to_string(g.index), std::to_string(d.slot),
                      d.profile.empty() ? "-" : d.profile,
                      d.memory_total_bytes > 0 ? units::format_bytes(d.memory_total_bytes) : "-",
                      d.gpu_instance ? std::to_string(*d.gpu_instance) : "-",
                      d.compute_instance ? std::to_string(*d.compute_instance) : "-",
                      d.uuid.empty() ? "-" : d.uuid});
    }
  }
  if (migs.size() > 1) {
    doc.add(report::Heading{"MIG instances (NVML)"});
    doc.add(report::plain_table(migs));
  }
}

// "  O_DIRECT works (512 B offsets, 512 B buffers, from statx); io_uring works", or what was
// refused and the error, or why nothing was tried.
std::string direct_io_line(const DataDir& d) {
  if (!d.direct_io) {
    return fmt::format("  O_DIRECT and io_uring: not tried: {}\n", d.direct_io_untried);
  }
  const DirectIo& io = *d.direct_io;
  std::string direct = "refused (" + io.o_direct_error + ")";
  if (io.o_direct) {
    direct = io.offset_alignment > 0
                 ? fmt::format("works ({} B offsets, {} B buffers, from {})", io.offset_alignment,
                               io.memory_alignment, io.alignment_source)
                 : "works";
  }
  return fmt::format("  O_DIRECT {}; io_uring {}\n", direct,
                     io.io_uring ? "works" : "refused (" + io.io_uring_error + ")");
}

void add_storage(report::Document& doc, const Machine& m) {
  if (!m.nvme_namespaces.empty()) {
    const auto num = [](const auto& v) { return v ? std::to_string(*v) : std::string("-"); };
    std::vector<std::vector<std::string>> rows = {{"NAMESPACE", "CONTROLLER", "SCHEDULER", "NR_REQ",
                                                   "MAX KB", "HW MAX KB", "RA KB", "BLOCK",
                                                   "HW QUEUES", "POLL"}};
    for (const auto& ns : m.nvme_namespaces) {
      rows.push_back({ns.name, ns.controller.empty() ? "-" : ns.controller,
                      ns.scheduler.value_or("-"), num(ns.nr_requests), num(ns.max_sectors_kb),
                      num(ns.max_hw_sectors_kb), num(ns.read_ahead_kb), num(ns.logical_block_size),
                      num(ns.hw_queues), ns.io_poll ? (*ns.io_poll ? "on" : "off") : "-"});
    }
    doc.add(report::Heading{
        fmt::format("NVMe namespaces (block queue; nvme poll_queues {})",
                    m.nvme_poll_queues ? std::to_string(*m.nvme_poll_queues) : "unknown")});
    doc.add(report::plain_table(rows));
  }
  if (m.data_dir) {
    const auto& d = *m.data_dir;
    if (!d.unavailable.empty()) {
      doc.add(
          report::Heading{fmt::format("Data dir {}: mount unknown ({})", d.path, d.unavailable)});
    } else {
      doc.add(report::Heading{fmt::format(
          "Data dir {}: {} on {} mounted at {} ({}), {}", d.path, d.mount.fs_type, d.mount.source,
          d.mount.mount_point, d.mount.options,
          d.nvme_namespaces.empty() ? std::string("no NVMe namespace below it")
                                    : fmt::format("NVMe {}", fmt::join(d.nvme_namespaces, ", ")))});
    }
    doc.add(report::Preformatted{direct_io_line(d)});
  }
}

void add_matrix(report::Document& doc, const Machine& m,
                const std::vector<std::pair<std::string, const PciDevice*>>& eps) {
  if (eps.size() < 2) {
    return;
  }
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {""};
  for (const auto& e : eps) {
    head.push_back(e.first);
  }
  head.push_back("CPU Affinity");
  head.push_back("NUMA");
  rows.push_back(head);
  for (const auto& [label, a] : eps) {
    std::vector<std::string> row = {label};
    for (const auto& e : eps) {
      row.push_back(to_string(classify_path(m, a->address, e.second->address)));
    }
    row.push_back(a->local_cpus.empty() ? "-" : units::format_cpulist(a->local_cpus));
    row.push_back(a->numa_node < 0 ? "N/A" : std::to_string(a->numa_node));
    rows.push_back(row);
  }
  doc.add(report::Heading{"Topology matrix"});
  doc.add(report::plain_table(rows));
  std::string out =
      "\n  Legend:\n"
      "    X    = Self\n"
      "    SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes\n"
      "    NODE = Connection traversing PCIe as well as the interconnect between PCIe Host "
      "Bridges within a NUMA node\n"
      "    PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
      "    PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host "
      "Bridge)\n"
      "    PIX  = Connection traversing at most a single PCIe bridge\n"
      "    NV#  = Connection traversing a bonded set of # NVLinks\n";
  // Functions of one card (the ports of a dual-port NIC) are separate rails for NCCL but share
  // one PCIe link, which is what the link findings count.
  std::string cards;
  for (const auto& card : physical_devices(m)) {
    if (card.functions.size() < 2) {
      continue;
    }
    std::vector<std::string> labels;
    for (const auto* f : card.functions) {
      const auto it =
          std::find_if(eps.begin(), eps.end(), [&](const auto& e) { return e.second == f; });
      labels.push_back(it == eps.end() ? f->address : it->first);
    }
    const auto& first = card.first().address;
    cards += fmt::format("    {} = one card at {} ({} functions sharing one PCIe link)\n",
                         fmt::join(labels, "+"), first.substr(0, first.rfind('.')),
                         card.functions.size());
  }
  if (!cards.empty()) {
    out += "\n  Multi-function cards:\n" + cards;
  }
  doc.add(report::Preformatted{out});
}

// "a b c", or "a b c and 3 more" past four.
std::string device_list(const std::vector<std::string>& devices) {
  if (devices.size() > 4) {
    return fmt::format("{} {} {} and {} more", devices[0], devices[1], devices[2],
                       devices.size() - 3);
  }
  return fmt::format("{}", fmt::join(devices, " "));
}

void add_findings(report::Document& doc, const std::vector<Finding>& findings) {
  std::map<Severity, int> counts;
  for (const auto& f : findings) {
    ++counts[f.severity];
  }
  doc.add(report::Heading{fmt::format("Findings: {} critical, {} warning, {} info",
                                      counts[Severity::kCritical], counts[Severity::kWarning],
                                      counts[Severity::kInfo])});
  if (findings.empty()) {
    doc.add(report::Note{"none: every check passed"});
    return;
  }
  std::string out;
  for (const auto& f : findings) {
    out += fmt::format("\n  [{}] {}{}{}\n", to_string(f.severity), f.rule,
                       f.devices.empty() ? "" : " ", device_list(f.devices));
    out += fmt::format("    {}\n", f.message);
    for (const auto& e : f.evidence) {
      out += fmt::format("    evidence: {} = {}\n", e.source, e.value);
    }
    out += fmt::format("    fix: {}\n", f.recommendation);
  }
  doc.add(report::Preformatted{out});
}

}  // namespace

report::Document probe_report(const Machine& machine, const std::vector<Finding>& findings,
                              const std::string& machine_lines) {
  const auto eps = labelled(machine);
  report::Document doc;
  doc.add(report::Preformatted{header(machine) + machine_lines});
  add_devices(doc, machine, eps);
  add_nvml(doc, machine);
  add_storage(doc, machine);
  add_matrix(doc, machine, eps);
  add_findings(doc, findings);
  return doc;
}

void add_doctor_summary(report::Document& document, const std::vector<Finding>& findings) {
  document.add(report::Heading{"Doctor's summary"});
  const auto summary = fix_first(findings);
  if (summary.empty()) {
    document.add(report::Note{"Nothing to fix: no warning or critical finding."});
    return;
  }
  std::size_t problems = 0;
  for (const auto& s : summary) {
    problems += s.findings.size();
  }
  std::string out = fmt::format("  {} problem(s) to fix, from {} rule(s); start with:\n", problems,
                                summary.size());
  const std::size_t shown = std::min(summary.size(), kFixFirst);
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& s = summary[i];
    const Finding& first = findings[s.findings.front()];
    if (s.findings.size() == 1) {
      out += fmt::format("  {}. [{}] {}: {}\n     fix: {}\n", i + 1, to_string(s.severity), s.rule,
                         first.message, first.recommendation);
      continue;
    }
    // One rule on several devices: what the rule says, the devices it hit, then the first
    // finding in full (the findings above give each one's own numbers and fix).
    const auto* rule = find_rule(s.rule);
    out +=
        fmt::format("  {}. [{}] {}: {} ({} findings on {})\n     first: {}\n     fix: {}\n", i + 1,
                    to_string(s.severity), s.rule,
                    rule != nullptr ? rule->title : std::string("see the findings above"),
                    s.findings.size(), device_list(s.devices), first.message, first.recommendation);
  }
  document.add(report::Preformatted{out});
}

}  // namespace acco::topo
