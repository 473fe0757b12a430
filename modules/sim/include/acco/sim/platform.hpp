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

// A fabric NIC port of a node: one rail of a rail-optimized fabric.
struct Port {
  std::string pci;  // its PCI function ("0000:19:00.0"); empty for a soft RoCE device
  // Its name in the report: the PCI function, with the device and port ("0000:05:00.0
  // mlx4_0/2") where one function carries several ports, or the device alone without one.
  std::string name;
  double bytes_per_second = 0;
  // The PCIe links host memory's copies to it cross: from the root port down to the bridge it
  // shares with its devices (empty for a NIC on a root port of its own: the NIC's own PCIe links
  // are not modelled, only those the GPUs' paths hold).
  std::vector<int> from_host;
  bool operator==(const Port&) const = default;
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
  // The same ports one by one, in PCI order, for rail-optimized fabrics; per device the port
  // behind the lowest PCIe bridge they share (ties spread evenly: two GPUs and two NICs on one
  // switch get one each) and the device's links up to that bridge (its GPUDirect RDMA path).
  std::vector<Port> ports;
  std::vector<int> port_of;
  std::vector<std::vector<int>> to_port;
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
  // NVIDIA's rail-optimized fabric (DGX SuperPOD): port r of every node of a group on the
  // group's leaf switch r, the leaves joined by spines; each GPU sends through its own port.
  kRailOptimized,
};
struct Fabric {
  FabricKind kind = FabricKind::kSingleSwitch;
  // fat-tree: the switches' ports (K/2 nodes under each leaf); rail-optimized: the nodes of a
  // group (a scalable unit: 32 in a DGX H100 SuperPOD).
  int k = 0;
  double bytes_per_second = 50e9;  // each fabric link, per direction (400 Gb/s)
  double latency = 2e-6;           // each fabric link
  // A leaf's down-links over its up-links (1: non-blocking; 4: 4:1 tapered towards the spines).
  int oversubscription = 1;
  bool operator==(const Fabric&) const = default;
};
// "single-switch", "fat-tree:K" (K an even number from 2 to 256), "rail-optimized[:S]" (S
// nodes a group, 1-4096, default 32). kInvalidArgument naming the text and the forms otherwise.
[[nodiscard]] Result<Fabric> parse_fabric(std::string_view text);
// "single-switch", "fat-tree:8", "rail-optimized:32"
[[nodiscard]] std::string to_string(const Fabric& fabric);

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
  [[nodiscard]] bool rails() const { return fabric.kind == FabricKind::kRailOptimized; }
  // Rail-optimized: a node's group, and how many groups.
  [[nodiscard]] int group_of(int node_index) const { return rails() ? node_index / fabric.k : 0; }
  [[nodiscard]] int groups() const { return rails() ? (nodes + fabric.k - 1) / fabric.k : 1; }
  // The links of one node a route may name: the node model's, then (rail-optimized) its ports
  // ("nic 0000:19:00.0", kind nic) and its cables to the rail leaves ("rail 3", kind fabric).
  [[nodiscard]] int links_per_node() const;
  [[nodiscard]] Link link(int index) const;
  // Rail-optimized: the up-link of group g's leaf r towards the spines (hop {-1, g x rails + r}):
  // the group's nodes' ports over the oversubscription.
  [[nodiscard]] Link spine_link(int index) const;
  // What a node's copies may cross on this fabric, for reports: the node model's links, on
  // rails without the summed NIC and with the ports and cables instead.
  [[nodiscard]] std::vector<Link> node_links() const;
  bool operator==(const Platform&) const = default;
};

// What a fabric of `nodes` nodes cannot be: a fat tree whose leaves the nodes do not fill, an
// oversubscription out of 1-64, one a fat tree's spines cannot give (a divisor of K/2), or one
// on a single switch. kInvalidArgument naming what is wrong, as `acco sim` says it.
[[nodiscard]] Status check_fabric(const Fabric& fabric, int nodes);
// check_fabric, and a platform with devices, whose node has NIC ports for rails.
[[nodiscard]] Status check_platform(const Platform& platform);

// The links of a copy between device `from` and device `to` (indices over the whole platform,
// node-major), as (node, link index of Platform::link) pairs and the direction each is crossed
// in (up: towards the root port, away from the sender's device, out of its node); node -1 is
// the fabric's own: link 0 on single-switch and fat-tree (the node's uplink to the first switch
// and back), a leaf's spine link (Platform::spine_link) on rails. For the cost estimates the
// policies are given, and the engine's routes. Host memory of node n is device -1 - n.
//
// On rails a GPU sends through its own port; to a GPU on another rail of its group, through the
// port of the peer on that rail its NVLink reaches (NCCL's PXN), else up through the spines. Host
// memory takes the other end's rail within a group, and its first port across groups (SimGrid
// gives a group one way out per host).
struct RouteHop {
  int node = 0;
  int link = 0;
  bool up = true;
  bool operator==(const RouteHop&) const = default;
};
[[nodiscard]] std::vector<RouteHop> route(const Platform& platform, int from, int to);
// Rail-optimized: the hops from device (or host memory) `from` up to its group's spines, the
// first half of every route to another group.
[[nodiscard]] std::vector<RouteHop> route_out(const Platform& platform, int from);

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
