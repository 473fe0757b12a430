// What `acco sim` simulates: a node taken from acco's own machine model (its accelerators, the
// PCIe links from each one up to its root port, with the switch uplinks that several share,
// NVLink through NVSwitch where NVML listed it, and the node's NICs) repeated over a fabric. A
// value: the SimGrid platform is built from it (simulate.hpp), and tests compare it as it is.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/topo/machine.hpp"

namespace acco::sim {

// One link as SimGrid shares it: every transfer crossing it gets a share of its bandwidth.
struct Link {
  std::string name;  // unique within a node: "pcie 0000:18:00.0", "nvlink GPU0", "nic"
  std::string kind;  // "pcie", "nvlink", "nic", "fabric"
  double bytes_per_second = 0;
  double latency = 0;  // seconds
  // False: every flow gets the whole bandwidth (SimGrid's FATPIPE), the contention-free network
  // list schedulers such as HEFT assume; for checking them, not for real links.
  bool shared = true;
  bool operator==(const Link&) const = default;
};

struct NodeModel {
  std::string origin;                // the machine's origin ("/", "sysroot DIR", ...)
  std::vector<std::string> devices;  // "GPU0 0000:18:00.0 NVIDIA H100 80GB HBM3"
  std::vector<Link> links;
  // Per device: the links from it to host memory, the device's own first (its PCIe path).
  std::vector<std::vector<int>> to_host;
  // Per pair of devices [i][j] (i != j): the links a peer copy crosses (NVLink, or PCIe up to
  // the lowest common switch and down); [i][i] is empty.
  std::vector<std::vector<std::vector<int>>> peer;
  int nic = -1;  // the link from host memory to the fabric; -1 when the node has no NIC
  // The NIC ports the node has on the fabric (the `nic` link is their sum); each is one port of
  // the fabric's switches. 0 without a NIC: the node then takes one port.
  int fabric_ports = 0;
  // Assumptions made where the machine did not say ("GPU0's link speed is unknown: 32 GB/s").
  std::vector<std::string> notes;
  bool operator==(const NodeModel&) const = default;
};

// The accelerators of `machine` (GPUs and processing accelerators) and their links. A machine
// with none is kNotFound ("no accelerator in ORIGIN: nothing to simulate").
[[nodiscard]] Result<NodeModel> node_from_machine(const topo::Machine& machine);

enum class FabricKind {
  kSingleSwitch,  // every node's NIC on one switch
  kFatTree,       // a two-level fat tree of K-port switches (SimGrid's FatTreeZone)
};
struct Fabric {
  FabricKind kind = FabricKind::kSingleSwitch;
  int k = 0;                       // fat-tree: nodes under each leaf switch (K/2 up-links)
  double bytes_per_second = 50e9;  // each fabric link, per direction (400 Gb/s)
  double latency = 2e-6;           // each fabric link
  bool operator==(const Fabric&) const = default;
};
// "single-switch", "fat-tree:K" (K an even number >= 2). kInvalidArgument naming the text and
// the forms otherwise.
[[nodiscard]] Result<Fabric> parse_fabric(std::string_view text);
[[nodiscard]] std::string to_string(const Fabric& fabric);  // "single-switch", "fat-tree:8"

struct Platform {
  NodeModel node;
  int nodes = 1;
  Fabric fabric;
  [[nodiscard]] int devices() const { return nodes * static_cast<int>(node.devices.size()); }
  // A node's fabric link: its ports together, each at the fabric's rate (a DGX H100's eight
  // NDR ports reach its leaf at 8 x 400 Gb/s). SimGrid's fat tree has one rate for every link,
  // so a fat tree's every link carries a node's ports together: its leaves take K/2 nodes.
  [[nodiscard]] double fabric_link_bytes_per_second() const {
    return fabric.bytes_per_second * (node.fabric_ports > 0 ? node.fabric_ports : 1);
  }
  bool operator==(const Platform&) const = default;
};

// The links of a copy between device `from` and device `to` (indices over the whole platform,
// node-major), as (node, link index) pairs with node -1 for the fabric's own links (the node's
// uplink to the first switch and back); for the cost estimates the policies are given. Host
// memory of node n is device -1 - n.
struct RouteHop {
  int node = 0;
  int link = 0;
  bool operator==(const RouteHop&) const = default;
};
[[nodiscard]] std::vector<RouteHop> route(const Platform& platform, int from, int to);

// The platform index of the device named "nN:GPUi" (or "GPUi", node 0), as reports name it
// ("n3 GPU5"). kInvalidArgument naming the name and the platform's range otherwise.
[[nodiscard]] Result<int> device_index(const Platform& platform, std::string_view name);

// Every device's cooling factor (SimOptions::cooling): `factor` for the devices named (as
// device_index reads them), 1 for the others. Errors as device_index.
[[nodiscard]] Result<std::vector<double>> cooling_factors(const Platform& platform,
                                                          const std::vector<std::string>& names,
                                                          double factor);

// The time a copy of `bytes` takes alone on its route: the sum of latencies plus bytes over the
// narrowest link's bandwidth (what SimGrid gives a single flow).
[[nodiscard]] double copy_seconds(const Platform& platform, int from, int to, double bytes);

}  // namespace acco::sim
