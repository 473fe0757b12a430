// The node model from the canned machines' sysfs trees: what links a GPU's copies cross.
#include "acco/sim/platform.hpp"

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
  for (const char* bad : {"fat-tree:7", "fat-tree:", "fat-tree:0", "torus", "fat-tree:8x"}) {
    const auto r = parse_fabric(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().message, std::string("--fabric: '") + bad +
                                     "' is not single-switch or fat-tree:K (K even, 2-256)");
  }
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
  EXPECT_EQ(route(p, 0, 1), (std::vector<RouteHop>{{0, 0}, {0, 1}}));
  EXPECT_EQ(route(p, 0, -1), (std::vector<RouteHop>{{0, 0}}));
  EXPECT_EQ(route(p, 1, 3), (std::vector<RouteHop>{{0, 1}, {0, 2}, {-1, 0}, {1, 2}, {1, 1}}));
  // Alone on the route: the latencies plus the bytes over the narrowest link (the fabric's).
  EXPECT_NEAR(copy_seconds(p, 1, 3, 12.5e9), 4e-6 + 2 * 2e-6 + 1.0, 1e-12);
  EXPECT_EQ(copy_seconds(p, 2, 2, 1e9), 0);
}

}  // namespace
}  // namespace acco::sim
