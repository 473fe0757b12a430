// The node model from the canned machines' sysfs trees: what links a GPU's copies cross.
#include "acco/sim/platform.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"
#include "acco/topo/generated.hpp"
#include "acco/topo/probe.hpp"

#include "machines.hpp"

namespace acco::sim {
namespace {

using ::acco::testing::IsOk;
using ::testing::HasSubstr;

topo::Machine probe_dir(const std::filesystem::path& root) {
  topo::ProbeRequest request;
  request.sysroot = root.string();
  request.nvml = topo::NvmlMode::kOff;
  auto r = topo::probe(request);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? r->machine : topo::Machine{};
}

std::vector<std::string> names(const NodeModel& node, const std::vector<int>& links) {
  std::vector<std::string> out;
  for (const int l : links) {
    out.push_back(node.links[static_cast<std::size_t>(l)].name);
  }
  return out;
}

TEST(PlatformTest, ADgxGpuCrossesItsSwitchUplinkAndPeersMeetAtTheirSwitch) {
  acco::testing::TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  auto node = node_from_machine(probe_dir(dir.path()));
  ASSERT_THAT(node, IsOk());
  ASSERT_EQ(node->devices.size(), 8U);
  EXPECT_THAT(node->devices[0], HasSubstr("GPU0 0000:18:00.0"));
  // GPU0's own link first, then the switch ports above it up to the root port.
  const auto up = names(*node, node->to_host[0]);
  ASSERT_GE(up.size(), 3U);
  EXPECT_EQ(up[0], "pcie 0000:18:00.0");
  // GPU0 and GPU1 sit under different switches: their copies cross both paths; no NVLink
  // without NVML.
  const auto peer = names(*node, node->peer[0][1]);
  EXPECT_EQ(peer.front(), "pcie 0000:18:00.0");
  EXPECT_EQ(peer.back(), "pcie 0000:2a:00.0");
  EXPECT_TRUE(node->peer[0][0].empty());
  // Eight NDR ports up (and the storage ports): at least 8 x 400 Gb/s from the node.
  ASSERT_GE(node->nic, 0);
  EXPECT_GE(node->links[static_cast<std::size_t>(node->nic)].bytes_per_second, 8 * 400e9 / 8);
  // A Gen5 x16 link: 63 GB/s less protocol overhead; a narrowed GPU link is narrower.
  const double healthy =
      node->links[static_cast<std::size_t>(node->to_host[0][0])].bytes_per_second;
  EXPECT_GT(healthy, 40e9);
  acco::testing::TempDir narrow;
  acco::testing::write_dgx_h100(narrow.path(), {.gpu_width_x8 = 0});
  const auto x8 = node_from_machine(probe_dir(narrow.path()));
  ASSERT_THAT(x8, IsOk());
  EXPECT_NEAR(x8->links[static_cast<std::size_t>(x8->to_host[0][0])].bytes_per_second, healthy / 2,
              healthy * 0.01);
}

// The generated DGX H100 is the test sysroot's DGX H100: every PCIe link a GPU's copies
// cross, at the same rate, and the same NIC rate; it adds what only NVML would say, the 18
// NVLink 4.0 links of each GPU (450 GB/s a direction), over which the peers meet.
TEST(PlatformTest, TheGeneratedDgxH100IsTheTestSysrootsDgxWithItsNvlinks) {
  acco::testing::TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  auto probed = node_from_machine(probe_dir(dir.path()));
  auto machine = topo::generated_machine("dgx-h100");
  ASSERT_THAT(machine, IsOk());
  EXPECT_EQ(machine->origin, "generated dgx-h100");
  auto generated = node_from_machine(*machine);
  ASSERT_THAT(probed, IsOk());
  ASSERT_THAT(generated, IsOk());
  ASSERT_EQ(generated->devices.size(), probed->devices.size());
  const auto links_of = [](const NodeModel& node, const std::vector<int>& path) {
    std::vector<std::pair<std::string, double>> out;
    for (const int l : path) {
      const auto& link = node.links[static_cast<std::size_t>(l)];
      out.emplace_back(link.name, link.bytes_per_second);
    }
    return out;
  };
  for (std::size_t i = 0; i < probed->devices.size(); ++i) {
    EXPECT_EQ(links_of(*generated, generated->to_host[i]), links_of(*probed, probed->to_host[i]))
        << "GPU" << i;
    EXPECT_EQ(generated->devices[i].substr(0, 17), probed->devices[i].substr(0, 17));
  }
  ASSERT_GE(generated->nic, 0);
  EXPECT_EQ(generated->links[static_cast<std::size_t>(generated->nic)].bytes_per_second,
            probed->links[static_cast<std::size_t>(probed->nic)].bytes_per_second);
  // The fabric ports are the eight NDR ones; the two 100 GbE management ports are not.
  EXPECT_EQ(probed->fabric_ports, 8);
  EXPECT_EQ(generated->fabric_ports, 8);
  EXPECT_DOUBLE_EQ(generated->links[static_cast<std::size_t>(generated->nic)].bytes_per_second,
                   8 * 400e9 / 8);
  EXPECT_THAT(names(*generated, generated->peer[0][1]),
              ::testing::ElementsAre("nvlink GPU0", "nvlink GPU1"));
  EXPECT_DOUBLE_EQ(
      generated->links[static_cast<std::size_t>(generated->peer[0][1][0])].bytes_per_second,
      18 * 25e9);
}

// The fabric ports are the NICs that share a PCIe switch with a GPU, whatever their speed: a
// DGX H100 whose storage ports are 400 Gb/s InfiniBand too still has eight on the fabric.
TEST(PlatformTest, FabricPortsAreTheNicsBesideTheGpus) {
  auto machine = topo::generated_machine("dgx-h100");
  ASSERT_THAT(machine, IsOk());
  for (auto& port : machine->ib_ports) {
    if (port.device == "mlx5_8" || port.device == "mlx5_9") {
      port.link_layer = "InfiniBand";
      port.rate_gbps = 400;
      port.data_rate_gbps = 400;
    }
  }
  auto node = node_from_machine(*machine);
  ASSERT_THAT(node, IsOk());
  EXPECT_EQ(node->fabric_ports, 8);
  EXPECT_DOUBLE_EQ(node->links[static_cast<std::size_t>(node->nic)].bytes_per_second,
                   8 * 400e9 / 8);
}

// The other generated nodes: an A100 board whose peers meet over NVLink 3.0 (12 x 25 GB/s) and
// whose GPU pairs share a Gen4 switch uplink, and a PCIe server whose peers meet in the root
// complex; an unknown name lists the known ones.
TEST(PlatformTest, GeneratedNodesHaveTheirVendorsLinks) {
  auto a100 = topo::generated_machine("hgx-a100");
  ASSERT_THAT(a100, IsOk());
  auto node = node_from_machine(*a100);
  ASSERT_THAT(node, IsOk());
  ASSERT_EQ(node->devices.size(), 8U);
  EXPECT_THAT(node->devices[0], HasSubstr("0000:07:00.0 NVIDIA A100-SXM4-80GB"));
  EXPECT_DOUBLE_EQ(node->links[static_cast<std::size_t>(node->peer[0][5][0])].bytes_per_second,
                   12 * 25e9);
  // GPU0 and GPU1 share their switch's uplink (the third link up from each).
  ASSERT_EQ(node->to_host[0].size(), 4U);
  EXPECT_EQ(node->to_host[0][2], node->to_host[1][2]);
  EXPECT_NE(node->to_host[0][2], node->to_host[2][2]);
  // Eight HDR ports: 8 x 200 Gb/s.
  EXPECT_DOUBLE_EQ(node->links[static_cast<std::size_t>(node->nic)].bytes_per_second, 200e9);
  EXPECT_EQ(node->fabric_ports, 8);

  auto pcie = topo::generated_machine("pcie-4gpu");
  ASSERT_THAT(pcie, IsOk());
  node = node_from_machine(*pcie);
  ASSERT_THAT(node, IsOk());
  ASSERT_EQ(node->devices.size(), 4U);
  EXPECT_EQ(node->fabric_ports, 1);
  // An L40S trains at Gen4 x16 in its Gen5 root port, which reports the same link.
  ASSERT_EQ(node->to_host[0].size(), 2U);
  EXPECT_EQ(node->links[static_cast<std::size_t>(node->to_host[0][0])].bytes_per_second,
            node->links[static_cast<std::size_t>(node->to_host[0][1])].bytes_per_second);
  EXPECT_EQ(names(*node, node->peer[0][1]),
            (std::vector<std::string>{"pcie 0000:01:00.0", "pcie 0000:00:01.1", "pcie 0000:20:01.1",
                                      "pcie 0000:21:00.0"}));

  const auto unknown = topo::generated_machine("dgx-b200");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().message,
            "'dgx-b200' is not a generated node: one of dgx-h100, hgx-a100, pcie-4gpu");
}

TEST(PlatformTest, AMachineWithoutAcceleratorsHasNothingToSimulate) {
  acco::testing::TempDir dir;
  acco::testing::write_ci_vm(dir.path());
  const auto node = node_from_machine(probe_dir(dir.path()));
  ASSERT_FALSE(node.has_value());
  EXPECT_EQ(node.error().code, Errc::kNotFound);
  EXPECT_THAT(node.error().message, HasSubstr("no accelerator in sysroot"));
}

// Devices are named as the report names them; a name the platform lacks says its range.
TEST(PlatformTest, DevicesAreFoundByTheirReportsNames) {
  Platform p;
  p.node.devices.assign(8, "GPU");
  p.nodes = 4;
  EXPECT_EQ(*device_index(p, "n3:GPU5"), 29);
  EXPECT_EQ(*device_index(p, "GPU2"), 2);
  for (const auto* bad : {"n4:GPU0", "n0:GPU8", "GPU", "n:GPU1", "gpu1", "n1:", "n-1:GPU0", ""}) {
    const auto r = device_index(p, bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().message, fmt::format("'{}' is not a device of the platform (n0:GPU0 to "
                                             "n3:GPU7)",
                                             bad));
  }
  const auto factors = cooling_factors(p, {"n1:GPU0", "GPU7"}, 4);
  ASSERT_THAT(factors, IsOk());
  EXPECT_EQ(factors->size(), 32U);
  EXPECT_EQ((*factors)[8], 4);
  EXPECT_EQ((*factors)[7], 4);
  EXPECT_EQ((*factors)[0], 1);
}

TEST(PlatformTest, FabricsParseOrSayWhatIsExpected) {
  EXPECT_EQ(parse_fabric("single-switch")->kind, FabricKind::kSingleSwitch);
  const auto fat = parse_fabric("fat-tree:8");
  ASSERT_THAT(fat, IsOk());
  EXPECT_EQ(fat->k, 8);
  EXPECT_EQ(to_string(*fat), "fat-tree:8");
  const auto rails = parse_fabric("rail-optimized");
  ASSERT_THAT(rails, IsOk());
  EXPECT_EQ(rails->kind, FabricKind::kRailOptimized);
  EXPECT_EQ(to_string(*rails), "rail-optimized:32");
  EXPECT_EQ(parse_fabric("rail-optimized:4")->k, 4);
  for (const char* bad : {"fat-tree:7", "fat-tree:", "fat-tree:0", "torus", "fat-tree:8x",
                          "rail-optimized:0", "rail-optimized:", "rail-optimized:4097", "rails"}) {
    const auto r = parse_fabric(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().message,
              std::string("--fabric: '") + bad +
                  "' is not single-switch, fat-tree:K (K even, 2-256) or rail-optimized[:S] (S "
                  "nodes a group, 1-4096)");
  }
}

TEST(PlatformTest, AnOversubscriptionIsOneAFabricCanGive) {
  Fabric fat = *parse_fabric("fat-tree:8");
  fat.oversubscription = 4;
  EXPECT_THAT(check_fabric(fat, 8), IsOk());
  fat.oversubscription = 3;
  const auto three = check_fabric(fat, 8);
  ASSERT_FALSE(three.has_value());
  EXPECT_EQ(three.error().message,
            "--oversubscription 3 on fat-tree:8: the 4 up-links of a leaf divide only by a "
            "divisor of 4");
  fat.oversubscription = 1;
  EXPECT_EQ(check_fabric(fat, 6).error().message,
            "--nodes 6 on fat-tree:8: each leaf switch takes 4 nodes, so the count must be a "
            "multiple of 4");
  Fabric single;
  single.oversubscription = 2;
  EXPECT_EQ(check_fabric(single, 4).error().message,
            "--oversubscription: a single switch has no up-links to taper");
  Fabric rails = *parse_fabric("rail-optimized:2");
  rails.oversubscription = 65;
  EXPECT_EQ(check_fabric(rails, 4).error().message, "--oversubscription 65 is not from 1 to 64");
  rails.oversubscription = 3;
  EXPECT_THAT(check_fabric(rails, 5), IsOk());  // a group may be partly filled
  // A hand-made fabric without its size is refused, not divided by.
  rails.k = 0;
  EXPECT_EQ(check_fabric(rails, 4).error().message, "rail-optimized:0: 0 is not a fabric's size");
  fat.k = 0;
  EXPECT_FALSE(check_fabric(fat, 4).has_value());
}

// Each GPU of a DGX H100 has the NIC behind its own PCIe switch; an HGX A100's switches hold
// two GPUs and two NICs, one each; a PCIe server's one NIC on a root port of its own serves
// every GPU through the root complex.
TEST(PlatformTest, EachGpuHasTheNicBesideItAsItsRail) {
  for (const char* name : {"dgx-h100", "hgx-a100"}) {
    SCOPED_TRACE(name);
    const auto node = node_from_machine(*topo::generated_machine(name));
    ASSERT_THAT(node, IsOk());
    ASSERT_EQ(node->ports.size(), 8U);
    std::vector<int> seen;
    for (std::size_t i = 0; i < node->devices.size(); ++i) {
      seen.push_back(node->port_of[i]);
      // Up to the switch it shares with its NIC, never through the root port.
      const auto& up = node->to_host[i];
      const auto& to_port = node->to_port[i];
      ASSERT_FALSE(to_port.empty());
      EXPECT_LT(to_port.size(), up.size());
      EXPECT_TRUE(std::equal(to_port.begin(), to_port.end(), up.begin()));
      const auto& port = node->ports[static_cast<std::size_t>(node->port_of[i])];
      EXPECT_EQ(port.from_host.size() + to_port.size(), up.size());
      EXPECT_EQ(port.from_host.front(), up.back());  // host memory comes down from the root
    }
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  }
  const auto pcie = node_from_machine(*topo::generated_machine("pcie-4gpu"));
  ASSERT_THAT(pcie, IsOk());
  ASSERT_EQ(pcie->ports.size(), 1U);
  EXPECT_TRUE(pcie->ports[0].from_host.empty());
  for (std::size_t i = 0; i < pcie->devices.size(); ++i) {
    EXPECT_EQ(pcie->port_of[i], 0);
    EXPECT_EQ(pcie->to_port[i], pcie->to_host[i]);
  }
}

// A function that carries two ports (ConnectX-3's dual-port HCA, mlx4) gives two rails whose
// names still differ: the engine's link names must be unique.
TEST(PlatformTest, TwoPortsOfOneFunctionAreTwoRailsWithTheirOwnNames) {
  auto machine = topo::generated_machine("pcie-4gpu");
  ASSERT_THAT(machine, IsOk());
  ASSERT_EQ(machine->ib_ports.size(), 1U);
  auto second = machine->ib_ports[0];
  second.port = 2;
  machine->ib_ports.push_back(second);
  const auto node = node_from_machine(*machine);
  ASSERT_THAT(node, IsOk());
  ASSERT_EQ(node->ports.size(), 2U);
  const std::string pci = machine->ib_ports[0].pci;
  const std::string device = machine->ib_ports[0].device;
  EXPECT_EQ(node->ports[0].name, pci + " " + device + "/1");
  EXPECT_EQ(node->ports[1].name, pci + " " + device + "/2");
  Platform p;
  p.node = *node;
  p.nodes = 2;
  p.fabric = *parse_fabric("rail-optimized");
  EXPECT_NE(p.link(static_cast<int>(p.node.links.size())).name,
            p.link(static_cast<int>(p.node.links.size()) + 1).name);
}

// DGX H100 nodes on rails of two nodes a group: the same rail meets at its leaf; another rail
// of the group through the NVLink peer on it (PXN); another group through the spines.
TEST(PlatformTest, RailRoutesKeepToTheirRailOrCrossTheSpines) {
  Platform p;
  p.node = *node_from_machine(*topo::generated_machine("dgx-h100"));
  p.nodes = 4;
  p.fabric = *parse_fabric("rail-optimized:2");
  ASSERT_THAT(check_platform(p), IsOk());
  const auto text = [&](const std::vector<RouteHop>& hops) {
    std::vector<std::string> out;
    for (const auto& h : hops) {
      const Link l = h.node < 0 ? p.spine_link(h.link) : p.link(h.link);
      out.push_back(fmt::format("{}{} {}", h.node < 0 ? "" : fmt::format("n{} ", h.node), l.name,
                                h.up ? "up" : "down"));
    }
    return out;
  };
  const auto rail = [&](int d) { return p.node.port_of[static_cast<std::size_t>(d % 8)]; };
  const auto port = [&](int node, int d) {
    return fmt::format("n{} nic {}", node, p.node.ports[static_cast<std::size_t>(rail(d))].pci);
  };
  // GPU3 of node 0 to GPU3 of node 1: its port and cable, the leaf, node 1's cable and port.
  const auto same = text(route(p, 3, 8 + 3));
  EXPECT_THAT(same, ::testing::Contains(port(0, 3) + " up"));
  EXPECT_THAT(same, ::testing::Contains(fmt::format("n0 rail {} up", rail(3))));
  EXPECT_THAT(same, ::testing::Contains(fmt::format("n1 rail {} down", rail(3))));
  EXPECT_THAT(same, ::testing::Contains(port(1, 3) + " down"));
  EXPECT_THAT(same, ::testing::Not(::testing::Contains(::testing::HasSubstr("spines"))));
  // GPU0 of node 0 to GPU3 of node 1: over NVLink to node 0's GPU3, then GPU3's rail.
  const auto pxn = text(route(p, 0, 8 + 3));
  ASSERT_GE(pxn.size(), 2U);
  EXPECT_EQ(pxn[0], "n0 nvlink GPU0 up");
  EXPECT_EQ(pxn[1], "n0 nvlink GPU3 down");
  EXPECT_THAT(pxn, ::testing::Contains(port(0, 3) + " up"));
  EXPECT_THAT(pxn, ::testing::Not(::testing::Contains(::testing::HasSubstr("spines"))));
  // To node 2 (the next group): out on GPU0's own rail, up its leaf's spine link, down the
  // spine link of the leaf of GPU3's rail in group 1; the two halves are route_out's.
  const auto far = route(p, 0, 16 + 3);
  auto expected = route_out(p, 0);
  auto back = route_out(p, 16 + 3);
  std::reverse(back.begin(), back.end());
  for (auto& h : back) {
    h.up = !h.up;
  }
  expected.insert(expected.end(), back.begin(), back.end());
  EXPECT_EQ(far, expected);
  EXPECT_THAT(text(far), ::testing::Contains(fmt::format("group 0 leaf {} spines up", rail(0))));
  EXPECT_THAT(text(far), ::testing::Contains(fmt::format("group 1 leaf {} spines down", rail(3))));
  // Host memory of node 0 sends to node 1's GPU5 on GPU5's rail, down from its root port.
  const auto memory = text(route(p, -1, 8 + 5));
  EXPECT_THAT(memory, ::testing::Contains(port(0, 5) + " up"));
  // Alone, a copy goes at a port's 50 GB/s (400 Gb/s) plus every link's latency.
  EXPECT_NEAR(copy_seconds(p, 3, 8 + 3, 50e9), 1.0, 1e-4);
}

TEST(PlatformTest, RoutesAcrossNodesGoThroughBothNicsAndTheFabric) {
  Platform p;
  p.node.devices = {"GPU0", "GPU1"};
  p.node.links = {
      {"pcie a", "pcie", 25e9, 1e-6}, {"pcie b", "pcie", 25e9, 1e-6}, {"nic", "nic", 50e9, 1e-6}};
  p.node.to_host = {{0}, {1}};
  p.node.peer = {{{}, {0, 1}}, {{1, 0}, {}}};
  p.node.nic = 2;
  p.nodes = 2;
  p.fabric.bytes_per_second = 12.5e9;
  p.fabric.latency = 2e-6;
  EXPECT_EQ(route(p, 0, 1), (std::vector<RouteHop>{{0, 0, true}, {0, 1, false}}));
  EXPECT_EQ(route(p, 0, -1), (std::vector<RouteHop>{{0, 0, true}}));
  EXPECT_EQ(route(p, -1, 1), (std::vector<RouteHop>{{0, 1, false}}));
  EXPECT_EQ(route(p, 1, 3),
            (std::vector<RouteHop>{
                {0, 1, true}, {0, 2, true}, {-1, 0, true}, {1, 2, false}, {1, 1, false}}));
  // Alone on the route: the latencies plus the bytes over the narrowest link (the fabric's).
  EXPECT_NEAR(copy_seconds(p, 1, 3, 12.5e9), 4e-6 + 2 * 2e-6 + 1.0, 1e-12);
  EXPECT_EQ(copy_seconds(p, 2, 2, 1e9), 0);
}

}  // namespace
}  // namespace acco::sim
