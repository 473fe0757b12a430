#include "acco/topo/link_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "acco/core/units.hpp"

namespace acco::topo {
namespace {

struct Generation {
  double gts;
  double lane_bytes_per_second;
};

// Per-lane usable rate, one direction. Gen1/2 lose 20% to 8b/10b, Gen3-5 use 128b/130b, Gen6/7
// use FLIT mode with 242 payload bytes per 256 (hwloc include/private/misc.h, kernel pci.c).
constexpr std::array<Generation, 7> kGenerations{{
    {2.5, 2.5e9 * 8 / 10 / 8},
    {5.0, 5.0e9 * 8 / 10 / 8},
    {8.0, 8.0e9 * 128 / 130 / 8},
    {16.0, 16.0e9 * 128 / 130 / 8},
    {32.0, 32.0e9 * 128 / 130 / 8},
    {64.0, 64.0e9 * 242 / 256 / 8},
    {128.0, 128.0e9 * 242 / 256 / 8},
}};

int generation_index(double gts) {
  for (std::size_t i = 0; i < kGenerations.size(); ++i) {
    if (std::fabs(kGenerations[i].gts - gts) < 0.05) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

}  // namespace

double pcie_lane_bytes_per_second(double speed_gts) {
  const int i = generation_index(speed_gts);
  return i < 0 ? 0.0 : kGenerations[static_cast<std::size_t>(i)].lane_bytes_per_second;
}

int pcie_generation(double speed_gts) {
  return generation_index(speed_gts) + 1;
}

double pcie_speed_of_generation(int generation) {
  if (generation < 1 || generation > static_cast<int>(kGenerations.size())) {
    return 0;
  }
  return kGenerations[static_cast<std::size_t>(generation - 1)].gts;
}

double link_bytes_per_second(const PcieLink& link) {
  return link.known() ? pcie_lane_bytes_per_second(link.speed_gts) * link.width : 0.0;
}

std::string describe(const PcieLink& link) {
  if (!link.known()) {
    return "unknown";
  }
  const int gen = pcie_generation(link.speed_gts);
  if (gen == 0) {
    return fmt::format("{} GT/s x{}", link.speed_gts, link.width);
  }
  return fmt::format("Gen{} x{}", gen, link.width);
}

Result<double> parse_link_speed(std::string_view text) {
  const auto t = units::trim(text);
  if (t == "Unknown" || t == "Unknown speed") {
    return 0.0;
  }
  const auto pos = t.find(" GT/s");
  if (pos == std::string_view::npos) {
    return fail(Errc::kInvalidArgument,
                fmt::format("cannot parse link speed '{}' (expected e.g. '16.0 GT/s PCIe')", t));
  }
  auto value = units::parse_double(t.substr(0, pos));
  if (!value || *value <= 0 || *value > 1000) {
    return fail(Errc::kInvalidArgument,
                fmt::format("cannot parse link speed '{}' (expected e.g. '16.0 GT/s PCIe')", t));
  }
  return *value;
}

double nvlink_bytes_per_second(int nvml_version) {
  if (nvml_version <= 0) {
    return 25e9;  // unknown version: the NVLink 2-4 figure, the common case
  }
  if (nvml_version == 1) {
    return 20e9;
  }
  return nvml_version >= 7 ? 50e9 : 25e9;
}

std::vector<std::string> ancestors(const Machine& machine, const std::string& address) {
  std::vector<std::string> chain;
  const PciDevice* d = machine.find(address);
  // The depth bound guards against a malformed snapshot whose parents form a cycle.
  while (d != nullptr && !d->parent.empty() && chain.size() < 64) {
    d = machine.find(d->parent);
    if (d == nullptr) {
      break;  // a parent missing from the model (hand-edited input) ends the chain
    }
    chain.push_back(d->address);
  }
  return chain;
}

bool internal_link(const Machine& machine, const PciDevice& dev) {
  const PciDevice* port = machine.find(dev.parent);
  return port != nullptr && dev.kind != DeviceKind::kBridge && port->kind == DeviceKind::kBridge &&
         dev.current.known() && port->current.known() &&
         link_bytes_per_second(dev.current) > link_bytes_per_second(port->current) * 1.01;
}

void annotate_links(Machine& machine) {
  for (auto& dev : machine.pci_devices) {
    dev.current_bytes_per_second = link_bytes_per_second(dev.current);
    if (dev.current_bytes_per_second == 0) {
      dev.current_bytes_per_second = dev.reported_bytes_per_second;  // hwloc XML: all there is
    }
    dev.capable_bytes_per_second = 0;
    if (internal_link(machine, dev)) {
      continue;
    }
    dev.capable_bytes_per_second = link_bytes_per_second(dev.max);
    if (const PciDevice* parent = machine.find(dev.parent);
        parent != nullptr && parent->max.known() && dev.max.known()) {
      // A link trains at the lower speed and the fewer lanes of its two ends: a Gen5 x16 device
      // in a Gen4 x32 port runs Gen4 x16 (31.5 GB/s), not min(63.0, 63.0).
      const PcieLink both{std::min(dev.max.speed_gts, parent->max.speed_gts),
                          std::min(dev.max.width, parent->max.width)};
      dev.capable_bytes_per_second = link_bytes_per_second(both);
    }
  }
  for (auto& dev : machine.pci_devices) {
    dev.path_bytes_per_second = 0;
    dev.path_limited_by.clear();
    if (internal_link(machine, dev)) {
      continue;  // the path inside the chipset is not one these figures describe
    }
    double narrowest = dev.current_bytes_per_second;
    std::string at = narrowest > 0 ? dev.address : "";
    for (const auto& up : ancestors(machine, dev.address)) {
      const PciDevice* p = machine.find(up);
      if (p != nullptr && p->current_bytes_per_second > 0 &&
          (narrowest == 0 || p->current_bytes_per_second < narrowest)) {
        narrowest = p->current_bytes_per_second;
        at = p->address;
      }
    }
    dev.path_bytes_per_second = narrowest;
    dev.path_limited_by = at;
  }
}

namespace {

int nvlinks_between(const Machine& machine, const std::string& a, const std::string& b) {
  const NvmlGpu* ga = machine.nvml_gpu(a);
  const NvmlGpu* gb = machine.nvml_gpu(b);
  if (ga == nullptr || gb == nullptr) {
    return 0;
  }
  int direct = 0;
  int a_to_switch = 0;
  int b_to_switch = 0;
  const auto is_gpu = [&](const std::string& pci) { return machine.nvml_gpu(pci) != nullptr; };
  for (const auto& l : ga->nvlinks) {
    if (l.active && l.remote_pci == b) {
      ++direct;
    } else if (l.active && !is_gpu(l.remote_pci)) {
      ++a_to_switch;
    }
  }
  for (const auto& l : gb->nvlinks) {
    if (l.active && !is_gpu(l.remote_pci)) {
      ++b_to_switch;
    }
  }
  // Through NVSwitches every GPU reaches every other one with all its switch links, so the
  // bonded count is what the weaker side brings (nvidia-smi prints NV18 on HGX H100).
  return direct > 0 ? direct : std::min(a_to_switch, b_to_switch);
}

double nvlink_version_of(const Machine& machine, const std::string& a) {
  const NvmlGpu* g = machine.nvml_gpu(a);
  int version = 0;
  if (g != nullptr) {
    for (const auto& l : g->nvlinks) {
      version = std::max(version, l.version);
    }
  }
  return nvlink_bytes_per_second(version);
}

}  // namespace

Path classify_path(const Machine& machine, const std::string& a, const std::string& b) {
  Path path;
  if (a == b) {
    path.path_class = PathClass::kSelf;
    return path;
  }
  if (const int links = nvlinks_between(machine, a, b); links > 0) {
    path.path_class = PathClass::kNvlink;
    path.nvlinks = links;
    path.bottleneck_bytes_per_second = links * nvlink_version_of(machine, a);
    return path;
  }
  const PciDevice* da = machine.find(a);
  const PciDevice* db = machine.find(b);
  ACCO_CHECK(da != nullptr && db != nullptr);
  const auto up_a = ancestors(machine, a);
  const auto up_b = ancestors(machine, b);

  // Lowest common bridge, and how many bridges each side climbs to reach it.
  std::size_t ia = 0;
  std::size_t ib = 0;
  bool common = false;
  for (ia = 0; ia < up_a.size() && !common; ++ia) {
    const auto it = std::find(up_b.begin(), up_b.end(), up_a[ia]);
    if (it != up_b.end()) {
      ib = static_cast<std::size_t>(it - up_b.begin());
      common = true;
      break;
    }
  }

  // The narrowest current link crossed: each side's own links below the meeting point, or the
  // whole way to the root when the path leaves the PCIe tree.
  const auto narrowest = [&](const PciDevice& d, const std::vector<std::string>& up,
                             std::size_t stop) {
    std::pair<double, std::string> best{d.current_bytes_per_second, d.address};
    for (std::size_t i = 0; i < stop && i < up.size(); ++i) {
      const PciDevice* p = machine.find(up[i]);
      if (p != nullptr && p->current_bytes_per_second > 0 &&
          (best.first == 0 || p->current_bytes_per_second < best.first)) {
        best = {p->current_bytes_per_second, p->address};
      }
    }
    return best;
  };
  const auto ba = narrowest(*da, up_a, common ? ia : up_a.size());
  const auto bb = narrowest(*db, up_b, common ? ib : up_b.size());
  const bool a_first = bb.first == 0 || (ba.first > 0 && ba.first <= bb.first);
  path.bottleneck_bytes_per_second = a_first ? ba.first : bb.first;
  path.bottleneck_at =
      path.bottleneck_bytes_per_second > 0 ? (a_first ? ba.second : bb.second) : "";

  if (common) {
    // A switch is an upstream port over downstream ports: devices meeting at an upstream port
    // with one port each below it cross one switch (PIX); anything deeper is PXB.
    path.path_class = (ia <= 1 && ib <= 1) ? PathClass::kPix : PathClass::kPxb;
    return path;
  }
  if (da->root_bus == db->root_bus) {
    path.path_class = PathClass::kPhb;
    return path;
  }
  const bool single_node = machine.numa_nodes.size() <= 1;
  if (da->numa_node >= 0 && da->numa_node == db->numa_node) {
    path.path_class = PathClass::kNode;
  } else if (da->numa_node < 0 || db->numa_node < 0) {
    path.path_class = single_node ? PathClass::kNode : PathClass::kSys;
  } else {
    path.path_class = PathClass::kSys;
  }
  return path;
}

const char* to_string(PathClass path_class) {
  switch (path_class) {
    case PathClass::kSelf:
      return "X";
    case PathClass::kNvlink:
      return "NV";
    case PathClass::kPix:
      return "PIX";
    case PathClass::kPxb:
      return "PXB";
    case PathClass::kPhb:
      return "PHB";
    case PathClass::kNode:
      return "NODE";
    case PathClass::kSys:
      return "SYS";
  }
  return "SYS";
}

std::string to_string(const Path& path) {
  if (path.path_class == PathClass::kNvlink) {
    return fmt::format("NV{}", path.nvlinks);
  }
  return to_string(path.path_class);
}

std::vector<std::string> PhysicalDevice::addresses() const {
  std::vector<std::string> out;
  for (const auto* f : functions) {
    out.push_back(f->address);
  }
  return out;
}

std::vector<PhysicalDevice> physical_devices(const Machine& m) {
  std::vector<PhysicalDevice> out;
  std::map<std::tuple<std::string, std::string, DeviceKind>, std::size_t> index;
  for (const auto& d : m.pci_devices) {
    if (d.kind != DeviceKind::kGpu && d.kind != DeviceKind::kAccelerator &&
        d.kind != DeviceKind::kNic && d.kind != DeviceKind::kNvme) {
      continue;
    }
    // "DDDD:BB:DD.F" without ".F": the device the function belongs to.
    const auto dot = d.address.rfind('.');
    const auto key = std::make_tuple(d.parent, d.address.substr(0, dot), d.kind);
    const auto [it, inserted] = index.try_emplace(key, out.size());
    if (inserted) {
      out.push_back({});
    }
    out[it->second].functions.push_back(&d);
  }
  return out;
}

}  // namespace acco::topo
