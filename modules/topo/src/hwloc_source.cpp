#include "acco/topo/hwloc_source.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <hwloc.h>
#include <hwloc/distances.h>
#include <hwloc/export.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acco/core/units.hpp"
#include "acco/topo/sysfs_source.hpp"

// hwloc describes each object kind in a C union (obj->attr->pcidev, ->bridge, ->cache, ...), read
// here as its documentation says, by the object's type.
// NOLINTBEGIN(cppcoreguidelines-pro-type-union-access)
namespace acco::topo {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using Topology = std::unique_ptr<hwloc_topology, TopologyDeleter>;

// hwloc reads its file-system root from the environment only (HWLOC_FSROOT; 2.x has no call for
// it), so a load from a sysroot sets it for the load and puts back what was there. One load at a
// time: the environment is the process's.
std::mutex& environment_mutex() {
  static std::mutex m;
  return m;
}

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) {
      old_ = std::string(old);
    }
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ScopedEnv(ScopedEnv&&) = delete;
  ScopedEnv& operator=(ScopedEnv&&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string pci_address(unsigned domain, unsigned bus, unsigned dev, unsigned func) {
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, dev, func);
}

std::vector<int> bitmap_indexes(hwloc_const_bitmap_t set) {
  std::vector<int> out;
  if (set == nullptr || hwloc_bitmap_weight(set) < 0) {
    return out;  // empty, or infinite (never for a finished topology)
  }
  for (int i = hwloc_bitmap_first(set); i >= 0; i = hwloc_bitmap_next(set, i)) {
    out.push_back(i);
  }
  return out;
}

int count_of(hwloc_topology_t t, hwloc_obj_type_t type) {
  return std::max(hwloc_get_nbobjs_by_type(t, type), 0);
}

std::vector<CacheLevel> caches_of(hwloc_topology_t t) {
  struct Level {
    hwloc_obj_type_t type;
    int level;
  };
  // Data (or unified) caches, with each level's instruction cache after its data cache.
  constexpr Level kLevels[] = {{HWLOC_OBJ_L1CACHE, 1}, {HWLOC_OBJ_L1ICACHE, 1},
                               {HWLOC_OBJ_L2CACHE, 2}, {HWLOC_OBJ_L2ICACHE, 2},
                               {HWLOC_OBJ_L3CACHE, 3}, {HWLOC_OBJ_L3ICACHE, 3},
                               {HWLOC_OBJ_L4CACHE, 4}, {HWLOC_OBJ_L5CACHE, 5}};
  std::vector<CacheLevel> out;
  for (const auto& [type, level] : kLevels) {
    const int n = count_of(t, type);
    if (n == 0) {
      continue;
    }
    hwloc_obj_t first = hwloc_get_obj_by_type(t, type, 0);
    const auto kind = first->attr->cache.type;
    out.push_back({fmt::format("L{}{}", level,
                               kind == HWLOC_OBJ_CACHE_DATA          ? "d"
                               : kind == HWLOC_OBJ_CACHE_INSTRUCTION ? "i"
                                                                     : ""),
                   first->attr->cache.size, n});
  }
  return out;
}

// The package above an object (memory objects hang off their locality's object), as the OS
// numbers it; its logical index when the OS gave none (hwloc's "P#?"); -1 when none is above.
int package_above(hwloc_topology_t t, hwloc_obj_t obj) {
  hwloc_obj_t package = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, obj);
  if (package == nullptr) {
    return -1;
  }
  return package->os_index == HWLOC_UNKNOWN_INDEX ? static_cast<int>(package->logical_index)
                                                  : static_cast<int>(package->os_index);
}

std::vector<HwlocPackage> packages_of(hwloc_topology_t t) {
  std::vector<HwlocPackage> packages;
  const int n = count_of(t, HWLOC_OBJ_PACKAGE);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t obj = hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, static_cast<unsigned>(i));
    packages.push_back({obj->os_index == HWLOC_UNKNOWN_INDEX ? static_cast<int>(obj->logical_index)
                                                             : static_cast<int>(obj->os_index),
                        bitmap_indexes(obj->cpuset)});
  }
  std::sort(packages.begin(), packages.end(),
            [](const HwlocPackage& a, const HwlocPackage& b) { return a.id < b.id; });
  return packages;
}

