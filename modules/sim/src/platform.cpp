#include "acco/sim/platform.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "acco/core/units.hpp"

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

// The NIC ports on the fabric and their rates: the active InfiniBand ports, else the active
// RoCE ports, else the Ethernet interfaces on a PCI function; of those, the ones behind a PCIe
// switch an accelerator shares (each GPU's own NIC, as on DGX and HGX boards, where the storage
// and management NICs sit on root ports of their own), else the fastest (a PCIe server or a VM
// whose NICs share no switch with a GPU). In PCI order.
std::vector<Port> fabric_nics(const topo::Machine& machine,
                              const std::vector<std::vector<std::string>>& chains) {
  // (bytes a second, PCI function, what names the port: "mlx5_0/1", or its interface)
  std::vector<std::tuple<double, std::string, std::string>> ports;
  for (const bool infiniband : {true, false}) {
    for (const auto& port : machine.ib_ports) {
      if (port.state == 4 && (port.link_layer != "Ethernet") == infiniband) {
        ports.emplace_back(
            (port.data_rate_gbps > 0 ? port.data_rate_gbps : port.rate_gbps) * 1e9 / 8, port.pci,
            fmt::format("{}/{}", port.device, port.port));
      }
    }
    if (!ports.empty()) {
      break;
    }
  }
  if (ports.empty()) {
    for (const auto& net : machine.net_interfaces) {
      if (!net.pci.empty() && net.speed_mbps && *net.speed_mbps > 0) {
        ports.emplace_back(static_cast<double>(*net.speed_mbps) * 1e6 / 8, net.pci, net.name);
      }
    }
  }
  const bool any_near = std::any_of(ports.begin(), ports.end(), [&](const auto& port) {
    return near_an_accelerator(machine, std::get<1>(port), chains);
  });
  double fastest = 0;
  for (const auto& [rate, pci, label] : ports) {
    fastest = std::max(fastest, rate);
  }
  std::vector<Port> chosen;
  std::vector<std::string> labels;
  for (const auto& [rate, pci, label] : ports) {
    if (rate > 0 && (any_near ? near_an_accelerator(machine, pci, chains) : rate >= fastest)) {
      chosen.push_back(Port{pci, pci, rate, {}});
      labels.push_back(label);
    }
  }
  // A port is named by its PCI function, and by its device and port where one function carries
  // several (ConnectX-3's two ports) or none (a soft RoCE device): link names must be unique.
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const auto same = std::count_if(chosen.begin(), chosen.end(),
                                    [&](const Port& p) { return p.pci == chosen[i].pci; });
    if (chosen[i].pci.empty() || same > 1) {
      chosen[i].name = chosen[i].pci.empty() ? labels[i] : chosen[i].pci + " " + labels[i];
    }
  }
  std::stable_sort(chosen.begin(), chosen.end(),
                   [](const Port& a, const Port& b) { return a.name < b.name; });
  return chosen;
}

// The bridges above a PCI function, nearest first.
std::vector<std::string> bridges_above(const topo::Machine& machine, const std::string& pci) {
  std::vector<std::string> above;
  const topo::PciDevice* d = machine.find(pci);
  for (int depth = 0; d != nullptr && !d->parent.empty() && depth < 64; ++depth) {
    above.push_back(d->parent);
    d = machine.find(d->parent);
  }
  return above;
}

// Where a device's chain meets a port's bridges: the index in the chain of the lowest bridge
// above the device that the port also hangs under (the chain's length when they meet at the
// root complex).
std::size_t meeting_point(const std::vector<std::string>& chain,
                          const std::vector<std::string>& above) {
  for (std::size_t a = 1; a < chain.size(); ++a) {
    if (std::find(above.begin(), above.end(), chain[a]) != above.end()) {
      return a;
    }
  }
  return chain.size();
}

