#include "acco/topo/sysfs_source.hpp"

#include <algorithm>
#include <bitset>
#include <cctype>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "acco/core/units.hpp"
#include "acco/topo/link_model.hpp"

namespace acco::topo {
namespace {

using core::Fs;

std::string basename_of(std::string_view path) {
  const auto pos = path.find_last_of('/');
  return std::string(pos == std::string_view::npos ? path : path.substr(pos + 1));
}

std::vector<std::string> components(std::string_view path) {
  std::vector<std::string> out;
  for (auto& part : units::split(path, '/')) {
    if (!part.empty()) {
      out.push_back(std::move(part));
    }
  }
  return out;
}

// Reads sysfs attributes and notes every file that exists but does not parse.
class Reader {
 public:
  explicit Reader(const Fs& fs, std::vector<InputIssue>& issues) : fs_(fs), issues_(issues) {}

  // Trimmed text, or nullopt when absent. Read errors on a file that exists are input issues.
  std::optional<std::string> text(const std::string& path) {
    auto r = fs_.read_file(path);
    if (!r) {
      if (r.error().code != Errc::kNotFound) {
        issue(path, r.error().message);
      }
      return std::nullopt;
    }
    return std::string(units::trim(*r));
  }

  std::optional<std::int64_t> integer(const std::string& path, int base = 10) {
    auto t = text(path);
    if (!t) {
      return std::nullopt;
    }
    auto v = units::parse_int(*t, base);
    if (!v) {
      issue(path, v.error().message);
      return std::nullopt;
    }
    return *v;
  }

  std::vector<std::string> list(const std::string& path) {
    auto r = fs_.list_dir(path);
    if (!r) {
      if (r.error().code != Errc::kNotFound) {
        issue(path, r.error().message);
      }
      return {};
    }
    return *r;
  }

  // The basename of a link's target ("nvidia" for .../drivers/nvidia), empty when absent.
  std::string link_name(const std::string& path) {
    auto r = fs_.read_link(path);
    return r ? basename_of(*r) : std::string();
  }

  // The nearest PCI function at or above a class device ("/sys/class/net/eth0/device" may point
  // at a virtio child of the function, so walk up the canonical path).
  std::string owning_pci(const std::string& path) {
    auto real = fs_.real_path(path);
    if (!real) {
      return {};
    }
    auto parts = components(*real);
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
      if (is_pci_address(*it)) {
        return *it;
      }
    }
    return {};
  }

  void issue(const std::string& path, std::string problem) {
    issues_.push_back({path, std::move(problem)});
  }

  const Fs& fs() const { return fs_; }

