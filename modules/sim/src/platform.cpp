#include "acco/sim/platform.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>

#include <fmt/format.h>

namespace acco::sim {
namespace {

// A PCIe link's latency as a copy sees it (one hop of a DMA read: ~1 us round trip on Gen4/5).
constexpr double kPcieLatency = 1e-6;
constexpr double kNvlinkLatency = 1e-6;
constexpr double kNicLatency = 1e-6;
// Where nothing says how fast a GPU's link is: Gen4 x16, the most common slot.
constexpr double kAssumedPcie = 31.5e9 * 0.8;

bool is_accelerator(const topo::PciDevice& d) {
  return d.kind == topo::DeviceKind::kGpu || d.kind == topo::DeviceKind::kAccelerator;
}

double link_rate(const topo::PciDevice& d) {
  for (const double rate :
       {d.current_bytes_per_second, d.capable_bytes_per_second, d.reported_bytes_per_second}) {
    if (rate > 0) {
      return rate;
    }
  }
  return 0;
}

// NVLink per direction per link: 20 GB/s for NVLink 1.0 (version 1-2), 25 GB/s from 2.0 on.
double nvlink_rate(int version) {
  return version > 0 && version <= 2 ? 20e9 : 25e9;
}

// The links a copy from device i to device j crosses over PCIe: up from i to the lowest bridge
// both hang under, then down to j (through the root complex when they share none).
std::vector<int> pcie_peer(const std::vector<std::string>& chain_i, const std::vector<int>& up_i,
                           const std::vector<std::string>& chain_j, const std::vector<int>& up_j) {
  std::size_t common_i = chain_i.size();
  std::size_t common_j = chain_j.size();
  for (std::size_t a = 0; a < chain_i.size() && common_i == chain_i.size(); ++a) {
    const auto at = std::find(chain_j.begin(), chain_j.end(), chain_i[a]);
    if (at != chain_j.end()) {
      common_i = a;
      common_j = static_cast<std::size_t>(at - chain_j.begin());
    }
  }
  std::vector<int> links(up_i.begin(), up_i.begin() + static_cast<std::ptrdiff_t>(common_i));
  for (std::size_t b = common_j; b-- > 0;) {
    links.push_back(up_j[b]);
  }
  return links;
}

// True when the PCI function at `address` hangs under a bridge an accelerator's path also
// crosses: a NIC behind the same PCIe switch (or root port) as a GPU, as NCCL picks them.
bool near_an_accelerator(const topo::Machine& machine, const std::string& address,
                         const std::vector<std::vector<std::string>>& chains) {
  const topo::PciDevice* d = machine.find(address);
  for (int depth = 0; d != nullptr && !d->parent.empty() && depth < 64; ++depth) {
    d = machine.find(d->parent);
    for (const auto& chain : chains) {
      if (d != nullptr && std::find(chain.begin() + 1, chain.end(), d->address) != chain.end()) {
        return true;
      }
    }
  }
  return false;
}

// The NIC ports on the fabric and their rates together: the active InfiniBand ports, else the
// active RoCE ports, else the Ethernet interfaces on a PCI function; of those, the ones behind a
// PCIe switch an accelerator shares (each GPU's own NIC, as on DGX and HGX boards, where the
// storage and management NICs sit on root ports of their own), else the fastest (a PCIe server
// or a VM whose NICs share no switch with a GPU).
std::pair<double, int> fabric_nics(const topo::Machine& machine,
                                   const std::vector<std::vector<std::string>>& chains) {
  std::vector<std::pair<double, std::string>> ports;  // (bytes a second, PCI function)
  for (const bool infiniband : {true, false}) {
    for (const auto& port : machine.ib_ports) {
      if (port.state == 4 && (port.link_layer != "Ethernet") == infiniband) {
        ports.emplace_back(
            (port.data_rate_gbps > 0 ? port.data_rate_gbps : port.rate_gbps) * 1e9 / 8, port.pci);
      }
    }
    if (!ports.empty()) {
      break;
    }
  }
  if (ports.empty()) {
    for (const auto& net : machine.net_interfaces) {
      if (!net.pci.empty() && net.speed_mbps && *net.speed_mbps > 0) {
        ports.emplace_back(static_cast<double>(*net.speed_mbps) * 1e6 / 8, net.pci);
      }
    }
  }
  const bool any_near = std::any_of(ports.begin(), ports.end(), [&](const auto& port) {
    return near_an_accelerator(machine, port.second, chains);
  });
  double fastest = 0;
  for (const auto& [rate, pci] : ports) {
    fastest = std::max(fastest, rate);
  }
  double sum = 0;
  int count = 0;
  for (const auto& [rate, pci] : ports) {
    if (rate > 0 && (any_near ? near_an_accelerator(machine, pci, chains) : rate >= fastest)) {
      sum += rate;
      ++count;
    }
  }
  return {sum, count};
}

// Each GPU's active NVLinks as one link of their summed rate; -1 for a GPU without any.
std::vector<int> add_nvlinks(const topo::Machine& machine,
                             const std::vector<std::vector<std::string>>& chains, NodeModel& node) {
  std::vector<int> nvlink(chains.size(), -1);
  for (std::size_t i = 0; i < chains.size(); ++i) {
    const auto* gpu = machine.nvml_gpu(chains[i].front());
    double rate = 0;
    for (const auto& l : gpu != nullptr ? gpu->nvlinks : std::vector<topo::NvLink>{}) {
      rate += l.active ? nvlink_rate(l.version) : 0;
    }
    if (rate > 0) {
      node.links.push_back(Link{fmt::format("nvlink GPU{}", i), "nvlink", rate, kNvlinkLatency});
      nvlink[i] = static_cast<int>(node.links.size()) - 1;
    }
  }
  return nvlink;
}

}  // namespace

Result<NodeModel> node_from_machine(const topo::Machine& machine) {
  NodeModel node;
  node.origin = machine.origin;
  std::map<std::string, int> link_of;  // PCI address -> link index
  const auto pcie_link = [&](const topo::PciDevice& d) {
    if (const auto it = link_of.find(d.address); it != link_of.end()) {
      return it->second;
    }
    double rate = link_rate(d);
    if (rate <= 0) {
      rate = kAssumedPcie;
      node.notes.push_back(fmt::format("the link speed of {} is unknown: {:.1f} GB/s assumed",
                                       d.address, rate / 1e9));
    }
    node.links.push_back(Link{"pcie " + d.address, "pcie", rate, kPcieLatency});
    const int index = static_cast<int>(node.links.size()) - 1;
    link_of[d.address] = index;
    return index;
  };
  // Each accelerator's chain of addresses up to its root port.
  std::vector<std::vector<std::string>> chains;
  for (const auto& d : machine.pci_devices) {
    if (!is_accelerator(d)) {
      continue;
    }
    std::vector<std::string> chain;
    std::vector<int> up;
    for (const topo::PciDevice* at = &d; at != nullptr;
         at = at->parent.empty() ? nullptr : machine.find(at->parent)) {
      if (std::find(chain.begin(), chain.end(), at->address) != chain.end()) {
        break;  // a loop in a hand-made snapshot: stop where it closes
      }
      chain.push_back(at->address);
      up.push_back(pcie_link(*at));
    }
    node.devices.push_back(fmt::format("GPU{} {} {}", node.devices.size(), d.address,
                                       d.model.empty() ? std::string("accelerator") : d.model));
    node.to_host.push_back(std::move(up));
    chains.push_back(std::move(chain));
  }
  if (node.devices.empty()) {
    return fail(Errc::kNotFound,
                fmt::format("no accelerator in {}: nothing to simulate",
                            machine.origin.empty() ? std::string("the machine") : machine.origin));
  }
  const std::vector<int> nvlink = add_nvlinks(machine, chains, node);
  const std::size_t n = node.devices.size();
  node.peer.assign(n, std::vector<std::vector<int>>(n));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (i != j) {
        node.peer[i][j] = nvlink[i] >= 0 && nvlink[j] >= 0
                              ? std::vector<int>{nvlink[i], nvlink[j]}
                              : pcie_peer(chains[i], node.to_host[i], chains[j], node.to_host[j]);
      }
    }
  }
  if (const auto [nic, ports] = fabric_nics(machine, chains); nic > 0) {
    node.links.push_back(Link{"nic", "nic", nic, kNicLatency});
    node.nic = static_cast<int>(node.links.size()) - 1;
    node.fabric_ports = ports;
  }
  return node;
}

