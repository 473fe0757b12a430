#include "acco/topo/storage_link.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "acco/core/units.hpp"
#include "acco/topo/link_model.hpp"

namespace acco::topo {
namespace {

// The controller whose directory lists `ns` (NvmeNamespace::controller, else the controllers'
// namespace lists); nullptr when none does.
const NvmeController* controller_of(const Machine& m, const std::string& ns) {
  std::string name;
  for (const auto& n : m.nvme_namespaces) {
    if (n.name == ns) {
      name = n.controller;
    }
  }
  for (const auto& c : m.nvme_controllers) {
    const bool lists =
        std::find(c.namespaces.begin(), c.namespaces.end(), ns) != c.namespaces.end();
    if ((!name.empty() && c.name == name) || (name.empty() && lists)) {
      return &c;
    }
  }
  return nullptr;
}

StorageLink none(std::string why) {
  StorageLink s;
  s.source = std::move(why);
  return s;
}

}  // namespace

StorageLink storage_link(const Machine& m) {
  if (!m.data_dir) {
    return none("no path was looked up");
  }
  const DataDir& d = *m.data_dir;
  if (!d.unavailable.empty()) {
    return none(fmt::format("the mount holding {} is unknown: {}", d.path, d.unavailable));
  }
  if (d.nvme_namespaces.empty()) {
    return none(
        fmt::format("no NVMe link under {}: {} ({})", d.path, d.mount.source, d.mount.fs_type));
  }
  StorageLink out;
  std::vector<std::string> parts;
  for (const auto& ns : d.nvme_namespaces) {
    const NvmeController* c = controller_of(m, ns);
    if (c == nullptr) {
      return none(fmt::format("{} (under {}) has no NVMe controller in sysfs", ns, d.path));
    }
    if (c->pci.empty()) {
      return none(fmt::format("{} (under {}) is on {} over {}, not a local PCIe link", ns, d.path,
                              c->name, c->transport.empty() ? "a fabric" : c->transport));
    }
    const PciDevice* dev = m.find(c->pci);
    const double rate = dev == nullptr                   ? 0
                        : dev->path_bytes_per_second > 0 ? dev->path_bytes_per_second
                                                         : dev->current_bytes_per_second;
    if (rate <= 0) {
      return none(fmt::format("{} (under {}): the PCIe link of {} at {} is unknown", ns, d.path,
                              c->name, c->pci));
    }
    if (std::find(out.controllers.begin(), out.controllers.end(), c->pci) !=
        out.controllers.end()) {
      continue;  // another namespace of a controller already counted
    }
    out.controllers.push_back(c->pci);
    out.bytes_per_second += rate;
    std::string part = fmt::format("{} on {} at {}, {}, {}", ns, c->name, c->pci,
                                   describe(dev->current), units::format_rate(rate));
    if (!dev->path_limited_by.empty() && dev->path_limited_by != dev->address) {
      part += fmt::format(" (limited by {} above it)", dev->path_limited_by);
    }
    parts.push_back(std::move(part));
  }
  out.source = fmt::format("{}", fmt::join(parts, "; "));
  if (parts.size() > 1) {
    out.source += fmt::format("; summed: {}", units::format_rate(out.bytes_per_second));
  }
  return out;
}

}  // namespace acco::topo
