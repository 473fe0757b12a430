#include "sysroot_builder.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

namespace acco::testing {

namespace fs = std::filesystem;

namespace {

void write_bytes(const fs::path& file, std::string_view content) {
  fs::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  if (!out) {
    throw std::runtime_error(fmt::format("cannot write {}", file.string()));
  }
}

// sysfs attributes are one value and a newline.
void write_attr(const fs::path& file, std::string_view value) {
  write_bytes(file, fmt::format("{}\n", value));
}

bool is_within(const fs::path& path, const fs::path& dir) {
  const auto rel = path.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

// Both paths absolute. The link holds a relative target built as sysfs builds it
// (fs/sysfs/symlink.c): up to the nearest strict ancestor of the target that also contains the
// link, then down. So a netdev's `device` reads "../../../0000:19:00.0", not "../..".
void make_link(const fs::path& at, const fs::path& target) {
  const fs::path from = at.parent_path();
  fs::path base = target.parent_path();
  while (!is_within(from, base)) {
    base = base.parent_path();
  }
  fs::path relative;
  for (const auto& part : from.lexically_relative(base)) {
    if (part != ".") {
      relative /= "..";
    }
  }
  relative /= target.lexically_relative(base);
  fs::create_directories(from);
  std::error_code ignored;
  fs::remove(at, ignored);
  fs::create_symlink(relative, at);
}

bool is_hex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

int parse_hex(std::string_view s) {
  return static_cast<int>(std::stoll(std::string(s), nullptr, 16));
}

// "0000:41:00.0": domain (4 hex digits, or up to 8 for the domains VMD and Hyper-V create:
// "10000:00:02.0"), bus, device (up to 0x1f), function (up to 7), lower-case hex.
void check_bdf(std::string_view bdf) {
  const std::size_t n = bdf.size();
  const bool ok = n >= 12 && n <= 16 && bdf[n - 8] == ':' && bdf[n - 5] == ':' &&
                  bdf[n - 2] == '.' && is_hex(bdf.substr(0, n - 8)) &&
                  is_hex(bdf.substr(n - 7, 2)) && is_hex(bdf.substr(n - 4, 2)) &&
                  parse_hex(bdf.substr(n - 4, 2)) <= 0x1f && bdf[n - 1] >= '0' && bdf[n - 1] <= '7';
  if (!ok) {
    throw std::invalid_argument(fmt::format("'{}' is not a PCI address like 0000:41:00.0", bdf));
  }
}

// "0000:41" of "0000:41:00.0".
std::string bus_of(std::string_view bdf) {
  return std::string(bdf.substr(0, bdf.size() - 5));
}

// "0000" of "0000:41" or "0000:41:00.0".
std::string_view domain_of(std::string_view bus_or_bdf) {
  return bus_or_bdf.substr(0, bus_or_bdf.find(':'));
}

int bus_number(std::string_view bus_or_bdf) {
  return parse_hex(bus_or_bdf.substr(bus_or_bdf.find(':') + 1, 2));
}

std::vector<int> parse_cpu_list(std::string_view list) {
  std::vector<int> cpus;
  std::size_t pos = 0;
  while (pos < list.size()) {
    const std::size_t comma = std::min(list.find(',', pos), list.size());
    const std::string_view range = list.substr(pos, comma - pos);
    const std::size_t dash = range.find('-');
    try {
      const int first = std::stoi(std::string(range.substr(0, dash)));
      const int last =
          dash == std::string_view::npos ? first : std::stoi(std::string(range.substr(dash + 1)));
      for (int cpu = first; cpu <= last; ++cpu) {
        cpus.push_back(cpu);
      }
    } catch (const std::logic_error&) {
      throw std::invalid_argument(fmt::format("'{}' is not a CPU list like 0-55,112-167", list));
    }
    pos = comma + 1;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

// The kernel's "%*pbl" list format: ascending ranges "0-55,112-167".
std::string format_cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) {
      ++j;
    }
    out += out.empty() ? "" : ",";
    out += i == j ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

std::string format_ints(const std::vector<int>& values, std::string_view sep) {
  std::string out;
  for (int v : values) {
    out += out.empty() ? fmt::format("{}", v) : fmt::format("{}{}", sep, v);
  }
  return out;
}

Link min_link(Link a, Link b) {
  return {std::min(a.gen, b.gen), std::min(a.width, b.width)};
}

void put16(std::vector<std::uint8_t>& c, std::size_t at, unsigned value) {
  if (at + 2 <= c.size()) {
    c[at] = static_cast<std::uint8_t>(value & 0xff);
    c[at + 1] = static_cast<std::uint8_t>((value >> 8) & 0xff);
  }
}

void put32(std::vector<std::uint8_t>& c, std::size_t at, std::uint32_t value) {
  put16(c, at, value & 0xffff);
  put16(c, at + 2, value >> 16);
}

void put8(std::vector<std::uint8_t>& c, std::size_t at, unsigned value) {
  if (at < c.size()) {
    c[at] = static_cast<std::uint8_t>(value & 0xff);
  }
}

constexpr std::array<std::string_view, 7> kLinkSpeeds = {
    "Unknown",        "2.5 GT/s PCIe",  "5.0 GT/s PCIe", "8.0 GT/s PCIe",
    "16.0 GT/s PCIe", "32.0 GT/s PCIe", "64.0 GT/s PCIe"};

void check_gen(int gen) {
  if (gen < 0 || gen >= static_cast<int>(kLinkSpeeds.size())) {
    throw std::invalid_argument(fmt::format("PCIe generation {} does not exist", gen));
  }
}

bool is_bridge(const FunctionSpec& spec) {
  return (spec.ids.class_code >> 8) == 0x0604;
}

// PCI Express capability layout (PCIe base spec 7.5.3): the capability sits at 0x40 here, as
// on most devices; the extended list starts at 0x100.
constexpr std::size_t kPcieCap = 0x40;
constexpr std::size_t kExtCap = 0x100;
constexpr std::uint32_t kAcsCapId = 0x000d;

}  // namespace

std::string link_speed_text(int gen) {
  check_gen(gen);
  return std::string(kLinkSpeeds[static_cast<std::size_t>(gen)]);
}

// ---- PciFunction ----

fs::path PciFunction::dir() const {
  return builder_->at(bdf_).dir;
}

PciFunction PciFunction::add(std::string_view bdf, const FunctionSpec& spec) const {
  const auto& self = builder_->at(bdf_);
  if (!is_bridge(self.spec)) {
    throw std::invalid_argument(
        fmt::format("{} is not a bridge (class {:#08x}), so {} cannot sit below it", bdf_,
                    self.spec.ids.class_code, bdf));
  }
  return builder_->add_function(self.root_bus, bdf_, bdf, spec);
}

PciFunction& PciFunction::max_link(Link link) {
  check_gen(link.gen);
  builder_->at(bdf_).spec.max_link = link;
  builder_->refresh_around(bdf_);
  return *this;
}

PciFunction& PciFunction::current_link(Link link) {
  check_gen(link.gen);
  auto& self = builder_->at(bdf_);
  const bool faces_down = self.role == SysrootBuilder::Role::kRootPort ||
                          self.role == SysrootBuilder::Role::kDownstreamPort;
  if (faces_down) {
    if (self.children.empty()) {
      throw std::invalid_argument(
          fmt::format("{} has no device below it, so no trained link to set", bdf_));
    }
    builder_->at(self.children.front()).link_override = link;
    builder_->refresh_around(self.children.front());
  } else {
    self.link_override = link;
    builder_->refresh_around(bdf_);
  }
  return *this;
}

PciFunction& PciFunction::slot(std::string_view name) {
  write_attr(builder_->root_ / "sys/bus/pci/slots" / name / "address", bdf_.substr(0, 10));
  return *this;
}

PciFunction& PciFunction::full_config(std::optional<std::uint16_t> acs_control) {
  auto& self = builder_->at(bdf_);
  self.full_config = true;
  self.acs_control = acs_control;
  builder_->refresh(bdf_);
  return *this;
}

PciFunction& PciFunction::same_iommu_group_as(const PciFunction& other) {
  const auto group = builder_->at(other.bdf_).iommu_group;
  if (!group) {
    throw std::invalid_argument(fmt::format("{} is in no IOMMU group", other.bdf_));
  }
  builder_->join_iommu_group(builder_->at(bdf_), *group);
  return *this;
}

PciFunction& PciFunction::netdev(std::string_view name, const NetSpec& spec) {
  const fs::path fn = dir();
  builder_->write_netdev(fn / "net", name, spec, fn);
  return *this;
}

PciFunction& PciFunction::virtio(std::string_view child) {
  // virtio-pci modern devices are 0x1040 + the virtio device id (virtio spec 4.1.2.1).
  const auto& self = builder_->at(bdf_);
  const fs::path child_dir = self.dir / child;
  write_attr(child_dir / "vendor", "0x1af4");
  write_attr(child_dir / "device", fmt::format("{:#06x}", self.spec.ids.device - 0x1040));
  return *this;
}

PciFunction& PciFunction::virtio_netdev(std::string_view child, std::string_view name,
                                        const NetSpec& spec) {
  virtio(child);
  const fs::path child_dir = dir() / child;
  builder_->write_netdev(child_dir / "net", name, spec, child_dir);
  return *this;
}

PciFunction& PciFunction::infiniband(std::string_view name, const IbSpec& spec) {
  const fs::path fn = dir();
  const fs::path ib = fn / "infiniband" / name;
  write_attr(ib / "node_guid", spec.node_guid);
  write_attr(ib / "fw_ver", spec.fw_ver);
  write_attr(ib / "node_type", "1: CA");
  make_link(ib / "device", fn);
  for (std::size_t i = 0; i < spec.ports.size(); ++i) {
    const fs::path port = ib / "ports" / fmt::format("{}", i + 1);
    write_attr(port / "state", spec.ports[i].state);
    write_attr(port / "phys_state", spec.ports[i].phys_state);
    write_attr(port / "rate", spec.ports[i].rate);
    write_attr(port / "link_layer", spec.ports[i].link_layer);
    for (std::size_t g = 0; g < spec.ports[i].gid_types.size(); ++g) {
      const auto& type = spec.ports[i].gid_types[g];
      const fs::path file = port / "gid_attrs/types" / fmt::format("{}", g);
      if (type.empty()) {
        write_bytes(file, "");
      } else {
        write_attr(file, type);
      }
    }
    if (!spec.ports[i].ndev.empty()) {
      write_attr(port / "gid_attrs/ndevs/0", spec.ports[i].ndev);
    }
  }
  make_link(builder_->root_ / "sys/class/infiniband" / name, ib);
  return *this;
}

PciFunction& PciFunction::msi_irqs(int first_irq, int count, std::string_view affinity) {
  const fs::path fn = dir();
  for (int irq = first_irq; irq < first_irq + count; ++irq) {
    write_attr(fn / "msi_irqs" / fmt::format("{}", irq), "msix");
    write_attr(builder_->root_ / "proc/irq" / fmt::format("{}", irq) / "smp_affinity_list",
               affinity);
  }
  return *this;
}

PciFunction& PciFunction::nvme(std::string_view name, const NvmeSpec& spec) {
  const fs::path fn = dir();
  const fs::path ctrl = fn / "nvme" / name;
  write_attr(ctrl / "model", spec.model);
  write_attr(ctrl / "serial", spec.serial);
  write_attr(ctrl / "firmware_rev", spec.firmware_rev);
  write_attr(ctrl / "transport", "pcie");
  write_attr(ctrl / "address", bdf_);
  write_attr(ctrl / "state", spec.state);
  make_link(ctrl / "device", fn);
  const fs::path& root = builder_->root_;
  const auto block_device = [&](const std::string& dev_name, const fs::path& dev_dir) {
    const auto dev = fmt::format("259:{}", builder_->next_nvme_minor_++);
    write_attr(dev_dir / "dev", dev);
    make_link(root / "sys/dev/block" / dev, dev_dir);
    builder_->block_devices_[dev_name] = dev_dir;
  };
  const BlockQueueSpec& q = spec.queue;
  for (std::size_t i = 0; i < spec.namespace_sectors.size(); ++i) {
    const std::string ns = fmt::format("{}n{}", name, i + 1);
    const fs::path ns_dir = ctrl / ns;
    write_attr(ns_dir / "size", fmt::format("{}", spec.namespace_sectors[i]));
    block_device(ns, ns_dir);
    make_link(root / "sys/block" / ns, ns_dir);
    const fs::path queue = ns_dir / "queue";
    fs::create_directories(queue);
    const auto number = [&](const char* file, const auto& value) {
      if (value) {
        write_attr(queue / file, fmt::format("{}", *value));
      }
    };
    if (q.scheduler) {
      write_attr(queue / "scheduler", *q.scheduler);
    }
    number("nr_requests", q.nr_requests);
    number("max_sectors_kb", q.max_sectors_kb);
    number("max_hw_sectors_kb", q.max_hw_sectors_kb);
    number("read_ahead_kb", q.read_ahead_kb);
    number("logical_block_size", q.logical_block_size);
    number("io_poll", q.io_poll);
    if (q.hw_queues) {
      const int cpus = static_cast<int>(builder_->all_cpus().size());
      const int count = *q.hw_queues >= 0 ? *q.hw_queues : std::clamp(cpus, 1, 128);
      fs::create_directories(ns_dir / "mq");
      for (int k = 0; k < count; ++k) {
        fs::create_directories(ns_dir / "mq" / fmt::format("{}", k));
      }
    }
    for (int k = 1; k <= spec.partitions; ++k) {
      const std::string part = fmt::format("{}p{}", ns, k);
      write_attr(ns_dir / part / "partition", fmt::format("{}", k));
      block_device(part, ns_dir / part);
    }
  }
  make_link(root / "sys/class/nvme" / name, ctrl);
  const fs::path poll = root / "sys/module/nvme/parameters/poll_queues";
  if (!fs::exists(poll)) {
    write_attr(poll, "0");
  }
  return *this;
}

PciFunction& PciFunction::attr(std::string_view name, std::string_view value) {
  write_attr(dir() / name, value);
  return *this;
}

PciFunction& PciFunction::attr_bytes(std::string_view name, std::string_view content) {
  write_bytes(dir() / name, content);
  return *this;
}

PciFunction& PciFunction::remove_attr(std::string_view name) {
  fs::remove(dir() / name);
  return *this;
}

PciFunction& PciFunction::numa_node(int node) {
  auto& self = builder_->at(bdf_);
  if (node >= 0 && !builder_->nodes_.contains(node)) {
    throw std::invalid_argument(fmt::format("{}: NUMA node {} is not declared", bdf_, node));
  }
  self.numa_node = node;
  const std::vector<int> local = node >= 0 ? builder_->node_cpus_[node] : builder_->all_cpus();
  write_attr(self.dir / "numa_node", fmt::format("{}", node));
  write_attr(self.dir / "local_cpulist", format_cpu_list(local));
  write_attr(self.dir / "local_cpus", builder_->cpu_mask(local));
  return *this;
}

PciFunction& PciFunction::unlisted() {
  fs::remove(builder_->root_ / "sys/bus/pci/devices" / bdf_);
  return *this;
}

// ---- PciBus ----

PciFunction PciBus::add(std::string_view bdf, const FunctionSpec& spec) const {
  return builder_->add_function(name_, "", bdf, spec);
}

// ---- SysrootBuilder ----

SysrootBuilder::SysrootBuilder(fs::path root) : root_(fs::absolute(std::move(root))) {
  if (fs::exists(root_) && !fs::is_empty(root_)) {
    throw std::invalid_argument(fmt::format("{} is not empty", root_.string()));
  }
  for (const char* dir :
       {"sys/devices/system/node", "sys/devices/system/cpu", "sys/bus/pci/devices",
        "sys/bus/pci/drivers", "sys/bus/pci/slots", "sys/class/net", "sys/class/pci_bus",
        "sys/kernel/iommu_groups", "sys/module", "proc/sys/kernel"}) {
    fs::create_directories(root_ / dir);
  }
}

SysrootBuilder& SysrootBuilder::numa_node(const NumaNodeSpec& spec) {
  if (!functions_.empty()) {
    throw std::invalid_argument("declare NUMA nodes before PCI functions");
  }
  nodes_[spec.id] = spec;
  node_cpus_[spec.id] = parse_cpu_list(spec.cpus);

  // Masks are as wide as the CPU count, so every node's files change when a node is added.
  const fs::path node_dir = root_ / "sys/devices/system/node";
  std::vector<int> ids;
  for (const auto& [id, node] : nodes_) {
    ids.push_back(id);
    const fs::path dir = node_dir / fmt::format("node{}", id);
    const auto& cpus = node_cpus_[id];
    write_attr(dir / "cpulist", format_cpu_list(cpus));
    write_attr(dir / "cpumap", cpu_mask(cpus));
    write_attr(dir / "distance", format_ints(node.distances, " "));
    // drivers/base/node.c node_read_meminfo() format, first three lines.
    const std::uint64_t free_kib = node.memory_kib / 8 * 7;
    write_bytes(dir / "meminfo",
                fmt::format("Node {0} MemTotal:       {1:8} kB\n"
                            "Node {0} MemFree:        {2:8} kB\n"
                            "Node {0} MemUsed:        {3:8} kB\n",
                            id, node.memory_kib, free_kib, node.memory_kib - free_kib));
    if (!node.initiators.empty()) {
      const fs::path access = dir / "access0/initiators";
      fs::create_directories(access);
      for (const int initiator : node.initiators) {
        make_link(access / fmt::format("node{}", initiator),
                  node_dir / fmt::format("node{}", initiator));
      }
      if (node.read_bandwidth_mbps > 0) {
        write_attr(access / "read_bandwidth", fmt::format("{}", node.read_bandwidth_mbps));
        write_attr(access / "write_bandwidth", fmt::format("{}", node.read_bandwidth_mbps));
      }
      if (node.read_latency_ns > 0) {
        write_attr(access / "read_latency", fmt::format("{}", node.read_latency_ns));
        write_attr(access / "write_latency", fmt::format("{}", node.read_latency_ns));
      }
    }
    const int package = node.package >= 0 ? node.package : id;
    for (int cpu : cpus) {
      write_attr(
          root_ / fmt::format("sys/devices/system/cpu/cpu{}/topology/physical_package_id", cpu),
          fmt::format("{}", package));
    }
  }
  write_attr(node_dir / "online", format_cpu_list(ids));
  write_attr(node_dir / "possible", format_cpu_list(ids));
  // mm/memory-tiers.c: one memory_tierN directory per tier in use, its nodelist a node list.
  std::map<int, std::vector<int>> tiers;
  for (const auto& [id, node] : nodes_) {
    if (node.memory_tier >= 0) {
      tiers[node.memory_tier].push_back(id);
    }
  }
  for (const auto& [tier, members] : tiers) {
    write_attr(
        root_ / fmt::format("sys/devices/virtual/memory_tiering/memory_tier{}/nodelist", tier),
        format_cpu_list(members));
  }
  const std::string cpus = format_cpu_list(all_cpus());
  for (const char* file : {"online", "possible", "present"}) {
    write_attr(root_ / "sys/devices/system/cpu" / file, cpus);
  }
  return *this;
}

SysrootBuilder& SysrootBuilder::cpuinfo(const CpuInfoSpec& spec) {
  const std::vector<int> cpus = all_cpus();
  if (cpus.empty()) {
    throw std::invalid_argument("declare NUMA nodes before cpuinfo");
  }
  std::string text;
  const std::size_t count = std::min(cpus.size(), static_cast<std::size_t>(spec.processors));
  for (std::size_t i = 0; i < count; ++i) {
    int package = 0;
    for (const auto& [id, node_cpus] : node_cpus_) {
      if (std::binary_search(node_cpus.begin(), node_cpus.end(), cpus[i])) {
        package = nodes_[id].package >= 0 ? nodes_[id].package : id;
      }
    }
    text += fmt::format(
        "processor\t: {}\nvendor_id\t: {}\ncpu family\t: {}\nmodel\t\t: {}\nmodel name\t: {}\n"
        "physical id\t: {}\nflags\t\t: {}\n\n",
        cpus[i], spec.vendor_id, spec.family, spec.model, spec.model_name, package, spec.flags);
  }
  write_bytes(root_ / "proc/cpuinfo", text);
  return *this;
}

SysrootBuilder& SysrootBuilder::cpu_topology(const CpuTopologySpec& spec) {
  if (nodes_.empty()) {
    throw std::invalid_argument("declare NUMA nodes before the CPU topology");
  }
  if (spec.threads_per_core < 1) {
    throw std::invalid_argument("threads_per_core must be at least 1");
  }
  std::map<int, std::vector<int>> packages;  // package id -> CPUs
  for (const auto& [cpus, package] : spec.packages) {
    packages[package] = parse_cpu_list(cpus);
  }
  for (const auto& [id, cpus] : node_cpus_) {
    if (!spec.packages.empty()) {
      break;
    }
    const int package = nodes_[id].package >= 0 ? nodes_[id].package : id;
    auto& list = packages[package];
    list.insert(list.end(), cpus.begin(), cpus.end());
  }
  const fs::path cpu_dir = root_ / "sys/devices/system/cpu";
  const std::set<int> offline(spec.offline.begin(), spec.offline.end());
  int cache_id = 0;
  for (auto& [package, cpus] : packages) {
    std::sort(cpus.begin(), cpus.end());
    const auto threads = static_cast<std::size_t>(spec.threads_per_core);
    if (cpus.size() % threads != 0) {
      throw std::invalid_argument(
          fmt::format("package {} has {} CPUs, not a multiple of {} threads per core", package,
                      cpus.size(), threads));
    }
    const std::size_t cores = cpus.size() / threads;
    const std::string package_mask = cpu_mask(cpus);
    const std::string package_list = format_cpu_list(cpus);
    for (std::size_t core = 0; core < cores; ++core) {
      std::vector<int> siblings;
      for (std::size_t t = 0; t < threads; ++t) {
        siblings.push_back(cpus[core + t * cores]);
      }
      std::sort(siblings.begin(), siblings.end());
      for (const int cpu : siblings) {
        const fs::path dir = cpu_dir / fmt::format("cpu{}", cpu);
        if (offline.count(cpu) != 0) {
          write_attr(dir / "online", "0");
          fs::remove_all(dir / "topology");
          continue;
        }
        write_attr(dir / "online", "1");
        const fs::path topo = dir / "topology";
        write_attr(topo / "physical_package_id", fmt::format("{}", package));
        write_attr(topo / "die_id", "0");
        write_attr(topo / "core_id", fmt::format("{}", core));
        for (const char* name : {"core_cpus", "thread_siblings"}) {
          write_attr(topo / name, cpu_mask(siblings));
          write_attr(topo / fmt::format("{}_list", name), format_cpu_list(siblings));
        }
        for (const char* name : {"package_cpus", "core_siblings", "die_cpus"}) {
          write_attr(topo / name, package_mask);
          write_attr(topo / fmt::format("{}_list", name), package_list);
        }
        int index = 0;
        for (const auto& cache : spec.caches) {
          const fs::path c = dir / fmt::format("cache/index{}", index++);
          const auto& shared = cache.per_package ? cpus : siblings;
          write_attr(c / "level", fmt::format("{}", cache.level));
          write_attr(c / "type", cache.type);
          write_attr(c / "size", fmt::format("{}K", cache.size_kib));
          write_attr(c / "coherency_line_size", "64");
          write_attr(c / "ways_of_associativity", "8");
          write_attr(c / "number_of_sets",
                     fmt::format("{}", std::max<std::uint64_t>(cache.size_kib * 1024 / 64 / 8, 1)));
          write_attr(c / "shared_cpu_map", cpu_mask(shared));
          write_attr(c / "shared_cpu_list", format_cpu_list(shared));
          write_attr(c / "id", fmt::format("{}", cache.per_package ? package : cache_id));
        }
      }
      ++cache_id;
    }
  }
  std::vector<int> online;
  for (const int cpu : all_cpus()) {
    if (offline.count(cpu) == 0) {
      online.push_back(cpu);
    }
  }
  write_attr(cpu_dir / "online", format_cpu_list(online));
  return *this;
}

SysrootBuilder& SysrootBuilder::cpu_packages(std::string_view cpus, int package) {
  for (const int cpu : parse_cpu_list(cpus)) {
    write_attr(
        root_ / fmt::format("sys/devices/system/cpu/cpu{}/topology/physical_package_id", cpu),
        fmt::format("{}", package));
  }
  return *this;
}

SysrootBuilder& SysrootBuilder::offline_cpus(std::string_view cpus) {
  const std::vector<int> offline = parse_cpu_list(cpus);
  for (const int cpu : offline) {
    // drivers/base/topology.c: the topology group goes away with the CPU's device hotplug.
    fs::remove_all(root_ / fmt::format("sys/devices/system/cpu/cpu{}/topology", cpu));
    write_attr(root_ / fmt::format("sys/devices/system/cpu/cpu{}/online", cpu), "0");
  }
  std::vector<int> online;
  for (const int cpu : all_cpus()) {
    if (!std::binary_search(offline.begin(), offline.end(), cpu)) {
      online.push_back(cpu);
    }
  }
  write_attr(root_ / "sys/devices/system/cpu/online", format_cpu_list(online));
  write_attr(root_ / "sys/devices/system/cpu/offline", format_cpu_list(offline));
  return *this;
}

SysrootBuilder& SysrootBuilder::remove(std::string_view relative_path) {
  fs::remove_all(root_ / relative_path);
  return *this;
}

SysrootBuilder& SysrootBuilder::cmdline(std::string_view cmdline) {
  write_attr(root_ / "proc/cmdline", cmdline);
  return *this;
}

SysrootBuilder& SysrootBuilder::hostname(std::string_view name) {
  write_attr(root_ / "proc/sys/kernel/hostname", name);
  return *this;
}

SysrootBuilder& SysrootBuilder::osrelease(std::string_view release) {
  write_attr(root_ / "proc/sys/kernel/osrelease", release);
  return *this;
}

SysrootBuilder& SysrootBuilder::nvidia_driver(std::string_view version) {
  write_attr(root_ / "sys/module/nvidia/version", version);
  write_bytes(root_ / "proc/driver/nvidia/version",
              fmt::format("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {}  Release "
                          "Build  (dvs-builder@U22-I3-AM02-24-3)  Tue Sep 23 09:55:41 UTC 2025\n"
                          "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n",
                          version));
  return *this;
}

SysrootBuilder& SysrootBuilder::nvidia_peermem(std::string_view version) {
  write_attr(root_ / "sys/module/nvidia_peermem/version", version);
  return *this;
}

SysrootBuilder& SysrootBuilder::iommu(std::string_view group_type) {
  iommu_type_ = std::string(group_type);
  return *this;
}

SysrootBuilder& SysrootBuilder::config_as_root() {
  config_as_root_ = true;
  return *this;
}

SysrootBuilder& SysrootBuilder::virtual_netdev(std::string_view name, const NetSpec& spec) {
  write_netdev(root_ / "sys/devices/virtual/net", name, spec, {});
  return *this;
}

SysrootBuilder& SysrootBuilder::nvme_poll_queues(int queues) {
  write_attr(root_ / "sys/module/nvme/parameters/poll_queues", fmt::format("{}", queues));
  return *this;
}

SysrootBuilder& SysrootBuilder::virtual_block_device(std::string_view name, std::string_view dev,
                                                     const std::vector<std::string>& slaves) {
  const fs::path dir = root_ / "sys/devices/virtual/block" / name;
  write_attr(dir / "dev", dev);
  fs::create_directories(dir / "slaves");
  for (const auto& slave : slaves) {
    const auto it = block_devices_.find(slave);
    if (it == block_devices_.end()) {
      throw std::invalid_argument(
          fmt::format("{}: no block device {} written before it", name, slave));
    }
    make_link(dir / "slaves" / slave, it->second);
  }
  make_link(root_ / "sys/block" / name, dir);
  make_link(root_ / "sys/dev/block" / dev, dir);
  block_devices_[std::string(name)] = dir;
  return *this;
}

SysrootBuilder& SysrootBuilder::file(std::string_view relative_path, std::string_view content) {
  write_bytes(root_ / relative_path, content);
  return *this;
}

PciBus SysrootBuilder::root_bus(std::string_view name, int numa_node) {
  check_bdf(fmt::format("{}:00.0", name));
  if (numa_node >= 0 && !nodes_.contains(numa_node)) {
    throw std::invalid_argument(
        fmt::format("root bus {}: NUMA node {} is not declared", name, numa_node));
  }
  const std::string bus(name);
  const fs::path dir = root_ / "sys/devices" / fmt::format("pci{}", bus);
  buses_[bus] = Bus{numa_node, dir};
  fs::create_directories(dir / "pci_bus" / bus);
  make_link(root_ / "sys/class/pci_bus" / bus, dir / "pci_bus" / bus);
  return PciBus(this, bus);
}

PciFunction SysrootBuilder::function(std::string_view bdf) {
  at(std::string(bdf));
  return PciFunction(this, std::string(bdf));
}

SysrootBuilder::Function& SysrootBuilder::at(const std::string& bdf) {
  const auto it = functions_.find(bdf);
  if (it == functions_.end()) {
    throw std::invalid_argument(fmt::format("no PCI function {}", bdf));
  }
  return it->second;
}

PciFunction SysrootBuilder::add_function(const std::string& bus, const std::string& parent,
                                         std::string_view bdf_view, const FunctionSpec& spec) {
  const std::string bdf(bdf_view);
  check_bdf(bdf);
  if (functions_.contains(bdf)) {
    throw std::invalid_argument(fmt::format("{} exists already", bdf));
  }
  if (spec.max_link) {
    check_gen(spec.max_link->gen);
  }
  Function f;
  f.bdf = bdf;
  f.parent = parent;
  f.root_bus = bus;
  f.spec = spec;
  f.numa_node = buses_.at(bus).numa_node;
  if (parent.empty()) {
    if (bus_of(bdf) != bus) {
      throw std::invalid_argument(fmt::format("{} is not on root bus {}", bdf, bus));
    }
    f.dir = buses_.at(bus).dir / bdf;
    f.role = is_bridge(spec) ? Role::kRootPort : Role::kEndpoint;
  } else {
    Function& p = at(parent);
    // Every device below one bridge sits on the bridge's secondary bus, a number above the
    // bridge's own.
    const std::string child_bus = p.children.empty() ? bus_of(bdf) : bus_of(p.children.front());
    if (bus_of(bdf) != child_bus || domain_of(bdf) != domain_of(parent) ||
        bus_number(bdf) <= bus_number(parent)) {
      throw std::invalid_argument(fmt::format(
          "{} cannot sit below {}: its bus must be the bridge's secondary bus", bdf, parent));
    }
    f.dir = p.dir / bdf;
    const bool parent_faces_down = p.role == Role::kRootPort || p.role == Role::kDownstreamPort;
    if (!is_bridge(spec)) {
      f.role = Role::kEndpoint;
    } else {
      f.role = parent_faces_down ? Role::kUpstreamPort : Role::kDownstreamPort;
    }
    p.children.push_back(bdf);
    if (p.children.size() == 1) {
      fs::create_directories(p.dir / "pci_bus" / child_bus);
      make_link(root_ / "sys/class/pci_bus" / child_bus, p.dir / "pci_bus" / child_bus);
    }
  }
  if (config_as_root_ && spec.max_link) {
    f.full_config = true;
    if (f.role == Role::kRootPort || f.role == Role::kDownstreamPort) {
      f.acs_control = 0;
    }
  }
  functions_[bdf] = f;

  const auto& ids = spec.ids;
  write_attr(f.dir / "class", fmt::format("{:#08x}", ids.class_code));
  write_attr(f.dir / "vendor", fmt::format("{:#06x}", ids.vendor));
  write_attr(f.dir / "device", fmt::format("{:#06x}", ids.device));
  write_attr(f.dir / "subsystem_vendor", fmt::format("{:#06x}", ids.subsystem_vendor));
  write_attr(f.dir / "subsystem_device", fmt::format("{:#06x}", ids.subsystem_device));
  write_attr(f.dir / "numa_node", fmt::format("{}", f.numa_node));
  const std::vector<int> local = f.numa_node >= 0 ? node_cpus_[f.numa_node] : all_cpus();
  write_attr(f.dir / "local_cpulist", format_cpu_list(local));
  write_attr(f.dir / "local_cpus", cpu_mask(local));
  make_link(root_ / "sys/bus/pci/devices" / bdf, f.dir);
  if (!spec.driver.empty()) {
    const fs::path driver = root_ / "sys/bus/pci/drivers" / spec.driver;
    make_link(f.dir / "driver", driver);
    make_link(driver / bdf, f.dir);
  }
  if (iommu_type_) {
    iommu_groups_[next_iommu_group_].type = *iommu_type_;
    join_iommu_group(functions_[bdf], next_iommu_group_++);
  }

  // A new child changes its parent's trained link and the bus ranges of every bridge above.
  for (std::string up = bdf; !up.empty(); up = at(up).parent) {
    refresh(up);
  }
  return PciFunction(this, bdf);
}

std::optional<Link> SysrootBuilder::upstream_link(const Function& f) const {
  if (!f.spec.max_link) {
    return std::nullopt;
  }
  if (!f.parent.empty()) {
    const Function& p = functions_.at(f.parent);
    const bool parent_faces_down = p.role == Role::kRootPort || p.role == Role::kDownstreamPort;
    if (parent_faces_down && p.spec.max_link) {
      // Link training settles on the highest speed and width both ends support.
      return f.link_override.value_or(min_link(*f.spec.max_link, *p.spec.max_link));
    }
  }
  return f.link_override.value_or(*f.spec.max_link);
}

std::optional<Link> SysrootBuilder::current_link(const Function& f) const {
  if (!f.spec.max_link) {
    return std::nullopt;
  }
  if (f.role == Role::kRootPort || f.role == Role::kDownstreamPort) {
    if (f.children.empty()) {
      return Link{};
    }
    return upstream_link(functions_.at(f.children.front())).value_or(Link{});
  }
  return upstream_link(f);
}

int SysrootBuilder::subordinate_bus(const Function& f) const {
  int highest = 0;
  for (const auto& child : f.children) {
    highest = std::max({highest, bus_number(child), subordinate_bus(functions_.at(child))});
  }
  return highest;
}

std::vector<std::uint8_t> SysrootBuilder::config_bytes(const Function& f) const {
  std::vector<std::uint8_t> c(f.full_config ? 4096 : 64, 0);
  const bool bridge = is_bridge(f.spec);
  const auto& ids = f.spec.ids;
  put16(c, 0x00, ids.vendor);
  put16(c, 0x02, ids.device);
  put16(c, 0x04, 0x0406);                             // memory space, bus master, INTx disabled
  put16(c, 0x06, f.spec.max_link ? 0x0010 : 0x0000);  // capability list present
  put8(c, 0x09, ids.class_code & 0xff);
  put8(c, 0x0a, (ids.class_code >> 8) & 0xff);
  put8(c, 0x0b, (ids.class_code >> 16) & 0xff);
  put8(c, 0x0e, bridge ? 0x01 : 0x00);
  if (bridge) {
    put8(c, 0x18, static_cast<unsigned>(bus_number(f.bdf)));
    put8(c, 0x19, f.children.empty() ? 0U : static_cast<unsigned>(bus_number(f.children.front())));
    put8(c, 0x1a, static_cast<unsigned>(subordinate_bus(f)));
  } else {
    put16(c, 0x2c, ids.subsystem_vendor);
    put16(c, 0x2e, ids.subsystem_device);
  }
  if (!f.spec.max_link) {
    return c;
  }
  put8(c, 0x34, kPcieCap);
  unsigned port_type = 0;  // PCIe cap flags bits 7:4
  switch (f.role) {
    case Role::kRootPort:
      port_type = 4;
      break;
    case Role::kUpstreamPort:
      port_type = 5;
      break;
    case Role::kDownstreamPort:
      port_type = 6;
      break;
    case Role::kEndpoint:
      port_type = 0;
      break;
  }
  put8(c, kPcieCap, 0x10);
  put16(c, kPcieCap + 0x02, 0x0002 | (port_type << 4));
  const Link max = *f.spec.max_link;
  const Link now = current_link(f).value_or(Link{});
  put32(c, kPcieCap + 0x0c, static_cast<std::uint32_t>(max.gen | (max.width << 4)));
  const bool faces_down = f.role == Role::kRootPort || f.role == Role::kDownstreamPort;
  const unsigned link_active = faces_down && now.gen > 0 ? 0x2000 : 0;  // DLLLA
  put16(c, kPcieCap + 0x12, static_cast<unsigned>(now.gen | (now.width << 4)) | link_active);
  put32(c, kPcieCap + 0x2c, ((1U << (max.gen + 1)) - 2));  // LnkCap2 supported speeds vector
  if (f.acs_control) {
    put32(c, kExtCap, kAcsCapId | (1U << 16));  // version 1, last in the list
    // Capability: source validation, translation blocking, request and completion redirect,
    // upstream forwarding, direct translated P2P.
    put16(c, kExtCap + 4, 0x005f);
    put16(c, kExtCap + 6, *f.acs_control);
  }
  return c;
}

void SysrootBuilder::refresh(const std::string& bdf) {
  const Function& f = at(bdf);
  if (f.spec.max_link) {
    const Link max = *f.spec.max_link;
    const Link now = current_link(f).value_or(Link{});
    write_attr(f.dir / "max_link_speed", link_speed_text(max.gen));
    write_attr(f.dir / "max_link_width", fmt::format("{}", max.width));
    write_attr(f.dir / "current_link_speed", link_speed_text(now.gen));
    write_attr(f.dir / "current_link_width", fmt::format("{}", now.width));
  }
  if (is_bridge(f.spec)) {
    const int secondary = f.children.empty() ? 0 : bus_number(f.children.front());
    write_attr(f.dir / "secondary_bus_number", fmt::format("{}", secondary));
    write_attr(f.dir / "subordinate_bus_number", fmt::format("{}", subordinate_bus(f)));
  }
  const auto bytes = config_bytes(f);
  write_bytes(f.dir / "config",
              std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

void SysrootBuilder::refresh_around(const std::string& bdf) {
  const Function& f = at(bdf);
  refresh(bdf);
  if (!f.parent.empty()) {
    refresh(f.parent);
  }
  for (const auto& child : f.children) {
    refresh(child);
  }
}

void SysrootBuilder::join_iommu_group(Function& f, int group) {
  const fs::path groups = root_ / "sys/kernel/iommu_groups";
  if (f.iommu_group) {
    auto& old = iommu_groups_[*f.iommu_group];
    old.devices.erase(f.bdf);
    fs::remove(groups / fmt::format("{}", *f.iommu_group) / "devices" / f.bdf);
    // The kernel has no empty groups: a group exists because a device is in it.
    if (old.devices.empty()) {
      fs::remove_all(groups / fmt::format("{}", *f.iommu_group));
      iommu_groups_.erase(*f.iommu_group);
    }
  }
  f.iommu_group = group;
  auto& g = iommu_groups_[group];
  g.devices.insert(f.bdf);
  const fs::path dir = groups / fmt::format("{}", group);
  write_attr(dir / "type", g.type);
  make_link(dir / "devices" / f.bdf, f.dir);
  make_link(f.dir / "iommu_group", dir);
}

void SysrootBuilder::write_netdev(const fs::path& parent_dir, std::string_view name,
                                  const NetSpec& spec, const fs::path& device) {
  const fs::path dir = parent_dir / name;
  fs::create_directories(dir);
  if (spec.speed_mbps) {
    write_attr(dir / "speed", fmt::format("{}", *spec.speed_mbps));
  }
  write_attr(dir / "operstate", spec.operstate);
  write_attr(dir / "mtu", fmt::format("{}", spec.mtu));
  if (!device.empty()) {
    make_link(dir / "device", device);
  }
  make_link(root_ / "sys/class/net" / name, dir);
}

// The kernel's "%*pb" bitmap over nr_cpu_ids bits: 32-bit hex groups, highest first, separated
// by commas, the first group only as wide as its bits need (lib/bitmap-str.c).
std::string SysrootBuilder::cpu_mask(const std::vector<int>& cpus) const {
  const std::vector<int> all = all_cpus();
  const int bits = all.empty() ? 0 : all.back() + 1;
  const int groups = (bits + 31) / 32;
  std::vector<std::uint32_t> words(static_cast<std::size_t>(groups), 0);
  for (int cpu : cpus) {
    words[static_cast<std::size_t>(cpu / 32)] |= 1U << (cpu % 32);
  }
  std::string out;
  for (int g = groups - 1; g >= 0; --g) {
    const int width_bits = g == groups - 1 && bits % 32 != 0 ? bits % 32 : 32;
    out += fmt::format("{}{:0{}x}", out.empty() ? "" : ",", words[static_cast<std::size_t>(g)],
                       (width_bits + 3) / 4);
  }
  return out;
}

std::vector<int> SysrootBuilder::all_cpus() const {
  std::vector<int> all;
  for (const auto& [id, cpus] : node_cpus_) {
    all.insert(all.end(), cpus.begin(), cpus.end());
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

}  // namespace acco::testing