Result<Fabric> parse_fabric(std::string_view text) {
  Fabric f;
  if (text == "single-switch") {
    return f;
  }
  constexpr std::string_view kFat = "fat-tree:";
  if (text.substr(0, kFat.size()) == kFat) {
    const auto digits = text.substr(kFat.size());
    int k = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), k);
    if (ec == std::errc() && end == digits.data() + digits.size() && k >= 2 && k % 2 == 0 &&
        k <= 256) {
      f.kind = FabricKind::kFatTree;
      f.k = k;
      return f;
    }
  }
  return fail(
      Errc::kInvalidArgument,
      fmt::format("--fabric: '{}' is not single-switch or fat-tree:K (K even, 2-256)", text));
}

std::string to_string(const Fabric& fabric) {
  return fabric.kind == FabricKind::kSingleSwitch ? std::string("single-switch")
                                                  : fmt::format("fat-tree:{}", fabric.k);
}

std::vector<RouteHop> route(const Platform& platform, int from, int to) {
  const int n = static_cast<int>(platform.node.devices.size());
  const auto node_of = [n](int d) { return d >= 0 ? d / n : -1 - d; };
  const int a = node_of(from);
  const int b = node_of(to);
  std::vector<RouteHop> hops;
  const auto up = [&](int d, int node) {
    if (d >= 0) {
      for (const int l : platform.node.to_host[static_cast<std::size_t>(d % n)]) {
        hops.push_back({node, l});
      }
    }
  };
  if (a == b) {
    if (from >= 0 && to >= 0 && from != to) {
      for (const int l : platform.node.peer[static_cast<std::size_t>(from % n)]
                                           [static_cast<std::size_t>(to % n)]) {
        hops.push_back({a, l});
      }
    } else if (from != to) {
      up(from >= 0 ? from : to, a);
    }
    return hops;
  }
  up(from, a);
  if (platform.node.nic >= 0) {
    hops.push_back({a, platform.node.nic});
  }
  hops.push_back({-1, 0});  // the fabric: up to the switch and down
  if (platform.node.nic >= 0) {
    hops.push_back({b, platform.node.nic});
  }
  up(to, b);
  return hops;
}