std::vector<NumaNode> nodes_of(hwloc_topology_t t) {
  std::vector<NumaNode> nodes;
  const int n = count_of(t, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t obj = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    NumaNode node;
    node.id = obj->os_index == HWLOC_UNKNOWN_INDEX ? static_cast<int>(obj->logical_index)
                                                   : static_cast<int>(obj->os_index);
    node.cpus = bitmap_indexes(obj->cpuset);
    node.memory_bytes = obj->attr->numanode.local_memory;
    node.package = node.cpus.empty() ? -1 : package_above(t, obj);
    nodes.push_back(std::move(node));
  }
  // NUMA latencies from the firmware (ACPI SLIT), in node-id order as the kernel lists them.
  unsigned nr = 1;
  hwloc_distances_s* distances = nullptr;
  if (hwloc_distances_get_by_type(t, HWLOC_OBJ_NUMANODE, &nr, &distances,
                                  HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) == 0 &&
      nr >= 1 && distances != nullptr) {
    std::map<int, std::size_t> index;  // node id -> row in the matrix
    for (unsigned k = 0; k < distances->nbobjs; ++k) {
      index[static_cast<int>(distances->objs[k]->os_index)] = k;
    }
    for (auto& node : nodes) {
      const auto row = index.find(node.id);
      if (row == index.end()) {
        continue;
      }
      for (const auto& [id, column] : index) {
        node.distances.push_back(
            static_cast<int>(distances->values[row->second * distances->nbobjs + column]));
      }
    }
    hwloc_distances_release(t, distances);
  }
  std::sort(nodes.begin(), nodes.end(),
            [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });
  return nodes;
}

// The host bridge's root bus ("pci0000:40") above a PCI object, empty when there is none.
std::string root_bus_of(hwloc_obj_t obj) {
  for (hwloc_obj_t up = obj->parent; up != nullptr; up = up->parent) {
    if (up->type == HWLOC_OBJ_BRIDGE && up->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST) {
      return fmt::format("pci{:04x}:{:02x}", up->attr->bridge.downstream.pci.domain,
                         up->attr->bridge.downstream.pci.secondary_bus);
    }
  }
  return {};
}

HwlocPci pci_of(hwloc_topology_t t, hwloc_obj_t obj,
                const hwloc_obj_attr_u::hwloc_pcidev_attr_s& a) {
  HwlocPci p;
  p.address = pci_address(a.domain, a.bus, a.dev, a.func);
  p.class_id = a.class_id;
  p.vendor_id = a.vendor_id;
  p.device_id = a.device_id;
  p.subsystem_vendor_id = a.subvendor_id;
  p.subsystem_device_id = a.subdevice_id;
  p.link_bytes_per_second = static_cast<double>(a.linkspeed) * 1e9;
  hwloc_obj_t up = obj->parent;
  if (up != nullptr && up->type == HWLOC_OBJ_BRIDGE &&
      up->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI) {
    const auto& u = up->attr->bridge.upstream.pci;
    p.parent = pci_address(u.domain, u.bus, u.dev, u.func);
  }
  p.root_bus = root_bus_of(obj);
  hwloc_obj_t local = hwloc_get_non_io_ancestor_obj(t, obj);
  if (local != nullptr && local->nodeset != nullptr && hwloc_bitmap_weight(local->nodeset) == 1) {
    p.numa_node = hwloc_bitmap_first(local->nodeset);
  }
  if (local != nullptr) {
    p.local_cpus = bitmap_indexes(local->cpuset);
  }
  for (hwloc_obj_t child = obj->io_first_child; child != nullptr; child = child->next_sibling) {
    if (child->type != HWLOC_OBJ_OS_DEVICE || child->name == nullptr) {
      continue;
    }
    if (child->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK) {
      p.net_interfaces.emplace_back(child->name);
    } else if (child->attr->osdev.type == HWLOC_OBJ_OSDEV_BLOCK) {
      p.block_devices.emplace_back(child->name);
    }
  }
  return p;
}

