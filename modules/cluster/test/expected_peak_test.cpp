#include "acco/cluster/expected_peak.hpp"

#include <gtest/gtest.h>

namespace acco::cluster {
namespace {

topo::Machine node_with(std::vector<topo::NetInterface> nets, std::vector<topo::IbPort> ports) {
  topo::Machine m;
  m.hostname = "node1";
  m.net_interfaces = std::move(nets);
  m.ib_ports = std::move(ports);
  return m;
}

TEST(FastestLink, PrefersTheFastestActivePortAndSkipsLoopbackAndDown) {
  topo::IbPort active;
  active.device = "mlx5_0";
  active.port = 1;
  active.state = 4;
  active.data_rate_gbps = 200;
  topo::IbPort down = active;
  down.device = "mlx5_1";
  down.state = 1;
  down.data_rate_gbps = 400;
  const auto m = node_with({{"lo", "", 100000, "up"},
                            {"eth0", "0000:01:00.0", 25000, "up"},
                            {"eth1", "0000:02:00.0", 100000, "down"},
                            {"veth0", "", std::nullopt, "up"}},
                           {active, down});
  const NodeLink link = fastest_link(m);
  EXPECT_EQ(link.node, "node1");
  EXPECT_EQ(link.port, "mlx5_0:1");
  EXPECT_DOUBLE_EQ(link.bytes_per_second, 25e9);  // 200 Gb/s
  const NodeLink eth = fastest_link(node_with({{"eth0", "", 25000, "up"}}, {}));
  EXPECT_EQ(eth.port, "eth0");
  EXPECT_DOUBLE_EQ(eth.bytes_per_second, 3.125e9);
  EXPECT_EQ(fastest_link(node_with({{"lo", "", 100000, "up"}}, {})).port, "");
}

TEST(ExpectedPeak, IsTheSlowestNodesFastestPort) {
  const ExpectedPeak p =
      expected_peak({{"a", "eth0", 3.125e9}, {"b", "eth0", 1.25e9}, {"c", "ib0", 25e9}});
  EXPECT_DOUBLE_EQ(p.bytes_per_second, 1.25e9);
  EXPECT_NE(p.source.find("eth0"), std::string::npos) << p.source;
  EXPECT_NE(p.source.find(" on b,"), std::string::npos) << p.source;
}

TEST(ExpectedPeak, OneNodeOrAnUnknownPortClaimsNoPeak) {
  EXPECT_DOUBLE_EQ(expected_peak({{"a", "eth0", 3e9}}).bytes_per_second, 0);
  EXPECT_NE(expected_peak({}).source.find("one node"), std::string::npos);
  const ExpectedPeak p = expected_peak({{"a", "eth0", 3e9}, {"b", "", 0}});
  EXPECT_DOUBLE_EQ(p.bytes_per_second, 0);
  EXPECT_EQ(p.source, "node b has no network port up with a known speed");
}

TEST(NodeLinkCodec, RoundTripsAndRejectsGarbage) {
  const NodeLink link{"node 2", "mlx5_0:1", 2.5e10};
  auto back = decode_node_link(encode(link));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, link);
  EXPECT_FALSE(decode_node_link("a\tb"));
  EXPECT_FALSE(decode_node_link("a\tb\tfast"));
}

}  // namespace
}  // namespace acco::cluster