Result<int> device_index(const Platform& platform, std::string_view name) {
  const int per_node = static_cast<int>(platform.node.devices.size());
  int node = 0;
  int gpu = -1;
  const auto colon = name.find(':');
  const std::string_view gpu_text = colon == std::string_view::npos ? name : name.substr(colon + 1);
  const bool node_ok =
      colon == std::string_view::npos ||
      (colon > 1 && name[0] == 'n' &&
       std::from_chars(name.data() + 1, name.data() + colon, node).ptr == name.data() + colon);
  const bool gpu_ok =
      gpu_text.substr(0, 3) == "GPU" && gpu_text.size() > 3 &&
      std::from_chars(gpu_text.data() + 3, gpu_text.data() + gpu_text.size(), gpu).ptr ==
          gpu_text.data() + gpu_text.size();
  if (!node_ok || !gpu_ok || node < 0 || node >= platform.nodes || gpu < 0 || gpu >= per_node) {
    return fail(Errc::kInvalidArgument,
                fmt::format("'{}' is not a device of the platform (n0:GPU0 to n{}:GPU{})", name,
                            platform.nodes - 1, per_node - 1));
  }
  return node * per_node + gpu;
}

Result<std::vector<double>> cooling_factors(const Platform& platform,
                                            const std::vector<std::string>& names, double factor) {
  std::vector<double> factors(static_cast<std::size_t>(platform.devices()), 1.0);
  for (const auto& name : names) {
    ACCO_ASSIGN_OR_RETURN(const int d, device_index(platform, name));
    factors[static_cast<std::size_t>(d)] = factor;
  }
  return factors;
}

double copy_seconds(const Platform& platform, int from, int to, double bytes) {
  if (bytes <= 0 || from == to) {
    return 0;
  }
  double latency = 0;
  double narrowest = std::numeric_limits<double>::infinity();
  for (const auto& hop : route(platform, from, to)) {
    if (hop.node < 0) {
      // Up and down the fabric: two links on one switch, four through a fat tree's spine.
      const int links = platform.fabric.kind == FabricKind::kFatTree ? 4 : 2;
      latency += links * platform.fabric.latency;
      narrowest = std::min(narrowest, platform.fabric_link_bytes_per_second());
    } else {
      const auto& link = platform.node.links[static_cast<std::size_t>(hop.link)];
      latency += link.latency;
      narrowest = std::min(narrowest, link.bytes_per_second);
    }
  }
  return narrowest == std::numeric_limits<double>::infinity() ? 0 : latency + bytes / narrowest;
}

}  // namespace acco::sim
