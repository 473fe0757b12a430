#include "acco/topo/sysfs_source.hpp"

#include <algorithm>
#include <bitset>
#include <cctype>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "acco/core/sysfs_reader.hpp"
#include "acco/core/units.hpp"
#include "acco/topo/link_model.hpp"
#include "acco/topo/mounts.hpp"

#include "software_source.hpp"

namespace acco::topo {
namespace {

std::vector<std::string> components(std::string_view path) {
  std::vector<std::string> out;
  for (auto& part : units::split(path, '/')) {
    if (!part.empty()) {
      out.push_back(std::move(part));
    }
  }
  return out;
}

// The nearest PCI function at or above a class device ("/sys/class/net/eth0/device" may point
// at a virtio child of the function, so walk up the canonical path); empty when unresolvable.
std::string owning_pci(const core::SysfsReader& in, const std::string& path) {
  auto real = in.fs().real_path(path);
  if (!real) {
    return {};
  }
  auto parts = components(*real);
  const auto it = std::find_if(parts.rbegin(), parts.rend(),
                               [](const std::string& part) { return is_pci_address(part); });
  return it == parts.rend() ? std::string() : *it;
}

void read_system(core::SysfsReader& in, Machine& m) {
  m.hostname = in.text("/proc/sys/kernel/hostname").value_or("");
  m.kernel = in.text("/proc/sys/kernel/osrelease").value_or("");
  if (auto cpuinfo = in.text("/proc/cpuinfo")) {
    for (const auto& line : units::split(*cpuinfo, '\n')) {
      if (line.rfind("flags", 0) == 0) {
        const auto words = units::split(line, ' ');
        m.hypervisor = std::find(words.begin(), words.end(), "hypervisor") != words.end();
        break;
      }
    }
  }
}

// Files only a container runtime leaves: Docker's /.dockerenv, Podman's /run/.containerenv (its
// engine="podman-4.3.1" line), Apptainer's /.singularity.d, a Kubernetes service account; else
// the cgroup path of PID 1 (cgroup v1 names the runtime; v2 inside a container reads "0::/").
void read_container(core::SysfsReader& in, Machine& m) {
  const core::Fs& fs = in.fs();
  Container& c = m.container;
  if (fs.exists("/.dockerenv")) {
    c = {.runtime = "docker", .evidence = "/.dockerenv exists"};
  } else if (fs.exists("/run/.containerenv")) {
    c = {.runtime = "podman", .evidence = "/run/.containerenv exists"};
    for (const auto& line : units::split(in.text("/run/.containerenv").value_or(""), '\n')) {
      if (line.starts_with("engine=")) {
        c.evidence = "/run/.containerenv: " + units::excerpt(line);
      }
    }
  } else if (fs.exists("/.singularity.d")) {
    c = {.runtime = "apptainer", .evidence = "/.singularity.d exists"};
  } else if (fs.exists("/var/run/secrets/kubernetes.io/serviceaccount")) {
    c = {.runtime = "kubernetes",
         .evidence = "/var/run/secrets/kubernetes.io/serviceaccount exists"};
  } else if (const auto cgroup = in.text("/proc/1/cgroup")) {
    for (const auto& [word, runtime] : {std::pair{"kubepods", "kubernetes"},
                                        {"/docker", "docker"},
                                        {"libpod", "podman"},
                                        {"/lxc", "lxc"}}) {
      if (cgroup->find(word) != std::string::npos) {
        c = {.runtime = runtime, .evidence = fmt::format("/proc/1/cgroup names {}", word)};
        break;
      }
    }
  }
  for (const auto& name : fs.list_dir("/dev").value_or(std::vector<std::string>{})) {
    if (name.starts_with("nvidia") && name != "nvidia-caps" && name != "nvidia-modeset") {
      c.nvidia_nodes.push_back(name);
    }
  }
  std::sort(c.nvidia_nodes.begin(), c.nvidia_nodes.end());
  for (const auto& name : fs.list_dir("/dev/infiniband").value_or(std::vector<std::string>{})) {
    c.rdma_nodes.push_back(name);
  }
  std::sort(c.rdma_nodes.begin(), c.rdma_nodes.end());
}

bool is_numbered(std::string_view name, std::string_view prefix) {
  return name.size() > prefix.size() && name.substr(0, prefix.size()) == prefix &&
         std::all_of(name.begin() + static_cast<std::ptrdiff_t>(prefix.size()), name.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

// Each CPU's package from its own topology/physical_package_id. An offline CPU has no topology/
// directory (the kernel removes it on hot-unplug), which is a fact and not an input issue.
std::map<int, int> read_cpu_packages(core::SysfsReader& in, Machine& m) {
  const std::string base = "/sys/devices/system/cpu";
  if (auto online = in.read_attribute(base + "/online")) {
    if (auto cpus = units::parse_cpulist(*online)) {
      m.online_cpus = *cpus;
    } else {
      in.issue(base + "/online", cpus.error().message);
    }
  }
  std::map<int, int> packages;
  for (const auto& name : in.list(base)) {
    if (!is_numbered(name, "cpu")) {
      continue;
    }
    const auto cpu = units::parse_int(name.substr(3));
    if (!cpu || *cpu > std::numeric_limits<int>::max()) {
      in.issue(fmt::format("{}/{}", base, name), "CPU number out of range");
      continue;
    }
    const auto id = in.integer(fmt::format("{}/{}/topology/physical_package_id", base, name));
    if (id) {
      packages[static_cast<int>(*cpu)] = static_cast<int>(std::max<std::int64_t>(*id, -1));
    }
  }
  std::set<int> distinct;
  for (const auto& [cpu, package] : packages) {
    const bool online = m.online_cpus.empty() ||
                        std::binary_search(m.online_cpus.begin(), m.online_cpus.end(), cpu);
    if (online && package >= 0) {
      distinct.insert(package);
    }
  }
  m.packages.assign(distinct.begin(), distinct.end());
  return packages;
}

// The socket of a node is the package of its CPUs that report one (the lowest if they span
// several, as with node interleaving); -1 for memory-only nodes and for package id -1.
int package_of(const std::map<int, int>& packages, const std::vector<int>& cpus) {
  int best = -1;
  for (const int cpu : cpus) {
    const auto it = packages.find(cpu);
    if (it != packages.end() && it->second >= 0 && (best < 0 || it->second < best)) {
      best = it->second;
    }
  }
  return best;
}

// CPUs read from a list file ("0-15,32-47"), or from its mask twin ("0000ffff,0000ffff") where
// the list is absent or unreadable: node cpulist/cpumap, device local_cpulist/local_cpus.
struct CpuSet {
  std::vector<int> cpus;
  std::string file;  // the name of the file they came from; empty when neither was readable
  std::string text;  // that file's text as read, quoted
};

CpuSet read_cpu_set(core::SysfsReader& in, const std::string& dir, const char* list_file,
                    const char* mask_file) {
  for (const auto& [file, is_list] : {std::pair{list_file, true}, std::pair{mask_file, false}}) {
    const std::string path = fmt::format("{}/{}", dir, file);
    if (auto raw = in.read_attribute(path)) {
      auto cpus = is_list ? units::parse_cpulist(*raw) : units::parse_cpumask(*raw);
      if (cpus) {
        return {std::move(*cpus), file, units::quote_attribute(*raw)};
      }
      in.issue(path, cpus.error().message);
    }
  }
  return {};
}

// A node's CPUs from cpulist, or from cpumap where there is no readable cpulist (older kernels
// have only cpumap).
void read_node_cpus(core::SysfsReader& in, const std::string& dir, NumaNode& node) {
  CpuSet set = read_cpu_set(in, dir, "cpulist", "cpumap");
  if (!set.file.empty()) {
    node.cpus = std::move(set.cpus);
    node.cpus_source = fmt::format("{}/{}", dir, set.file);
    node.cpus_text = std::move(set.text);
  }
}

// What the kernel says of a node's memory beyond its size: the initiators HMAT names and their
// figures (access0), a memory-side cache. Absent files leave the fields empty: most machines have
// no HMAT, and kernels before 5.6 have none of these directories.
void read_node_memory(core::SysfsReader& in, const std::string& dir, NumaNode& node) {
  const std::string access = dir + "/access0/initiators";
  for (const auto& name : in.list(access)) {
    if (is_numbered(name, "node")) {
      if (auto id = units::parse_int(name.substr(4)); id && *id <= 65535) {
        node.initiators.push_back(static_cast<int>(*id));
      }
    }
  }
  std::sort(node.initiators.begin(), node.initiators.end());
  const auto figure = [&](const char* file) -> std::optional<std::uint64_t> {
    const auto v = in.integer(fmt::format("{}/{}", access, file));
    return v && *v > 0 ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(*v))
                       : std::nullopt;
  };
  node.read_bandwidth_mbps = figure("read_bandwidth");
  node.write_bandwidth_mbps = figure("write_bandwidth");
  node.read_latency_ns = figure("read_latency");
  node.write_latency_ns = figure("write_latency");
  const std::string cache = dir + "/memory_side_cache";
  for (const auto& name : in.list(cache)) {
    if (is_numbered(name, "index")) {
      if (auto size = in.integer(fmt::format("{}/{}/size", cache, name)); size && *size > 0) {
        node.memory_side_cache_bytes += static_cast<std::uint64_t>(*size);
      }
    }
  }
}

// Memory tiers (kernel 6.1+): memory_tierN/nodelist names the nodes of tier N.
void read_memory_tiers(core::SysfsReader& in, Machine& m) {
  const std::string base = "/sys/devices/virtual/memory_tiering";
  for (const auto& name : in.list(base)) {
    if (!is_numbered(name, "memory_tier")) {
      continue;
    }
    const auto tier = units::parse_int(name.substr(11));
    const auto path = fmt::format("{}/{}/nodelist", base, name);
    const auto text = in.text(path);
    if (!tier || *tier > 65535 || !text) {
      continue;
    }
    auto nodes = units::parse_cpulist(*text);
    if (!nodes) {
      in.issue(path, nodes.error().message);
      continue;
    }
    for (auto& node : m.numa_nodes) {
      if (std::binary_search(nodes->begin(), nodes->end(), node.id)) {
        node.memory_tier = static_cast<int>(*tier);
      }
    }
  }
}

std::vector<int> read_node_list(core::SysfsReader& in, const std::string& path) {
  const auto text = in.text(path);
  if (!text) {
    return {};
  }
  auto nodes = units::parse_cpulist(*text);
  if (!nodes) {
    in.issue(path, nodes.error().message);
    return {};
  }
  return std::move(*nodes);
}

void read_numa(core::SysfsReader& in, Machine& m) {
  const auto packages = read_cpu_packages(in, m);
  const std::string base = "/sys/devices/system/node";
  m.possible_nodes = read_node_list(in, base + "/possible");
  m.online_nodes = read_node_list(in, base + "/online");
  std::vector<int> ids;
  for (const auto& name : in.list(base)) {
    if (is_numbered(name, "node")) {
      const auto id = units::parse_int(name.substr(4));
      if (id && *id <= std::numeric_limits<int>::max()) {
        ids.push_back(static_cast<int>(*id));
      } else {
        in.issue(fmt::format("{}/{}", base, name), "NUMA node number out of range");
      }
    }
  }
  std::sort(ids.begin(), ids.end());
  for (const int id : ids) {
    const auto dir = fmt::format("{}/node{}", base, id);
    NumaNode node;
    node.id = id;
    read_node_cpus(in, dir, node);
    if (auto dist = in.text(dir + "/distance")) {
      for (const auto& word : units::split(*dist, ' ')) {
        if (word.empty()) {
          continue;
        }
        if (auto v = units::parse_int(word)) {
          node.distances.push_back(static_cast<int>(*v));
        } else {
          in.issue(dir + "/distance", v.error().message);
          node.distances.clear();
          break;
        }
      }
    }
    if (auto meminfo = in.text(dir + "/meminfo")) {
      // "Node 0 MemTotal:       1056508412 kB"
      const auto line = units::split(*meminfo, '\n').front();
      const auto pos = line.find("MemTotal:");
      const auto rest = pos == std::string::npos
                            ? std::string_view()
                            : units::trim(std::string_view(line).substr(pos + 9));
      auto kb = units::parse_int(rest.substr(0, rest.find(' ')));
      if (kb && *kb >= 0) {
        node.memory_bytes = static_cast<std::uint64_t>(*kb) * 1024;
        node.memory_known = true;
      } else {
        in.issue(dir + "/meminfo", "cannot find 'MemTotal: N kB'");
      }
    }
    read_node_memory(in, dir, node);
    node.package = package_of(packages, node.cpus);
    m.numa_nodes.push_back(std::move(node));
  }
  read_memory_tiers(in, m);
  if (m.numa_nodes.empty()) {
    // Kernels built without NUMA have no node directory: the whole machine is node 0.
    NumaNode node;
    node.cpus = m.online_cpus;
    node.distances = {10};
    node.package = package_of(packages, node.cpus);
    m.numa_nodes.push_back(std::move(node));
  }
}

PcieLink read_link(core::SysfsReader& in, const std::string& dir, const char* speed_file,
                   const char* width_file) {
  PcieLink link;
  if (auto speed = in.text(dir + "/" + speed_file)) {
    if (auto gts = parse_link_speed(*speed)) {
      link.speed_gts = *gts;
    } else {
      in.issue(dir + "/" + speed_file, gts.error().message);
    }
  }
  if (auto width = in.integer(dir + "/" + width_file)) {
    if (*width >= 0 && *width <= 32) {
      link.width = static_cast<int>(*width);
    } else {
      in.issue(dir + "/" + width_file, fmt::format("link width {} is not 0..32", *width));
    }
  }
  return link;
}

std::uint16_t read_u16(const std::string& bytes, std::size_t offset) {
  return static_cast<std::uint16_t>(static_cast<unsigned char>(bytes[offset]) |
                                    (static_cast<unsigned char>(bytes[offset + 1]) << 8));
}

std::uint32_t read_u32(const std::string& bytes, std::size_t offset) {
  return static_cast<std::uint32_t>(read_u16(bytes, offset)) |
         (static_cast<std::uint32_t>(read_u16(bytes, offset + 2)) << 16);
}

// Walks the PCIe extended capability list (from 0x100; only readable as root, when the kernel
// returns all 4096 bytes) and returns the ACS control register.
void read_acs(core::SysfsReader& in, const std::string& dir, PciDevice& d) {
  const auto path = dir + "/config";
  auto config = in.fs().read_file(path);
  if (!config || config->size() < 4096) {
    return;
  }
  d.config_extended_readable = true;
  // A next pointer of 0 ends the list; any other must be at 0x100 or above (PCIe base spec
  // 7.6.3) and, as capabilities do not overlap, visited once.
  std::bitset<1024> visited;
  std::size_t offset = 0x100;
  while (offset != 0) {
    if (offset < 0x100 || visited[offset / 4]) {
      in.issue(path, fmt::format("extended capability list is malformed: next pointer 0x{:03x} {}",
                                 offset, offset < 0x100 ? "is below 0x100" : "loops back"));
      return;
    }
    visited[offset / 4] = true;
    const std::uint32_t header = read_u32(*config, offset);
    if (header == 0 || header == 0xffffffff) {
      return;
    }
    if ((header & 0xffff) == 0x000d && offset + 8 <= config->size()) {
      d.acs_control = read_u16(*config, offset + 6);
      return;
    }
    offset = (header >> 20) & 0xffc;
  }
}

// "pci0000:00", "pci10000:00": a root bus directory, under /sys/devices or, for the domains a
// VMD controller or Hyper-V creates, wherever the kernel hangs that host bridge.
bool is_root_bus_name(std::string_view name) {
  if (name.substr(0, 3) != "pci") {
    return false;
  }
  const auto bus = name.substr(3);
  const auto colon = bus.find(':');
  if (colon == std::string_view::npos || colon < 4 || colon > 8 || bus.size() != colon + 3) {
    return false;
  }
  return std::all_of(bus.begin(), bus.end(), [](char c) {
    return c == ':' || std::isxdigit(static_cast<unsigned char>(c)) != 0;
  });
}

// Functions under /sys/devices/pci*/ that /sys/bus/pci/devices does not list, with their
// directories. Real trees list every function, but captures that copied /sys/devices and only
// some bus links do not; without this walk a device below such a bridge would be dropped.
std::map<std::string, std::string> unlisted_functions(core::SysfsReader& in,
                                                      const std::set<std::string>& listed) {
  // PCIe allows 256 buses per domain; real hierarchies are a few levels deep. The bound only
  // stops a tree that loops through a link.
  constexpr std::size_t kMaxDepth = 64;
  std::map<std::string, std::string> unlisted;
  std::vector<std::pair<std::string, std::size_t>> pending;  // directory, depth
  for (const auto& name : in.list("/sys/devices")) {
    if (is_root_bus_name(name)) {
      pending.emplace_back("/sys/devices/" + name, 0);
    }
  }
  while (!pending.empty()) {
    const auto [dir, depth] = pending.back();
    pending.pop_back();
    if (depth > kMaxDepth) {
      in.issue(dir, "PCI hierarchy nested deeper than 64 levels");
      continue;
    }
    for (const auto& name : in.list(dir)) {
      const bool function = is_pci_address(name);
      if (!function && !is_root_bus_name(name)) {
        continue;
      }
      auto child = fmt::format("{}/{}", dir, name);
      if (function && !listed.contains(name)) {
        unlisted.emplace(name, child);
      }
      pending.emplace_back(child, depth + 1);
    }
  }
  return unlisted;
}

// The one node whose CPUs the given CPUs touch; -1 when they touch none or several (the kernel
// reports every CPU for a device whose node firmware did not give).
int node_owning(const std::vector<NumaNode>& nodes, const std::vector<int>& cpus) {
  int owner = -1;
  for (const auto& node : nodes) {
    const bool touches = std::any_of(cpus.begin(), cpus.end(), [&](int cpu) {
      return std::binary_search(node.cpus.begin(), node.cpus.end(), cpu);
    });
    if (touches) {
      if (owner >= 0) {
        return -1;
      }
      owner = node.id;
    }
  }
  return owner;
}

// The device's node from its own files: numa_node, else (absent, -1 or unreadable, on a
// machine with several nodes) the node owning its local_cpulist or local_cpus. The kernel prints
// both from the same node, so they place the device when numa_node does not.
void read_locality(core::SysfsReader& in, const Machine& m, const std::string& dir, PciDevice& d) {
  const auto numa_path = dir + "/numa_node";
  if (auto raw = in.read_attribute(numa_path)) {
    d.numa_evidence.push_back({numa_path, units::quote_attribute(*raw)});
    if (auto v = units::parse_int(*raw)) {
      if (*v >= 0 && *v <= std::numeric_limits<int>::max()) {
        d.numa_node = static_cast<int>(*v);
        d.numa_source = "numa_node";
      }
    } else {
      in.issue(numa_path, v.error().message);
    }
  }
  const CpuSet local = read_cpu_set(in, dir, "local_cpulist", "local_cpus");
  d.local_cpus = local.cpus;
  const std::string& cpus_file = local.file;
  const std::string& cpus_text = local.text;
  if (!d.numa_source.empty() || m.numa_nodes.size() <= 1 || cpus_file.empty()) {
    return;
  }
  const int node = node_owning(m.numa_nodes, d.local_cpus);
  if (node >= 0) {
    d.numa_node = node;
    d.numa_source = cpus_file;
    d.numa_evidence.push_back(
        {dir + "/" + cpus_file, fmt::format("{} (the CPUs of node {})", cpus_text, node)});
  }
}

// A device its own files do not place takes the node of the nearest bridge above it that is
// placed (hwloc does the same): everything below a bridge hangs off one root complex.
void inherit_locality(Machine& m) {
  if (m.numa_nodes.size() <= 1) {
    return;
  }
  std::vector<std::pair<PciDevice*, const PciDevice*>> inherited;
  for (auto& d : m.pci_devices) {
    if (!d.numa_source.empty()) {
      continue;
    }
    const PciDevice* up = m.find(d.parent);
    for (int hops = 0; up != nullptr && up->numa_source.empty() && hops < 256; ++hops) {
      up = m.find(up->parent);
    }
    if (up != nullptr && !up->numa_source.empty()) {
      inherited.emplace_back(&d, up);
    }
  }
  for (const auto& [d, up] : inherited) {
    d->numa_node = up->numa_node;
    d->numa_source = "parent bridge " + up->address;
    d->numa_evidence.insert(d->numa_evidence.end(), up->numa_evidence.begin(),
                            up->numa_evidence.end());
  }
}

// One function, its attributes read from `dir` (its /sys/bus/pci/devices link, or its directory
// under /sys/devices when the bus does not list it); `real` is its canonical path.
PciDevice read_function(core::SysfsReader& in, const Machine& m, const std::string& address,
                        const std::string& dir, const std::string& real) {
  PciDevice d;
  d.address = address;
  d.sysfs_path = real;
  // The host bridge is the last root bus above the device: a VMD controller's domain hangs
  // below a function of another domain and starts a hierarchy of its own.
  std::string previous;
  for (const auto& part : components(real)) {
    if (is_root_bus_name(part)) {
      d.root_bus = part;
      previous.clear();
    } else if (is_pci_address(part)) {
      if (part == address) {
        d.parent = previous;
        break;
      }
      previous = part;
    }
  }
  const auto cls = in.integer(dir + "/class", 16);
  d.class_code = static_cast<std::uint32_t>(cls.value_or(0)) & 0xffffff;
  d.vendor_id = static_cast<std::uint16_t>(in.integer(dir + "/vendor", 16).value_or(0));
  d.device_id = static_cast<std::uint16_t>(in.integer(dir + "/device", 16).value_or(0));
  d.subsystem_vendor_id =
      static_cast<std::uint16_t>(in.integer(dir + "/subsystem_vendor", 16).value_or(0));
  d.subsystem_device_id =
      static_cast<std::uint16_t>(in.integer(dir + "/subsystem_device", 16).value_or(0));
  d.kind = classify_pci(d.class_code, d.vendor_id);
  d.driver = in.link_name(dir + "/driver");
  read_locality(in, m, dir, d);
  d.current = read_link(in, dir, "current_link_speed", "current_link_width");
  d.max = read_link(in, dir, "max_link_speed", "max_link_width");
  if (auto group = in.link_name(dir + "/iommu_group"); !group.empty()) {
    if (auto id = units::parse_int(group)) {
      d.iommu_group = static_cast<int>(*id);
    }
  }
  read_acs(in, dir, d);
  return d;
}

void read_pci(core::SysfsReader& in, Machine& m) {
  const std::string bus = "/sys/bus/pci/devices";
  std::set<std::string> listed;
  std::map<std::string, std::string> read_from;  // address -> the path its facts came from
  for (const auto& address : in.list(bus)) {
    listed.insert(address);
    const auto link = fmt::format("{}/{}", bus, address);
    if (!is_pci_address(address)) {
      in.issue(link, "not a PCI address (expected DDDD:BB:DD.F)");
      continue;
    }
    auto real = in.fs().real_path(link);
    if (!real) {
      in.issue(link, fmt::format("cannot resolve the device link: {}", real.error().message));
      continue;
    }
    read_from[address] = link;
    m.pci_devices.push_back(read_function(in, m, address, link, *real));
  }
  for (const auto& [address, dir] : unlisted_functions(in, listed)) {
    auto real = in.fs().real_path(dir);
    if (!real) {
      in.issue(dir, fmt::format("cannot resolve the device directory: {}", real.error().message));
      continue;
    }
    read_from[address] = dir;
    m.pci_devices.push_back(read_function(in, m, address, dir, *real));
  }
  std::sort(m.pci_devices.begin(), m.pci_devices.end(),
            [](const PciDevice& a, const PciDevice& b) { return a.address < b.address; });
  // The link model and the checks walk up through every parent, so a device below a bridge that
  // could not be read hangs off unknown links and is left out too.
  for (bool dropped = true; dropped;) {
    std::set<std::string> present;
    for (const auto& d : m.pci_devices) {
      present.insert(d.address);
    }
    dropped = std::erase_if(m.pci_devices, [&](const PciDevice& d) {
                if (d.parent.empty() || present.contains(d.parent)) {
                  return false;
                }
                in.issue(read_from[d.address],
                         fmt::format("its upstream bridge {} is missing or unreadable", d.parent));
                return true;
              }) != 0;
  }
  inherit_locality(m);

  const std::string slots = "/sys/bus/pci/slots";
  for (const auto& name : in.list(slots)) {
    const auto address = in.text(fmt::format("{}/{}/address", slots, name));
    if (!address) {
      continue;
    }
    for (auto& d : m.pci_devices) {
      if (d.address.rfind(*address + ".", 0) == 0) {
        d.slot = name;
      }
    }
  }
}

void read_net(core::SysfsReader& in, Machine& m) {
  const std::string base = "/sys/class/net";
  for (const auto& name : in.list(base)) {
    const auto dir = fmt::format("{}/{}", base, name);
    NetInterface n;
    n.name = name;
    if (in.fs().exists(dir + "/device")) {
      n.pci = owning_pci(in, dir + "/device");
    }
    // Reading speed fails with EINVAL while the link is down; that is a fact, not bad input.
    if (auto speed = in.fs().read_file(dir + "/speed")) {
      if (auto v = units::parse_int(*speed); v && *v > 0) {
        n.speed_mbps = *v;
      } else if (!v) {
        in.issue(dir + "/speed", v.error().message);
      }
    }
    n.operstate = in.text(dir + "/operstate").value_or("unknown");
    if (auto mtu = in.integer(dir + "/mtu")) {
      n.mtu = static_cast<int>(*mtu);
    }
    m.net_interfaces.push_back(std::move(n));
  }
}

// "4: ACTIVE" -> 4.
std::optional<int> leading_number(core::SysfsReader& in, const std::string& path,
                                  const std::string& text) {
  const auto colon = text.find(':');
  auto v = units::parse_int(text.substr(0, colon));
  if (!v) {
    in.issue(path,
             fmt::format("cannot parse '{}' (expected e.g. '4: ACTIVE')", units::escape(text)));
    return std::nullopt;
  }
  return static_cast<int>(*v);
}

// Gb/s of data per lane after line encoding, by the speed word of the rate file (IBTA: SDR,
// DDR and QDR signal at 2.5, 5 and 10 Gb/s with 8b/10b; FDR10 and FDR at 10.3125 and 14.0625
// with 64b/66b; EDR, HDR, NDR and XDR carry 25, 50, 100 and 200 Gb/s of 64b/66b-encoded data,
// which is also what the kernel prints for them). The kernel prints FDR's lane as 14 and QDR's
// as 10, so their signalling figure overstates the data rate.
double data_gbps_per_lane(std::string_view speed) {
  static const std::map<std::string_view, double> lane_rates = {
      {"SDR", 2.0},  {"DDR", 4.0},  {"QDR", 8.0},   {"FDR10", 10.0}, {"FDR", 14.0625 * 64 / 66},
      {"EDR", 25.0}, {"HDR", 50.0}, {"NDR", 100.0}, {"XDR", 200.0}};
  const auto it = lane_rates.find(speed);
  return it == lane_rates.end() ? 0 : it->second;
}

// RoCE ports report their Ethernet speed under an InfiniBand name ("100 Gb/sec (4X EDR)" for
// 100GbE, "40 Gb/sec (4X QDR)" for 40GbE), and an Ethernet rate is already the data rate. An
// unknown speed word (a kernel newer than this table) keeps the printed figure.
double data_rate_gbps(const IbPort& p, std::string_view speed) {
  const double lane = data_gbps_per_lane(speed);
  if (p.link_layer == "Ethernet" || lane <= 0 || p.lanes <= 0) {
    return p.rate_gbps;
  }
  return lane * p.lanes;
}

// The GID table's types and the netdev of GID 0. Unpopulated entries answer EINVAL (or nothing)
// on read, which is the kernel saying "empty", not bad input, so those reads bypass the
// SysfsReader.
void read_gid_attrs(core::SysfsReader& in, const std::string& pdir, IbPort& p) {
  if (auto ndev = in.fs().read_file(pdir + "/gid_attrs/ndevs/0")) {
    p.netdev = units::escape(units::trim(*ndev));
  }
  std::vector<int> indices;
  for (const auto& name : in.list(pdir + "/gid_attrs/types")) {
    if (auto index = units::parse_int(name); index && *index >= 0) {
      indices.push_back(static_cast<int>(*index));
    }
  }
  std::sort(indices.begin(), indices.end());
  for (const int index : indices) {
    auto type = in.fs().read_file(fmt::format("{}/gid_attrs/types/{}", pdir, index));
    if (!type) {
      continue;
    }
    const auto text = units::escape(units::trim(*type));
    if (text.empty()) {
      continue;
    }
    if (std::find(p.gid_types.begin(), p.gid_types.end(), text) == p.gid_types.end()) {
      p.gid_types.push_back(text);
    }
    if (text == "RoCE v2" && !p.roce_v2_gid_index) {
      p.roce_v2_gid_index = index;
    }
  }
}

void read_infiniband(core::SysfsReader& in, Machine& m) {
  const std::string base = "/sys/class/infiniband";
  for (const auto& dev : in.list(base)) {
    const auto dir = fmt::format("{}/{}", base, dev);
    const auto pci = owning_pci(in, dir + "/device");
    for (const auto& port_name : in.list(dir + "/ports")) {
      const auto pdir = fmt::format("{}/ports/{}", dir, port_name);
      IbPort p;
      p.device = dev;
      p.pci = pci;
      p.port = static_cast<int>(units::parse_int(port_name).value_or(0));
      // A port whose state or rate does not parse is left out: the checks would take the
      // unknown state for a down port and the unknown rate for a slow one.
      bool readable = true;
      std::string speed;  // "NDR" from "(4X NDR)"
      // The texts are kept escaped: they are quoted as evidence, and a stray control byte must
      // not reach a terminal.
      if (auto s = in.text(pdir + "/state")) {
        p.state_text = units::escape(*s);
        const auto state = leading_number(in, pdir + "/state", *s);
        readable = state.has_value();
        p.state = state.value_or(0);
      }
      if (auto s = in.text(pdir + "/phys_state")) {
        p.phys_state_text = units::escape(*s);
        p.phys_state = leading_number(in, pdir + "/phys_state", *s).value_or(0);
      }
      if (auto rate = in.text(pdir + "/rate")) {
        // "400 Gb/sec (4X NDR)", "2.5 Gb/sec (1X SDR)"
        p.rate_text = units::escape(*rate);
        const auto gb = rate->find(" Gb/sec");
        const auto open = rate->find('(');
        const auto x = rate->find('X', open == std::string::npos ? 0 : open);
        auto value = units::parse_double(rate->substr(0, gb));
        auto lanes = open == std::string::npos || x == std::string::npos
                         ? units::parse_int("")
                         : units::parse_int(rate->substr(open + 1, x - open - 1));
        if (gb == std::string::npos || !value || !lanes) {
          in.issue(pdir + "/rate",
                   fmt::format("cannot parse '{}' (expected e.g. '400 Gb/sec (4X NDR)')",
                               units::escape(*rate)));
          readable = false;
        } else {
          p.rate_gbps = *value;
          p.lanes = static_cast<int>(*lanes);
          const auto close = rate->find(')', x);
          const auto word = rate->substr(x + 1, close == std::string::npos ? close : close - x - 1);
          speed = std::string(units::trim(word));
        }
      }
      p.link_layer = units::escape(in.text(pdir + "/link_layer").value_or(""));
      p.data_rate_gbps = data_rate_gbps(p, speed);
      read_gid_attrs(in, pdir, p);
      if (p.netdev.empty()) {
        // Without gid_attrs (InfiniBand ports, older kernels) a single-port function's one
        // netdev is the port's.
        const auto nets = in.list(dir + "/device/net");
        if (nets.size() == 1) {
          p.netdev = nets.front();
        }
      }
      if (readable) {
        m.ib_ports.push_back(std::move(p));
      }
    }
  }
}

// "nvme0n1": a namespace's block device. Multipath paths (nvme0c0n1) are hidden block devices
// behind the nvme0n1 head, which is where the queue settings that count live.
bool is_nvme_namespace(std::string_view name) {
  if (name.substr(0, 4) != "nvme") {
    return false;
  }
  const auto n = name.find('n', 4);
  return n != std::string_view::npos && is_numbered(name.substr(0, n), "nvme") &&
         is_numbered(name.substr(n), "n");
}

std::optional<std::int64_t> non_negative(core::SysfsReader& in, const std::string& path) {
  auto v = in.integer(path);
  if (v && *v < 0) {
    in.issue(path, fmt::format("{} is negative", *v));
    return std::nullopt;
  }
  return v;
}

void read_nvme_namespaces(core::SysfsReader& in, Machine& m) {
  for (const auto& name : in.list("/sys/block")) {
    if (!is_nvme_namespace(name)) {
      continue;
    }
    const auto queue = fmt::format("/sys/block/{}/queue", name);
    NvmeNamespace ns;
    ns.name = name;
    for (const auto& c : m.nvme_controllers) {
      if (std::find(c.namespaces.begin(), c.namespaces.end(), name) != c.namespaces.end()) {
        ns.controller = c.name;
      }
    }
    if (auto text = in.text(queue + "/scheduler")) {
      ns.scheduler_text = units::escape(*text);
      ns.scheduler = active_scheduler(*text);
      if (!ns.scheduler) {
        in.issue(queue + "/scheduler",
                 fmt::format("cannot find the active scheduler in '{}' (expected e.g. '[none] "
                             "mq-deadline')",
                             ns.scheduler_text));
      }
    }
    ns.nr_requests = non_negative(in, queue + "/nr_requests");
    ns.max_sectors_kb = non_negative(in, queue + "/max_sectors_kb");
    ns.max_hw_sectors_kb = non_negative(in, queue + "/max_hw_sectors_kb");
    ns.read_ahead_kb = non_negative(in, queue + "/read_ahead_kb");
    ns.logical_block_size = non_negative(in, queue + "/logical_block_size");
    if (auto poll = in.integer(queue + "/io_poll")) {
      ns.io_poll = *poll != 0;
    }
    const auto mq = fmt::format("/sys/block/{}/mq", name);
    if (in.fs().exists(mq)) {
      const auto entries = in.list(mq);
      // One directory per hardware context, named by its number.
      ns.hw_queues = static_cast<int>(std::count_if(
          entries.begin(), entries.end(), [](const std::string& e) { return is_numbered(e, ""); }));
    }
    m.nvme_namespaces.push_back(std::move(ns));
  }
  std::sort(m.nvme_namespaces.begin(), m.nvme_namespaces.end(),
            [](const NvmeNamespace& a, const NvmeNamespace& b) { return a.name < b.name; });
}

void read_nvme(core::SysfsReader& in, Machine& m) {
  const std::string base = "/sys/class/nvme";
  for (const auto& name : in.list(base)) {
    const auto dir = fmt::format("{}/{}", base, name);
    NvmeController c;
    c.name = name;
    c.model = in.text(dir + "/model").value_or("");
    c.transport = in.text(dir + "/transport").value_or("pcie");
    if (c.transport == "pcie") {
      c.pci = owning_pci(in, dir + "/device");
    }
    for (const auto& entry : in.list(dir)) {
      // Namespaces are nvme0n1, nvme0n2; multipath shows nvme0c0n1 under the controller.
      if (entry.rfind(name + "n", 0) == 0 || entry.rfind(name + "c", 0) == 0) {
        c.namespaces.push_back(entry);
      }
    }
    m.nvme_controllers.push_back(std::move(c));
  }
  read_nvme_namespaces(in, m);
  if (auto poll = in.integer("/sys/module/nvme/parameters/poll_queues")) {
    if (*poll >= 0 && *poll <= std::numeric_limits<int>::max()) {
      m.nvme_poll_queues = static_cast<int>(*poll);
    } else {
      in.issue("/sys/module/nvme/parameters/poll_queues",
               fmt::format("{} is not a queue count", *poll));
    }
  }
}

void read_iommu(core::SysfsReader& in, Machine& m) {
  const std::string base = "/sys/kernel/iommu_groups";
  for (const auto& name : in.list(base)) {
    auto id = units::parse_int(name);
    if (!id || *id < 0 || *id > std::numeric_limits<int>::max()) {
      in.issue(fmt::format("{}/{}", base, name), "not an IOMMU group number");
      continue;
    }
    IommuGroup g;
    g.id = static_cast<int>(*id);
    g.type = in.text(fmt::format("{}/{}/type", base, name)).value_or("");
    g.devices = in.list(fmt::format("{}/{}/devices", base, name));
    m.iommu.groups.push_back(std::move(g));
  }
  std::sort(m.iommu.groups.begin(), m.iommu.groups.end(),
            [](const IommuGroup& a, const IommuGroup& b) { return a.id < b.id; });
  m.iommu.enabled = !m.iommu.groups.empty();
  m.iommu.cmdline = in.text("/proc/cmdline").value_or("");
}

void read_gpudirect(core::SysfsReader& in, Machine& m) {
  // The peer-memory clients that let an RDMA NIC reach GPU memory, in the order NCCL and RCCL
  // check them: NVIDIA's module and its legacy memory_peers names (NCCL
  // src/transport/net_ib/gdr.cc), AMD's amd_peermem module, and the PeerDirect client the
  // amdgpu driver registers under the name "amdkfd" (what RCCL checks).
  for (const auto& path : gpudirect_paths()) {
    if (in.fs().exists(path)) {
      m.gpudirect.rdma_loaded = true;
      m.gpudirect.evidence = path;
      return;
    }
  }
  std::string all;
  for (const auto& path : gpudirect_paths()) {
    all += (all.empty() ? "" : ", ") + path;
  }
  m.gpudirect.evidence = "none of " + all;
}

}  // namespace

const std::vector<std::string>& gpudirect_paths() {
  static const std::vector<std::string> paths = {
      "/sys/module/nvidia_peermem/version", "/sys/kernel/mm/memory_peers/nv_mem/version",
      "/sys/kernel/mm/memory_peers/nv_mem_nc/version", "/sys/module/amd_peermem",
      "/sys/kernel/mm/memory_peers/amdkfd/version"};
  return paths;
}

std::optional<std::string> active_scheduler(std::string_view text) {
  std::vector<std::string> names;
  for (auto& word : units::split(units::trim(text), ' ')) {
    if (word.empty()) {
      continue;
    }
    if (word.size() > 2 && word.front() == '[' && word.back() == ']') {
      return word.substr(1, word.size() - 2);
    }
    names.push_back(std::move(word));
  }
  // A queue that cannot take a scheduler prints "none" alone, without brackets.
  if (names.size() == 1 && names.front() == "none") {
    return names.front();
  }
  return std::nullopt;
}

bool is_pci_address(std::string_view t) {
  // DDDD:BB:DD.F, the domain 4 to 8 hex digits: Linux prints "%04x", and VMD and Hyper-V
  // create domains above 0xffff ("10000:00:02.0").
  const std::size_t n = t.size();
  if (n < 12 || n > 16 || t[n - 8] != ':' || t[n - 5] != ':' || t[n - 2] != '.') {
    return false;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const bool separator = i == n - 8 || i == n - 5 || i == n - 2;
    if (!separator && std::isxdigit(static_cast<unsigned char>(t[i])) == 0) {
      return false;
    }
  }
  return true;
}

DeviceKind classify_pci(std::uint32_t class_code, std::uint16_t vendor_id) {
  const std::uint32_t base = class_code >> 16;
  const std::uint32_t sub = (class_code >> 8) & 0xff;
  switch (base) {
    case 0x03: {
      // Vendors whose display controllers only draw a console: emulated VGA (Cirrus 0x1013 and
      // S3 0x5333 as QEMU and Hyper-V Gen1 emulate them, Bochs/QEMU stdvga 0x1234, Red Hat QXL
      // 0x1b36, VMware SVGA 0x15ad, virtio-gpu 0x1af4, VirtualBox 0x80ee, Parallels 0x1ab8,
      // Hyper-V 0x1414) and server BMC video (ASPEED 0x1a03, Matrox G200e 0x102b, Huawei iBMC
      // 0x19e5, Nuvoton 0x1050, XGI 0x18ca, Silicon Motion 0x126f). Any other vendor's display
      // or 3D controller is taken for a GPU, as NCCL and hwloc take class 0x03.
      static const std::set<std::uint16_t> display_only = {0x1013, 0x5333, 0x1234, 0x1b36, 0x15ad,
                                                           0x1af4, 0x80ee, 0x1ab8, 0x1414, 0x1a03,
                                                           0x102b, 0x19e5, 0x1050, 0x18ca, 0x126f};
      return display_only.contains(vendor_id) ? DeviceKind::kOther : DeviceKind::kGpu;
    }
    case 0x12:  // processing accelerators (Gaudi, Ascend, TPUs, NPUs)
      return DeviceKind::kAccelerator;
    case 0x0b:  // processors: 0x0b40 is a co-processor (Xeon Phi, NEC vector engine)
      return sub == 0x40 ? DeviceKind::kAccelerator : DeviceKind::kOther;
    case 0x02:  // network: Ethernet 00 .. fabric 08, other 80
      return sub <= 0x08 || sub == 0x80 ? DeviceKind::kNic : DeviceKind::kOther;
    case 0x0c:  // serial bus: 0x0c06 is InfiniBand on HCAs that predate class 0x0207
      return sub == 0x06 ? DeviceKind::kNic : DeviceKind::kOther;
    case 0x01:
      return class_code == 0x010802 ? DeviceKind::kNvme : DeviceKind::kStorage;
    case 0x06:
      if (sub == 0x04) {
        return DeviceKind::kBridge;
      }
      if (sub == 0x80 && vendor_id == 0x10de) {
        return DeviceKind::kNvSwitch;
      }
      return sub == 0x00 ? DeviceKind::kHostBridge : DeviceKind::kOther;
    default:
      return DeviceKind::kOther;
  }
}

namespace {

// A NIC's interrupt vectors and their CPUs. The affinity of a vector that was freed between the
// listing and the read (an interface going down) is simply absent.
void read_nic_irqs(core::SysfsReader& in, Machine& m) {
  for (auto& d : m.pci_devices) {
    if (d.kind != DeviceKind::kNic) {
      continue;
    }
    std::vector<int> numbers;
    for (const auto& name : in.list(fmt::format("/sys/bus/pci/devices/{}/msi_irqs", d.address))) {
      if (auto n = units::parse_int(name); n && *n >= 0) {
        numbers.push_back(static_cast<int>(*n));
      }
    }
    std::sort(numbers.begin(), numbers.end());
    for (const int n : numbers) {
      Irq irq;
      irq.irq = n;
      const auto path = fmt::format("/proc/irq/{}/smp_affinity_list", n);
      if (auto text = in.text(path)) {
        irq.affinity_text = units::escape(*text);
        if (auto cpus = units::parse_cpulist(*text)) {
          irq.cpus = std::move(*cpus);
        } else {
          in.issue(path, cpus.error().message);
        }
      }
      d.irqs.push_back(std::move(irq));
    }
  }
}

// The third field of tcp_rmem/tcp_wmem ("4096 131072 6291456"): the most autotuning may grow a
// buffer to.
std::optional<std::int64_t> tcp_buffer_max(core::SysfsReader& in, const std::string& path,
                                           std::string& text) {
  auto t = in.text(path);
  if (!t) {
    return std::nullopt;
  }
  text = units::escape(*t);
  std::vector<std::string> fields;
  for (auto& f : units::split(*t, '\t')) {
    for (auto& g : units::split(f, ' ')) {
      if (!g.empty()) {
        fields.push_back(std::move(g));
      }
    }
  }
  if (fields.size() == 3) {
    // Tabs as the kernel writes them become single spaces, as a sysctl line writes them.
    text = units::escape(fields[0] + " " + fields[1] + " " + fields[2]);
  }
  auto v = fields.size() == 3 ? units::parse_int(fields[2]) : units::parse_int("");
  if (!v) {
    in.issue(path, fmt::format("cannot parse '{}' (expected 'min default max')", text));
    return std::nullopt;
  }
  return *v;
}

// "Max locked memory         8388608              8388608              bytes": the soft field.
void read_memlock(core::SysfsReader& in, HostLimits& limits) {
  const std::string path = "/proc/self/limits";
  auto text = in.read_attribute(path);
  if (!text) {
    return;
  }
  for (const auto& line : units::split(*text, '\n')) {
    if (line.rfind("Max locked memory", 0) != 0) {
      continue;
    }
    std::vector<std::string> fields;
    for (auto& w : units::split(line.substr(std::string_view("Max locked memory").size()), ' ')) {
      if (!w.empty()) {
        fields.push_back(std::move(w));
      }
    }
    if (fields.empty()) {
      break;
    }
    limits.memlock_text = units::escape(fields[0]);
    if (fields[0] == "unlimited") {
      limits.memlock_unlimited = true;
      return;
    }
    if (auto v = units::parse_int(fields[0]); v && *v >= 0) {
      limits.memlock_unlimited = false;
      limits.memlock_bytes = static_cast<std::uint64_t>(*v);
      return;
    }
    break;
  }
  in.issue(path, "cannot find 'Max locked memory <soft> <hard> bytes'");
}

// tmpfs's size= ("65536k", "1g", "50%", or bytes) in bytes; nullopt for a form not handled.
std::optional<std::uint64_t> tmpfs_size(std::string_view value, std::uint64_t mem_total) {
  if (value.empty()) {
    return std::nullopt;
  }
  if (value.back() == '%') {
    auto pct = units::parse_int(value.substr(0, value.size() - 1));
    if (!pct || *pct < 0 || mem_total == 0) {
      return std::nullopt;
    }
    return mem_total / 100 * static_cast<std::uint64_t>(*pct);
  }
  std::uint64_t scale = 1;
  switch (std::tolower(static_cast<unsigned char>(value.back()))) {
    case 'k':
      scale = 1ULL << 10;
      break;
    case 'm':
      scale = 1ULL << 20;
      break;
    case 'g':
      scale = 1ULL << 30;
      break;
    case 't':
      scale = 1ULL << 40;
      break;
    default:
      break;
  }
  auto v = units::parse_int(scale == 1 ? value : value.substr(0, value.size() - 1));
  if (!v || *v < 0) {
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(*v) * scale;
}

// MemTotal from /proc/meminfo, else the sum of the NUMA nodes' when every node gave one.
std::uint64_t mem_total(core::SysfsReader& in, const Machine& m) {
  if (auto meminfo = in.fs().read_file("/proc/meminfo")) {
    for (const auto& line : units::split(*meminfo, '\n')) {
      if (line.rfind("MemTotal:", 0) == 0) {
        auto kb = units::parse_int(units::trim(line.substr(9, line.find("kB") - 9)));
        if (kb && *kb > 0) {
          return static_cast<std::uint64_t>(*kb) * 1024;
        }
      }
    }
  }
  std::uint64_t total = 0;
  for (const auto& n : m.numa_nodes) {
    if (!n.memory_known) {
      return 0;
    }
    total += n.memory_bytes;
  }
  return total;
}

void read_shm(core::SysfsReader& in, Machine& m) {
  const std::string path = "/proc/self/mountinfo";
  auto text = in.fs().read_file(path);
  if (!text) {
    return;
  }
  auto mounts = parse_mountinfo(*text);
  if (!mounts) {  // read_data_dir reports the table's problems when --data-dir asks for it
    return;
  }
  const Mount* shm = nullptr;
  for (const auto& mount : *mounts) {
    if (mount.mount_point == "/dev/shm") {
      shm = &mount;  // the last one stacked there is the one processes see
    }
  }
  if (shm == nullptr || shm->fs_type != "tmpfs") {
    return;
  }
  const std::uint64_t total = mem_total(in, m);
  for (const auto& option : units::split(shm->super_options, ',')) {
    if (option.rfind("size=", 0) == 0) {
      m.limits.shm_bytes = tmpfs_size(std::string_view(option).substr(5), total);
      m.limits.shm_evidence = units::escape(option);
      return;
    }
  }
  if (total > 0) {
    // mm/shmem.c: a tmpfs mounted without size= may hold half of RAM, and the kernel then
    // leaves size= out of the options it shows.
    m.limits.shm_bytes = total / 2;
    m.limits.shm_evidence =
        fmt::format("no size= option ({}): half of MemTotal {}", units::escape(shm->super_options),
                    units::format_bytes(total));
  }
}

void read_limits(core::SysfsReader& in, Machine& m) {
  HostLimits& l = m.limits;
  l.rmem_max = in.integer("/proc/sys/net/core/rmem_max");
  l.wmem_max = in.integer("/proc/sys/net/core/wmem_max");
  l.tcp_rmem_max = tcp_buffer_max(in, "/proc/sys/net/ipv4/tcp_rmem", l.tcp_rmem_text);
  l.tcp_wmem_max = tcp_buffer_max(in, "/proc/sys/net/ipv4/tcp_wmem", l.tcp_wmem_text);
  read_memlock(in, l);
  read_shm(in, m);
}

}  // namespace

Result<Machine> discover_sysfs(const core::Fs& fs) {
  if (!fs.exists("/sys")) {
    return fail(Errc::kNotFound, "no /sys in the sysroot (expected a tree holding sys/ and proc/)");
  }
  Machine m;
  core::SysfsReader in(fs, m.input_issues);
  read_system(in, m);
  read_container(in, m);
  detail::read_software(in, m);
  read_numa(in, m);
  read_pci(in, m);
  read_net(in, m);
  read_infiniband(in, m);
  read_nic_irqs(in, m);
  read_limits(in, m);
  read_nvme(in, m);
  read_iommu(in, m);
  read_gpudirect(in, m);
  return m;
}

}  // namespace acco::topo