// Each device's port (the nearest; among equals the one fewest devices have so far), its links
// up to where they meet, and each port's links from the root port down to there.
void assign_ports(const topo::Machine& machine, const std::vector<std::vector<std::string>>& chains,
                  NodeModel& node) {
  const std::size_t n = chains.size();
  node.port_of.assign(n, -1);
  node.to_port.assign(n, {});
  if (node.ports.empty()) {
    return;
  }
  std::vector<std::vector<std::string>> above;
  above.reserve(node.ports.size());
  for (const auto& port : node.ports) {
    above.push_back(bridges_above(machine, port.pci));
  }
  std::vector<std::size_t> taken(node.ports.size(), 0);
  std::vector<std::size_t> best_meet(node.ports.size(), std::numeric_limits<std::size_t>::max());
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t best = 0;
    std::size_t best_at = std::numeric_limits<std::size_t>::max();
    for (std::size_t r = 0; r < node.ports.size(); ++r) {
      const std::size_t at = meeting_point(chains[i], above[r]);
      if (at < best_at || (at == best_at && taken[r] < taken[best])) {
        best = r;
        best_at = at;
      }
      if (at < best_meet[r]) {
        best_meet[r] = at;
        const auto& up = node.to_host[i];
        node.ports[r].from_host.assign(up.begin() + static_cast<std::ptrdiff_t>(at), up.end());
        std::reverse(node.ports[r].from_host.begin(), node.ports[r].from_host.end());
      }
    }
    ++taken[best];
    node.port_of[i] = static_cast<int>(best);
    const auto& up = node.to_host[i];
    node.to_port[i].assign(up.begin(), up.begin() + static_cast<std::ptrdiff_t>(best_at));
  }
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
  node.ports = fabric_nics(machine, chains);
  if (!node.ports.empty()) {
    double nic = 0;
    for (const auto& port : node.ports) {
      nic += port.bytes_per_second;
    }
    node.links.push_back(Link{"nic", "nic", nic, kNicLatency});
    node.nic = static_cast<int>(node.links.size()) - 1;
    node.fabric_ports = static_cast<int>(node.ports.size());
  }
  assign_ports(machine, chains, node);
  return node;
}

namespace {

// The number after `prefix` in `text`, when it is all digits and from `low` to `high`.
std::optional<int> number_after(std::string_view text, std::string_view prefix, int low, int high) {
  if (text.substr(0, prefix.size()) != prefix) {
    return std::nullopt;
  }
  const auto value = units::parse_int(text.substr(prefix.size()));
  if (!value || *value < low || *value > high) {
    return std::nullopt;
  }
  return static_cast<int>(*value);
}

constexpr int kRailGroup = 32;  // a DGX H100 SuperPOD's scalable unit

}  // namespace

Result<Fabric> parse_fabric(std::string_view text) {
  Fabric f;
  if (text == "single-switch") {
    return f;
  }
  if (const auto k = number_after(text, "fat-tree:", 2, 256); k && *k % 2 == 0) {
    f.kind = FabricKind::kFatTree;
    f.k = *k;
    return f;
  }
  if (text == "rail-optimized") {
    f.kind = FabricKind::kRailOptimized;
    f.k = kRailGroup;
    return f;
  }
  if (const auto s = number_after(text, "rail-optimized:", 1, 4096)) {
    f.kind = FabricKind::kRailOptimized;
    f.k = *s;
    return f;
  }
  return fail(Errc::kInvalidArgument,
              fmt::format("--fabric: '{}' is not single-switch, fat-tree:K (K even, 2-256) or "
                          "rail-optimized[:S] (S nodes a group, 1-4096)",
                          text));
}

std::string to_string(const Fabric& fabric) {
  switch (fabric.kind) {
    case FabricKind::kFatTree:
      return fmt::format("fat-tree:{}", fabric.k);
    case FabricKind::kRailOptimized:
      return fmt::format("rail-optimized:{}", fabric.k);
    case FabricKind::kSingleSwitch:
      break;
  }
  return "single-switch";
}

int Platform::links_per_node() const {
  const int own = static_cast<int>(node.links.size());
  return rails() ? own + 2 * static_cast<int>(node.ports.size()) : own;
}

Link Platform::link(int index) const {
  const int own = static_cast<int>(node.links.size());
  if (index < own) {
    return node.links[static_cast<std::size_t>(index)];
  }
  const int ports = static_cast<int>(node.ports.size());
  if (index < own + ports) {
    const auto& port = node.ports[static_cast<std::size_t>(index - own)];
    return Link{"nic " + port.name, "nic", port.bytes_per_second, kNicLatency};
  }
  return Link{fmt::format("rail {}", index - own - ports), "fabric", fabric.bytes_per_second,
              fabric.latency};
}

std::vector<Link> Platform::node_links() const {
  std::vector<Link> out;
  for (int i = 0; i < links_per_node(); ++i) {
    if (!rails() || i != node.nic) {
      out.push_back(link(i));
    }
  }
  return out;
}

Link Platform::spine_link(int index) const {
  const int rails_count = std::max(1, static_cast<int>(node.ports.size()));
  return Link{fmt::format("group {} leaf {} spines", index / rails_count, index % rails_count),
              "fabric", fabric.bytes_per_second * fabric.k / fabric.oversubscription,
              fabric.latency};
}