std::vector<HwlocPci> pci_of(hwloc_topology_t t) {
  std::vector<HwlocPci> out;
  for (hwloc_obj_t obj = hwloc_get_next_pcidev(t, nullptr); obj != nullptr;
       obj = hwloc_get_next_pcidev(t, obj)) {
    out.push_back(pci_of(t, obj, obj->attr->pcidev));
  }
  for (hwloc_obj_t obj = hwloc_get_next_bridge(t, nullptr); obj != nullptr;
       obj = hwloc_get_next_bridge(t, obj)) {
    if (obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI) {
      HwlocPci p = pci_of(t, obj, obj->attr->bridge.upstream.pci);
      p.bridge = true;
      out.push_back(std::move(p));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const HwlocPci& a, const HwlocPci& b) { return a.address < b.address; });
  return out;
}

// The release acco was built with (the library is the same package's); the API version the
// library reports names the API, not the release (2.8.0 for hwloc 2.9.0).
std::string version_text() {
  return HWLOC_VERSION;
}

std::string describe_input(const HwlocInput& input) {
  switch (input.kind) {
    case HwlocInputKind::kFsRoot:
      return input.value == "/" ? "Linux sysfs" : "Linux sysfs under " + input.value;
    case HwlocInputKind::kXmlFile:
      return "hwloc XML " + input.value;
    case HwlocInputKind::kXmlText:
      return "the snapshot's hwloc XML";
  }
  return {};
}

// hwloc trusts an XML export: some malformed ones crash hwloc_topology_load (hwloc 2.9: a PU
// whose complete_cpuset attribute is misspelt ends in a SEGV in hwloc_bitmap_compare_first;
// fuzz/corpus/hwloc_xml/crash-pu-without-complete-cpuset.xml, found by fuzz_hwloc_xml). An XML
// from outside is therefore loaded first in a child process, on a copy of the configured
// topology; only when the child loads it is it loaded here. kInvalidArgument naming the input
// when the child refuses it, dies or takes over 30 s; a machine that cannot fork loads it here as
// before. A refusal is the child's alone because hwloc 2.9 leaks what it built on some of them
// (fuzz/corpus/hwloc_xml/leak-on-refusal.xml).
Status loads_in_a_child(hwloc_topology_t configured, const std::string& what) {
  constexpr int kLoaded = 0;
  constexpr int kRefused = 3;
  const pid_t pid = ::fork();
  if (pid < 0) {
    return {};
  }
  if (pid == 0) {
    // No core file, and nothing on the terminal (a sanitizer's report of the crash included:
    // under ASan a SEGV ends the child with exit 1 instead of the signal).
    const rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    if (const int null =
            ::open("/dev/null", O_WRONLY);  // NOLINT(cppcoreguidelines-pro-type-vararg)
        null >= 0) {
      ::dup2(null, STDERR_FILENO);
    }
    ::_exit(hwloc_topology_load(configured) == 0 ? kLoaded : kRefused);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  int status = 0;
  auto pause = std::chrono::microseconds(200);
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return fail(
          Errc::kInvalidArgument,
          fmt::format("{}: hwloc {} did not finish loading it in 30 s", what, version_text()));
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20'000));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == kLoaded) {
    return {};
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == kRefused) {
    // Not loaded here: hwloc 2.9 leaks the objects it made on some of its refusals.
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: not an XML export that hwloc {} can load", what, version_text()));
  }
  return fail(Errc::kInvalidArgument,
              fmt::format("{}: not an XML export that hwloc {} can load (it crashed on it: {})",
                          what, version_text(),
                          WIFSIGNALED(status) ? std::string(::strsignal(WTERMSIG(status)))
                                              : fmt::format("exit {}", WEXITSTATUS(status))));
}