 private:
  const Fs& fs_;
  std::vector<InputIssue>& issues_;
};

void read_system(Reader& in, Machine& m) {
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

// The socket of a node is the package of its first CPU; -1 for memory-only nodes.
int package_of(Reader& in, const std::vector<int>& cpus) {
  if (cpus.empty()) {
    return -1;
  }
  return static_cast<int>(
      in.integer(
            fmt::format("/sys/devices/system/cpu/cpu{}/topology/physical_package_id", cpus.front()))
          .value_or(-1));
}

void read_numa(Reader& in, Machine& m) {
  const std::string base = "/sys/devices/system/node";
  std::vector<int> ids;
  for (const auto& name : in.list(base)) {
    if (name.rfind("node", 0) == 0 && name.size() > 4 &&
        std::all_of(name.begin() + 4, name.end(), [](char c) { return std::isdigit(c) != 0; })) {
      const auto id = units::parse_int(name.substr(4));
      if (id && *id <= std::numeric_limits<int>::max()) {
        ids.push_back(static_cast<int>(*id));
      } else {
        in.issue(base + "/" + name, "NUMA node number out of range");
      }
    }
  }
  std::sort(ids.begin(), ids.end());
  for (const int id : ids) {
    const auto dir = fmt::format("{}/node{}", base, id);
    NumaNode node;
    node.id = id;
    if (auto list = in.text(dir + "/cpulist")) {
      if (auto cpus = units::parse_cpulist(*list)) {
        node.cpus = *cpus;
      } else {
        in.issue(dir + "/cpulist", cpus.error().message);
      }
    }
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
      if (kb) {
        node.memory_bytes = static_cast<std::uint64_t>(*kb) * 1024;
      } else {
        in.issue(dir + "/meminfo", "cannot find 'MemTotal: N kB'");
      }
    }
    node.package = package_of(in, node.cpus);
    m.numa_nodes.push_back(std::move(node));
  }
  if (m.numa_nodes.empty()) {
    // Kernels built without NUMA have no node directory: the whole machine is node 0.
    NumaNode node;
    if (auto online = in.text("/sys/devices/system/cpu/online")) {
      node.cpus = units::parse_cpulist(*online).value_or(std::vector<int>{});
    }
    node.distances = {10};
    node.package = package_of(in, node.cpus);
    m.numa_nodes.push_back(std::move(node));
  }
}

PcieLink read_link(Reader& in, const std::string& dir, const char* speed_file,
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
void read_acs(Reader& in, const std::string& dir, PciDevice& d) {
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

void read_pci(Reader& in, Machine& m) {
  const std::string bus = "/sys/bus/pci/devices";
  for (const auto& address : in.list(bus)) {
    if (!is_pci_address(address)) {
      continue;
    }
    const auto link = bus + "/" + address;
    auto real = in.fs().real_path(link);
    if (!real) {
      in.issue(link, fmt::format("cannot resolve the device link: {}", real.error().message));
      continue;
    }
    PciDevice d;
    d.address = address;
    d.sysfs_path = *real;
    const auto parts = components(*real);
    std::string previous;
    for (const auto& part : parts) {
      if (part.rfind("pci", 0) == 0 && d.root_bus.empty()) {
        d.root_bus = part;
      }
      if (is_pci_address(part)) {
        if (part == address) {
          d.parent = previous;
          break;
        }
        previous = part;
      }
    }
    const auto cls = in.integer(link + "/class", 16);
    d.class_code = static_cast<std::uint32_t>(cls.value_or(0)) & 0xffffff;
    d.vendor_id = static_cast<std::uint16_t>(in.integer(link + "/vendor", 16).value_or(0));
    d.device_id = static_cast<std::uint16_t>(in.integer(link + "/device", 16).value_or(0));
    d.subsystem_vendor_id =
        static_cast<std::uint16_t>(in.integer(link + "/subsystem_vendor", 16).value_or(0));
    d.subsystem_device_id =
        static_cast<std::uint16_t>(in.integer(link + "/subsystem_device", 16).value_or(0));
    d.kind = classify_pci(d.class_code, d.vendor_id);
    d.driver = in.link_name(link + "/driver");
    const auto numa = in.integer(link + "/numa_node");
    d.numa_node = std::max(static_cast<int>(numa.value_or(-1)), -1);
    if (auto cpus = in.text(link + "/local_cpulist")) {
      if (auto parsed = units::parse_cpulist(*cpus)) {
        d.local_cpus = *parsed;
      } else {
        in.issue(link + "/local_cpulist", parsed.error().message);
      }
    }
    if (!numa && in.fs().exists(link + "/numa_node")) {
      // The kernel prints local_cpulist from the same node, so it names the node when
      // numa_node is unreadable; -1 would claim that firmware did not say.
      for (const auto& node : m.numa_nodes) {
        if (!d.local_cpus.empty() && node.cpus == d.local_cpus) {
          d.numa_node = node.id;
        }
      }
    }
    d.current = read_link(in, link, "current_link_speed", "current_link_width");
    d.max = read_link(in, link, "max_link_speed", "max_link_width");
    if (auto group = in.link_name(link + "/iommu_group"); !group.empty()) {
      if (auto id = units::parse_int(group)) {
        d.iommu_group = static_cast<int>(*id);
      }
    }
    read_acs(in, link, d);
    m.pci_devices.push_back(std::move(d));
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
                if (d.parent.empty() || present.count(d.parent) != 0) {
                  return false;
                }
                in.issue(bus + "/" + d.address,
                         fmt::format("its upstream bridge {} is missing or unreadable", d.parent));
                return true;
              }) != 0;
  }

  const std::string slots = "/sys/bus/pci/slots";
  for (const auto& name : in.list(slots)) {
    const auto address = in.text(slots + "/" + name + "/address");
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

void read_net(Reader& in, Machine& m) {
  const std::string base = "/sys/class/net";
  for (const auto& name : in.list(base)) {
    const auto dir = base + "/" + name;
    NetInterface n;
    n.name = name;
    if (in.fs().exists(dir + "/device")) {
      n.pci = in.owning_pci(dir + "/device");
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
    m.net_interfaces.push_back(std::move(n));
  }
}

// "4: ACTIVE" -> 4.
std::optional<int> leading_number(Reader& in, const std::string& path, const std::string& text) {
  const auto colon = text.find(':');
  auto v = units::parse_int(text.substr(0, colon));
  if (!v) {
    in.issue(path, fmt::format("cannot parse '{}' (expected e.g. '4: ACTIVE')", text));
    return std::nullopt;
  }
  return static_cast<int>(*v);
}

void read_infiniband(Reader& in, Machine& m) {
  const std::string base = "/sys/class/infiniband";
  for (const auto& dev : in.list(base)) {
    const auto dir = base + "/" + dev;
    const auto pci = in.owning_pci(dir + "/device");
    for (const auto& port_name : in.list(dir + "/ports")) {
      const auto pdir = dir + "/ports/" + port_name;
      IbPort p;
      p.device = dev;
      p.pci = pci;
      p.port = static_cast<int>(units::parse_int(port_name).value_or(0));
      // A port whose state or rate does not parse is left out: the checks would take the
      // unknown state for a down port and the unknown rate for a slow one.
      bool readable = true;
      if (auto s = in.text(pdir + "/state")) {
        p.state_text = *s;
        const auto state = leading_number(in, pdir + "/state", *s);
        readable = state.has_value();
        p.state = state.value_or(0);
      }
      if (auto s = in.text(pdir + "/phys_state")) {
        p.phys_state_text = *s;
        p.phys_state = leading_number(in, pdir + "/phys_state", *s).value_or(0);
      }
      if (auto rate = in.text(pdir + "/rate")) {
        // "400 Gb/sec (4X NDR)", "2.5 Gb/sec (1X SDR)"
        p.rate_text = *rate;
        const auto gb = rate->find(" Gb/sec");
        const auto open = rate->find('(');
        const auto x = rate->find('X', open == std::string::npos ? 0 : open);
        auto value = units::parse_double(rate->substr(0, gb));
        auto lanes = open == std::string::npos || x == std::string::npos
                         ? units::parse_int("")
                         : units::parse_int(rate->substr(open + 1, x - open - 1));
        if (gb == std::string::npos || !value || !lanes) {
          in.issue(pdir + "/rate",
                   fmt::format("cannot parse '{}' (expected e.g. '400 Gb/sec (4X NDR)')", *rate));
          readable = false;
        } else {
          p.rate_gbps = *value;
          p.lanes = static_cast<int>(*lanes);
        }
      }
      p.link_layer = in.text(pdir + "/link_layer").value_or("");
      if (readable) {
        m.ib_ports.push_back(std::move(p));
      }
    }
  }
}

void read_nvme(Reader& in, Machine& m) {
  const std::string base = "/sys/class/nvme";
  for (const auto& name : in.list(base)) {
    const auto dir = base + "/" + name;
    NvmeController c;
    c.name = name;
    c.model = in.text(dir + "/model").value_or("");
    c.transport = in.text(dir + "/transport").value_or("pcie");
    if (c.transport == "pcie") {
      c.pci = in.owning_pci(dir + "/device");
    }
    for (const auto& entry : in.list(dir)) {
      // Namespaces are nvme0n1, nvme0n2; multipath shows nvme0c0n1 under the controller.
      if (entry.rfind(name + "n", 0) == 0 || entry.rfind(name + "c", 0) == 0) {
        c.namespaces.push_back(entry);
      }
    }
    m.nvme_controllers.push_back(std::move(c));
  }
}

void read_iommu(Reader& in, Machine& m) {
  const std::string base = "/sys/kernel/iommu_groups";
  for (const auto& name : in.list(base)) {
    auto id = units::parse_int(name);
    if (!id) {
      continue;
    }
    IommuGroup g;
    g.id = static_cast<int>(*id);
    g.type = in.text(base + "/" + name + "/type").value_or("");
    g.devices = in.list(base + "/" + name + "/devices");
    m.iommu.groups.push_back(std::move(g));
  }
  std::sort(m.iommu.groups.begin(), m.iommu.groups.end(),
            [](const IommuGroup& a, const IommuGroup& b) { return a.id < b.id; });
  m.iommu.enabled = !m.iommu.groups.empty();
  m.iommu.cmdline = in.text("/proc/cmdline").value_or("");
}

void read_gpudirect(Reader& in, Machine& m) {
  // The files NCCL checks (src/transport/net_ib/gdr.cc): the modern module, then the legacy ones.
  const std::vector<std::string> candidates = {"/sys/module/nvidia_peermem/version",
                                               "/sys/kernel/mm/memory_peers/nv_mem/version",
                                               "/sys/kernel/mm/memory_peers/nv_mem_nc/version"};
  for (const auto& path : candidates) {
    if (in.fs().exists(path)) {
      m.gpudirect.rdma_loaded = true;
      m.gpudirect.evidence = path;
      return;
    }
  }
  m.gpudirect.evidence = "none of " + candidates[0] + ", " + candidates[1] + ", " + candidates[2];
}

}  // namespace

bool is_pci_address(std::string_view t) {
  // DDDD:BB:DD.F
  if (t.size() != 12 || t[4] != ':' || t[7] != ':' || t[10] != '.') {
    return false;
  }
  for (const std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11}) {
    if (std::isxdigit(static_cast<unsigned char>(t[i])) == 0) {
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
      // Server BMC and emulated display adapters are not accelerators.
      static const std::set<std::uint16_t> kNotGpu = {0x1a03, 0x102b, 0x1234, 0x1b36,
                                                      0x15ad, 0x1af4, 0x19e5};
      return kNotGpu.count(vendor_id) != 0 ? DeviceKind::kOther : DeviceKind::kGpu;
    }
    case 0x12:
      return DeviceKind::kAccelerator;
    case 0x02:
      return DeviceKind::kNic;
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

Result<Machine> discover_sysfs(const core::Fs& fs) {
  if (!fs.exists("/sys")) {
    return fail(Errc::kNotFound, "no /sys in the sysroot (expected a tree holding sys/ and proc/)");
  }
  Machine m;
  Reader in(fs, m.input_issues);
  read_system(in, m);
  read_numa(in, m);
  read_pci(in, m);
  read_net(in, m);
  read_infiniband(in, m);
  read_nvme(in, m);
  read_iommu(in, m);
  read_gpudirect(in, m);
  return m;
}

}  // namespace acco::topo