Status check_fabric(const Fabric& f, int nodes) {
  // What parse_fabric never gives, a hand-made value may hold: no K, or no group.
  if ((f.kind == FabricKind::kFatTree && (f.k < 2 || f.k % 2 != 0)) ||
      (f.kind == FabricKind::kRailOptimized && f.k < 1)) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: {} is not a fabric's size", to_string(f), f.k));
  }
  if (f.oversubscription < 1 || f.oversubscription > 64) {
    return fail(Errc::kInvalidArgument,
                fmt::format("--oversubscription {} is not from 1 to 64", f.oversubscription));
  }
  switch (f.kind) {
    case FabricKind::kSingleSwitch:
      if (f.oversubscription != 1) {
        return fail(Errc::kInvalidArgument,
                    "--oversubscription: a single switch has no up-links to taper");
      }
      break;
    case FabricKind::kFatTree:
      if ((f.k / 2) % f.oversubscription != 0) {
        return fail(Errc::kInvalidArgument,
                    fmt::format("--oversubscription {} on {}: the {} up-links of a leaf divide "
                                "only by a divisor of {}",
                                f.oversubscription, to_string(f), f.k / 2, f.k / 2));
      }
      if (nodes > 1 && nodes % (f.k / 2) != 0) {
        return fail(Errc::kInvalidArgument,
                    fmt::format("--nodes {} on {}: each leaf switch takes {} nodes, so the count "
                                "must be a multiple of {}",
                                nodes, to_string(f), f.k / 2, f.k / 2));
      }
      break;
    case FabricKind::kRailOptimized:
      break;
  }
  return {};
}

Status check_platform(const Platform& platform) {
  if (platform.node.devices.empty() || platform.nodes < 1) {
    return fail(Errc::kInvalidArgument, "the platform has no device");
  }
  ACCO_RETURN_IF_ERROR(check_fabric(platform.fabric, platform.nodes));
  const auto& f = platform.fabric;
  if (f.kind == FabricKind::kRailOptimized) {
    if (platform.node.ports.empty() ||
        platform.node.port_of.size() != platform.node.devices.size() ||
        platform.node.to_port.size() != platform.node.devices.size()) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("{}: {} has no fabric NIC port to put on a rail", to_string(f),
                              platform.node.origin.empty() ? std::string("the node")
                                                           : platform.node.origin));
    }
  }
  return {};
}