Result<HwlocView> load(const HwlocInput& input) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    return fail(Errc::kUnavailable, "hwloc: cannot create a topology");
  }
  const Topology topology(raw);
  // The whole machine, not only what this process may use (a cgroup or cpuset would hide CPUs).
  hwloc_topology_set_flags(raw, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_ALL);
  hwloc_topology_set_icache_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_ALL);
  // hwloc's GPU plugins would open vendor libraries of this machine; libpciaccess ("pci") reads
  // this machine's PCI bus whatever the root; CPUID is this machine's CPU.
  for (const char* component : {"cuda", "nvml", "opencl", "rsmi", "levelzero", "gl", "pci"}) {
    hwloc_topology_set_components(raw, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, component);
  }
  if (input.kind != HwlocInputKind::kFsRoot || input.value != "/") {
    hwloc_topology_set_components(raw, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
  }
  const std::string what = describe_input(input);
  int loaded = -1;
  switch (input.kind) {
    case HwlocInputKind::kFsRoot: {
      if (input.value == "/") {
        loaded = hwloc_topology_load(raw);
      } else {
        const ScopedEnv root("HWLOC_FSROOT", input.value);
        loaded = hwloc_topology_load(raw);
      }
      if (loaded != 0) {
        return fail(Errc::kUnavailable,
                    fmt::format("hwloc could not read {}: {}", what, std::strerror(errno)));
      }
      break;
    }
    case HwlocInputKind::kXmlFile:
    case HwlocInputKind::kXmlText: {
      const int set = input.kind == HwlocInputKind::kXmlFile
                          ? hwloc_topology_set_xml(raw, input.value.c_str())
                          : hwloc_topology_set_xmlbuffer(raw, input.value.c_str(),
                                                         static_cast<int>(input.value.size() + 1));
      if (set == 0) {
        ACCO_RETURN_IF_ERROR(loads_in_a_child(raw, what));
      }
      if (set != 0 || hwloc_topology_load(raw) != 0) {
        return fail(
            Errc::kInvalidArgument,
            fmt::format("{}: not an XML export that hwloc {} can load", what, version_text()));
      }
      break;
    }
  }

  hwloc_obj_t root = hwloc_get_root_obj(raw);
  if (input.kind == HwlocInputKind::kFsRoot) {
    // When hwloc's Linux backend finds no CPU topology files it falls back to counting the CPUs
    // of the machine running acco, which would be reported as the sysroot's.
    const char* backend = hwloc_obj_get_info_by_name(root, "Backend");
    if (backend == nullptr || std::strstr(backend, "Linux") == nullptr) {
      return fail(Errc::kUnavailable,
                  fmt::format("hwloc found no CPU topology in {} "
                              "(sys/devices/system/cpu/cpuN/topology/ is missing)",
                              what));
    }
  }
  HwlocView view;
  // Where it was read from is the report's origin already; a replay reads the same.
  view.cpu.source = "hwloc " + version_text();
  view.cpu.packages = count_of(raw, HWLOC_OBJ_PACKAGE);
  view.cpu.cores = count_of(raw, HWLOC_OBJ_CORE);
  view.cpu.pus = count_of(raw, HWLOC_OBJ_PU);
  view.cpu.numa_nodes = count_of(raw, HWLOC_OBJ_NUMANODE);
  view.cpu.caches = caches_of(raw);
  view.numa_nodes = nodes_of(raw);
  view.packages = packages_of(raw);
  view.pci = pci_of(raw);
  for (const auto& [name, out] :
       {std::pair{"HostName", &view.hostname}, std::pair{"OSRelease", &view.kernel}}) {
    if (const char* value = hwloc_obj_get_info_by_name(root, name)) {
      *out = value;
    }
  }
  char* xml = nullptr;
  int length = 0;
  if (input.export_xml && hwloc_topology_export_xmlbuffer(raw, &xml, &length, 0) == 0 &&
      xml != nullptr) {
    view.xml.assign(xml, length > 0 ? static_cast<std::size_t>(length - 1) : 0);
    hwloc_free_xmlbuffer(raw, xml);
  }
  return view;
}

std::string cpus_text(const std::vector<int>& cpus) {
  return cpus.empty() ? std::string("none") : units::format_cpulist(cpus);
}

}  // namespace

