// fabric_bound: the bytes a pinned run must move across each node's fabric link and each leaf's
// or group's links to the spines, at the least once a datum's version crosses each.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "acco/sched/access.hpp"
#include "acco/sim/simulate.hpp"

namespace acco::sim {
namespace {

// Bytes out of and into each unit (a node, or a leaf or group of nodes).
struct Crossings {
  std::vector<double> out;
  std::vector<double> in;
  explicit Crossings(std::size_t units) : out(units, 0), in(units, 0) {}

  // A version written in unit `from` and read in `readers` (units, any order, repeats allowed).
  void add(int from, std::vector<int>& readers, double bytes) {
    std::sort(readers.begin(), readers.end());
    readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
    bool leaves = false;
    for (const int r : readers) {
      if (r != from) {
        in[static_cast<std::size_t>(r)] += bytes;
        leaves = true;
      }
    }
    if (leaves) {
      out[static_cast<std::size_t>(from)] += bytes;
    }
  }

  [[nodiscard]] double seconds(double bytes_per_second) const {
    double most = 0;
    for (std::size_t u = 0; u < out.size(); ++u) {
      most = std::max({most, out[u], in[u]});
    }
    return bytes_per_second > 0 ? most / bytes_per_second : 0;
  }
};

}  // namespace

double fabric_bound(const Platform& p, const sched::Workload& w, const std::vector<int>& pinned,
                    const std::vector<int>& home) {
  const int per_node = static_cast<int>(p.node.devices.size());
  if (p.nodes < 2 || per_node == 0 || pinned.size() != w.tasks.size() ||
      std::any_of(pinned.begin(), pinned.end(), [&](int d) { return d < 0 || d >= p.devices(); })) {
    return 0;
  }
  // The units above a node: a fat tree's leaves (K/2 nodes), a rail fabric's groups; their
  // links to the spines per direction.
  int unit_nodes = p.nodes;
  double unit_rate = 0;
  if (p.fabric.kind == FabricKind::kFatTree && p.fabric.k >= 2) {
    unit_nodes = p.fabric.k / 2;
    const int spines = unit_nodes / p.fabric.oversubscription;  // check_fabric: R divides K/2
    unit_rate = p.fabric_link_bytes_per_second() * spines;
  } else if (p.rails()) {
    unit_nodes = p.fabric.k;
    unit_rate = static_cast<double>(std::max<std::size_t>(1, p.node.ports.size())) *
                p.spine_link(0).bytes_per_second;
  }
  const int units = (p.nodes + unit_nodes - 1) / unit_nodes;
  Crossings nodes(static_cast<std::size_t>(p.nodes));
  Crossings above(static_cast<std::size_t>(units));
  // Per datum, its current version: the node that wrote it (or holds it first) and the nodes
  // that read it since.
  std::vector<int> writer(w.data_bytes.size());
  std::vector<std::vector<int>> readers(w.data_bytes.size());
  for (std::size_t i = 0; i < writer.size(); ++i) {
    writer[i] = home.size() == writer.size()
                    ? home[i]
                    : static_cast<int>(i % static_cast<std::size_t>(p.nodes));
  }
  const auto close = [&](std::size_t datum) {
    auto& r = readers[datum];
    if (r.empty()) {
      return;
    }
    const auto bytes = static_cast<double>(w.data_bytes[datum]);
    std::vector<int> up;
    up.reserve(r.size());
    for (const int node : r) {
      up.push_back(node / unit_nodes);
    }
    nodes.add(writer[datum], r, bytes);
    above.add(writer[datum] / unit_nodes, up, bytes);
    r.clear();
  };
  for (std::size_t t = 0; t < w.tasks.size(); ++t) {
    const int node = pinned[t] / per_node;
    for (const auto& [datum, mode] : w.tasks[t].accesses) {
      if (datum < readers.size() && sched::reads(mode)) {
        readers[datum].push_back(node);
      }
    }
    for (const auto& [datum, mode] : w.tasks[t].accesses) {
      if (datum < readers.size() && sched::writes(mode)) {
        close(datum);
        writer[datum] = node;
      }
    }
  }
  for (std::size_t datum = 0; datum < readers.size(); ++datum) {
    close(datum);
  }
  return std::max(nodes.seconds(p.fabric_link_bytes_per_second()),
                  units > 1 ? above.seconds(unit_rate) : 0.0);
}

}  // namespace acco::sim