namespace {

// A device's links up to host memory, or back down when `up` is false (reversed).
void host_path(const Platform& p, int device, int node, bool up, std::vector<RouteHop>& hops) {
  const int n = static_cast<int>(p.node.devices.size());
  const auto& links = p.node.to_host[static_cast<std::size_t>(device % n)];
  const std::size_t first = hops.size();
  for (const int l : links) {
    hops.push_back({node, l, up});
  }
  if (!up) {
    std::reverse(hops.begin() + static_cast<std::ptrdiff_t>(first), hops.end());
  }
}

// Within a node: a peer copy's links (the sender's up, the receiver's down), or a device's path
// to or from host memory.
void node_route(const Platform& p, int from, int to, int node, std::vector<RouteHop>& hops) {
  const int n = static_cast<int>(p.node.devices.size());
  if (from == to) {
    return;
  }
  if (from >= 0 && to >= 0) {
    // A peer route starts with the sender's own link (its PCIe link, or its NVLink), then its
    // links up to the common switch; the receiver's follow, crossed down.
    const auto i = static_cast<std::size_t>(from % n);
    const auto& mine = p.node.to_host[i];
    const auto& links = p.node.peer[i][static_cast<std::size_t>(to % n)];
    for (std::size_t k = 0; k < links.size(); ++k) {
      const bool up = k == 0 || std::find(mine.begin(), mine.end(), links[k]) != mine.end();
      hops.push_back({node, links[k], up});
    }
  } else if (from >= 0) {
    host_path(p, from, node, true, hops);
  } else if (to >= 0) {
    host_path(p, to, node, false, hops);
  }
}

// One end of a rail route, from device (or memory) `d` of `node` out through port `rail` to its
// cable (`out`), or the same links back in (reversed, crossed down).
std::vector<RouteHop> rail_end(const Platform& p, int d, int node, int rail, bool out) {
  const int n = static_cast<int>(p.node.devices.size());
  const int own = static_cast<int>(p.node.links.size());
  const int ports = static_cast<int>(p.node.ports.size());
  std::vector<RouteHop> hops;
  if (d >= 0) {
    for (const int l : p.node.to_port[static_cast<std::size_t>(d % n)]) {
      hops.push_back({node, l, true});
    }
  } else {
    for (const int l : p.node.ports[static_cast<std::size_t>(rail)].from_host) {
      hops.push_back({node, l, false});
    }
  }
  hops.push_back({node, own + rail, true});
  hops.push_back({node, own + ports + rail, true});
  if (!out) {
    std::reverse(hops.begin(), hops.end());
    for (auto& h : hops) {
      h.up = !h.up;
    }
  }
  return hops;
}

// A device of the same node on `rail` that `d`'s NVLink reaches (NCCL's PXN relay), or -1.
int relay_on(const Platform& p, int d, int rail) {
  const int n = static_cast<int>(p.node.devices.size());
  const auto i = static_cast<std::size_t>(d % n);
  for (std::size_t j = 0; j < static_cast<std::size_t>(n); ++j) {
    const auto& peer = p.node.peer[i][j];
    // Peers over NVLink meet through their two NVLinks (node_from_machine).
    if (j != i && p.node.port_of[j] == rail && !peer.empty() &&
        p.node.links[static_cast<std::size_t>(peer.front())].kind == "nvlink") {
      return d - d % n + static_cast<int>(j);
    }
  }
  return -1;
}

std::vector<RouteHop> rail_route(const Platform& p, int from, int to, int a, int b) {
  const int n = static_cast<int>(p.node.devices.size());
  const int rails = static_cast<int>(p.node.ports.size());
  const bool same_group = p.group_of(a) == p.group_of(b);
  const auto rail_of = [&](int d) { return p.node.port_of[static_cast<std::size_t>(d % n)]; };
  int out = from >= 0 ? rail_of(from) : (same_group && to >= 0 ? rail_of(to) : 0);
  const int in = to >= 0 ? rail_of(to) : (same_group && from >= 0 ? rail_of(from) : 0);
  std::vector<RouteHop> hops;
  int sender = from;
  if (same_group && out != in && from >= 0) {
    if (const int relay = relay_on(p, from, in); relay >= 0) {
      node_route(p, from, relay, a, hops);
      sender = relay;
      out = in;
    }
  }
  const auto first = rail_end(p, sender, a, out, true);
  hops.insert(hops.end(), first.begin(), first.end());
  if (!same_group || out != in) {
    hops.push_back({-1, p.group_of(a) * rails + out, true});
    hops.push_back({-1, p.group_of(b) * rails + in, false});
  }
  const auto last = rail_end(p, to, b, in, false);
  hops.insert(hops.end(), last.begin(), last.end());
  return hops;
}

}  // namespace

std::vector<RouteHop> route_out(const Platform& platform, int from) {
  const int n = static_cast<int>(platform.node.devices.size());
  const int node = from >= 0 ? from / n : -1 - from;
  const int rail = from >= 0 ? platform.node.port_of[static_cast<std::size_t>(from % n)] : 0;
  auto hops = rail_end(platform, from, node, rail, true);
  hops.push_back(
      {-1, platform.group_of(node) * static_cast<int>(platform.node.ports.size()) + rail, true});
  return hops;
}

std::vector<RouteHop> route(const Platform& platform, int from, int to) {
  const int n = static_cast<int>(platform.node.devices.size());
  const auto node_of = [n](int d) { return d >= 0 ? d / n : -1 - d; };
  const int a = node_of(from);
  const int b = node_of(to);
  std::vector<RouteHop> hops;
  if (a == b) {
    node_route(platform, from, to, a, hops);
    return hops;
  }
  if (platform.rails()) {
    return rail_route(platform, from, to, a, b);
  }
  if (from >= 0) {
    host_path(platform, from, a, true, hops);
  }
  if (platform.node.nic >= 0) {
    hops.push_back({a, platform.node.nic, true});
  }
  hops.push_back({-1, 0, true});  // the fabric: up to the switch and down
  if (platform.node.nic >= 0) {
    hops.push_back({b, platform.node.nic, false});
  }
  if (to >= 0) {
    host_path(platform, to, b, false, hops);
  }
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
    if (hop.node < 0 && !platform.rails()) {
      // Up and down the fabric: two links on one switch, four through a fat tree's spine.
      const int links = platform.fabric.kind == FabricKind::kFatTree ? 4 : 2;
      latency += links * platform.fabric.latency;
      narrowest = std::min(narrowest, platform.fabric_link_bytes_per_second());
    } else {
      const Link link = hop.node < 0 ? platform.spine_link(hop.link) : platform.link(hop.link);
      latency += link.latency;
      narrowest = std::min(narrowest, link.bytes_per_second);
    }
  }
  return narrowest == std::numeric_limits<double>::infinity() ? 0 : latency + bytes / narrowest;
}

}  // namespace acco::sim