Result<HwlocView> discover_hwloc(const HwlocInput& input) {
  if (input.kind == HwlocInputKind::kXmlFile) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(input.value, ec)) {
      return fail(Errc::kNotFound, fmt::format("hwloc XML {}: no such file", input.value));
    }
  }
  const std::lock_guard lock(environment_mutex());
  // hwloc prints what it takes for firmware bugs to stderr; acco reports them as findings. The
  // setting is read once per process, so it stays (unless the user chose one).
  ::setenv("HWLOC_HIDE_ERRORS", "2", 0);
  return load(input);
}

void merge_hwloc(Machine& machine, const HwlocView& view) {
  CpuTopology& cpu = machine.cpu;
  std::vector<std::string> disagreements = std::move(cpu.disagreements);
  cpu = view.cpu;
  cpu.disagreements = std::move(disagreements);

  std::map<int, const NumaNode*> hwloc_nodes;
  for (const auto& n : view.numa_nodes) {
    hwloc_nodes[n.id] = &n;
  }
  // The kernel's packages (each online CPU's physical_package_id) against hwloc's: hwloc drops
  // or merges a package whose CPUs' package_cpus/core_siblings conflict, and then its nodes'
  // packages are not the kernel's. The kernel's reading stays, and the difference is said.
  std::vector<int> hwloc_package_ids;
  for (const auto& p : view.packages) {
    hwloc_package_ids.push_back(p.id);
  }
  const bool packages_agree = machine.packages.empty() || hwloc_package_ids == machine.packages;
  if (!packages_agree) {
    std::vector<std::string> kept;
    for (const auto& p : view.packages) {
      kept.push_back(fmt::format("{} (CPUs {})", p.id, cpus_text(p.cpus)));
    }
    cpu.disagreements.push_back(fmt::format(
        "the kernel's physical_package_id names {} package(s) ({}), hwloc keeps {}{}{} (hwloc "
        "drops or merges packages whose CPUs' package_cpus or core_siblings conflict); sockets "
        "here follow the kernel",
        machine.packages.size(), units::format_cpulist(machine.packages), view.packages.size(),
        kept.empty() ? "" : ": ", fmt::join(kept, ", ")));
  }
  std::set<int> sysfs_ids;
  for (auto& node : machine.numa_nodes) {
    sysfs_ids.insert(node.id);
    const auto it = hwloc_nodes.find(node.id);
    if (it == hwloc_nodes.end()) {
      cpu.disagreements.push_back(fmt::format(
          "sysfs lists NUMA node {} (CPUs {}), which hwloc does not keep as a node of its own "
          "(hwloc merges nodes whose CPUs and memory it cannot tell apart)",
          node.id, cpus_text(node.cpus)));
      continue;
    }
    const NumaNode& h = *it->second;
    if (node.cpus.empty() && !node.cpus_source.empty()) {
      // hwloc gives a node without CPUs (memory-only, or empty) the CPUs of the object it hangs
      // below (from HMAT's initiators or the nearest node by distance): where its memory is
      // near, not CPUs of its own, and no socket of its own.
      node.near_cpus = h.cpus;
      continue;
    }
    if (node.cpus.empty() && node.cpus_source.empty() && !h.cpus.empty()) {
      node.cpus = h.cpus;  // acco could not read the node's CPUs (an input issue says why)
    } else if (h.cpus != node.cpus) {
      cpu.disagreements.push_back(
          fmt::format("NUMA node {}: sysfs lists CPUs {}, hwloc {} (hwloc leaves out CPUs it "
                      "finds in no package or in another node)",
                      node.id, cpus_text(node.cpus), cpus_text(h.cpus)));
    }
    if (packages_agree && h.package != node.package && h.package >= 0) {
      node.package = h.package;  // hwloc reads every CPU's package, not the first one's
    }
  }
  for (const auto& n : view.numa_nodes) {
    if (!sysfs_ids.contains(n.id)) {
      cpu.disagreements.push_back(fmt::format(
          "hwloc finds NUMA node {} (CPUs {}) that sysfs does not list", n.id, cpus_text(n.cpus)));
    }
  }

  std::map<std::string, const HwlocPci*> by_address;
  for (const auto& p : view.pci) {
    by_address[p.address] = &p;
  }
  std::vector<std::string> wide_domain;  // hwloc built with 16-bit PCI domains skips these
  std::vector<std::string> unlisted;     // in no /sys/bus/pci/devices entry, which hwloc reads
  for (auto& d : machine.pci_devices) {
    const auto it = by_address.find(d.address);
    if (it == by_address.end()) {
      (d.address.size() > 12 ? wide_domain : unlisted).push_back(d.address);
      continue;
    }
    const int h = it->second->numa_node;
    if (d.numa_node < 0 && h >= 0 && machine.numa_nodes.size() > 1) {
      d.numa_node = h;  // hwloc placed it from its local CPUs
    } else if (d.numa_node >= 0 && h >= 0 && d.numa_node != h) {
      cpu.disagreements.push_back(
          fmt::format("{}: numa_node says node {}, hwloc places it at node {} from its local CPUs",
                      d.address, d.numa_node, h));
    }
  }
  if (!wide_domain.empty()) {
    cpu.disagreements.push_back(
        fmt::format("hwloc does not list {} PCI function(s) in 32-bit PCI domains ({}): this "
                    "hwloc is built with 16-bit domains only",
                    wide_domain.size(), fmt::join(wide_domain, ", ")));
  }
  if (!unlisted.empty()) {
    cpu.disagreements.push_back(
        fmt::format("hwloc does not list {} PCI function(s) ({}): hwloc reads "
                    "/sys/bus/pci/devices, acco also walks /sys/devices/pci*",
                    unlisted.size(), fmt::join(unlisted, ", ")));
  }
}

Machine machine_from_hwloc(const HwlocView& view, std::string origin) {
  Machine m;
  m.origin = std::move(origin);
  m.sysfs_read = false;
  m.hostname = view.hostname;
  m.kernel = view.kernel;
  m.cpu = view.cpu;
  m.numa_nodes = view.numa_nodes;
  if (m.numa_nodes.size() == 1 && m.numa_nodes.front().distances.empty()) {
    m.numa_nodes.front().distances = {10};  // the kernel's distance to itself; hwloc keeps none
  }
  for (const auto& p : view.pci) {
    PciDevice d;
    d.address = p.address;
    d.parent = p.parent;
    d.root_bus = p.root_bus;
    // hwloc keeps class and subclass; an NVM Express controller (0x0108) is taken as NVMe
    // (programming interface 0x02), the only kind GPU servers carry.
    d.class_code = static_cast<std::uint32_t>(p.class_id) << 8 | (p.class_id == 0x0108 ? 2U : 0U);
    d.vendor_id = p.vendor_id;
    d.device_id = p.device_id;
    d.subsystem_vendor_id = p.subsystem_vendor_id;
    d.subsystem_device_id = p.subsystem_device_id;
    d.kind = p.bridge ? DeviceKind::kBridge : classify_pci(d.class_code, d.vendor_id);
    d.numa_node = p.numa_node;
    d.local_cpus = p.local_cpus;
    d.reported_bytes_per_second = p.link_bytes_per_second;
    m.pci_devices.push_back(std::move(d));
    for (const auto& name : p.net_interfaces) {
      m.net_interfaces.push_back({name, p.address, std::nullopt, "unknown"});
    }
    if (m.pci_devices.back().kind == DeviceKind::kNvme && !p.block_devices.empty()) {
      // Namespaces are nvme<C>n<N>: the controller is what precedes the namespace's "n".
      const std::string& first = p.block_devices.front();
      const auto n = first.find('n', 4);
      NvmeController c;
      c.name = first.substr(0, n);
      c.pci = p.address;
      c.namespaces = p.block_devices;
      m.nvme_controllers.push_back(std::move(c));
    }
  }
  return m;
}

}  // namespace acco::topo
// NOLINTEND(cppcoreguidelines-pro-type-union-access)
