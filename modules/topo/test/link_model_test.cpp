#include "acco/topo/link_model.hpp"

#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"

namespace acco::topo {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::Not;

PciDevice dev(std::string address, std::string parent, DeviceKind kind, PcieLink current,
              PcieLink max, int numa = 0, std::string root = "pci0000:00") {
  PciDevice d;
  d.address = std::move(address);
  d.parent = std::move(parent);
  d.kind = kind;
  d.current = current;
  d.max = max;
  d.numa_node = numa;
  d.root_bus = std::move(root);
  return d;
}

// Root port 00:01.0 -> switch upstream 01:00.0 -> downstream 02:00.0 (GPU 03:00.0) and
// 02:01.0 (NIC 04:00.0); a second root port on another host bridge and socket holds 81:00.0.
Machine switch_box(PcieLink uplink = {32, 16}) {
  Machine m;
  m.numa_nodes = {{0, {0}, {10, 21}, 0, 0}, {1, {1}, {21, 10}, 1, 0}};
  const PcieLink g5{32, 16};
  m.pci_devices = {
      dev("0000:00:01.0", "", DeviceKind::kBridge, uplink, g5),
      dev("0000:01:00.0", "0000:00:01.0", DeviceKind::kBridge, uplink, g5),
      dev("0000:02:00.0", "0000:01:00.0", DeviceKind::kBridge, g5, g5),
      dev("0000:02:01.0", "0000:01:00.0", DeviceKind::kBridge, g5, g5),
      dev("0000:03:00.0", "0000:02:00.0", DeviceKind::kGpu, g5, g5),
      dev("0000:04:00.0", "0000:02:01.0", DeviceKind::kNic, g5, g5),
      dev("0000:80:01.0", "", DeviceKind::kBridge, g5, g5, 1, "pci0000:80"),
      dev("0000:81:00.0", "0000:80:01.0", DeviceKind::kGpu, g5, g5, 1, "pci0000:80"),
  };
  annotate_links(m);
  return m;
}

TEST(LinkModelTest, Gen4x16PeakIs31_5GBPerSecond) {
  EXPECT_NEAR(link_bytes_per_second({16, 16}), 31.5e9, 0.01e9);
}

TEST(LinkModelTest, Gen1LosesTwentyPercentToEncoding) {
  EXPECT_DOUBLE_EQ(pcie_lane_bytes_per_second(2.5), 0.25e9);
}

TEST(LinkModelTest, Gen6UsesFlitEfficiency) {
  EXPECT_NEAR(pcie_lane_bytes_per_second(64), 7.5625e9, 1e6);
}

TEST(LinkModelTest, UnknownLinkHasNoBandwidth) {
  EXPECT_EQ(link_bytes_per_second({0, 16}), 0);
  EXPECT_EQ(link_bytes_per_second({3.3, 16}), 0);
  EXPECT_EQ(describe({}), "unknown");
  EXPECT_EQ(describe({32, 16}), "Gen5 x16");
}

TEST(LinkModelTest, ParsesOldAndNewKernelSpeedStrings) {
  EXPECT_EQ(parse_link_speed("16.0 GT/s PCIe\n").value(), 16.0);
  EXPECT_EQ(parse_link_speed("8 GT/s").value(), 8.0);
  EXPECT_EQ(parse_link_speed("2.5 GT/s PCIe").value(), 2.5);
  EXPECT_EQ(parse_link_speed("Unknown").value(), 0.0);
  EXPECT_THAT(parse_link_speed("fast"), StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(parse_link_speed("-4 GT/s"), Not(IsOk()));
}

TEST(LinkModelTest, PathLimitIsTheNarrowestLinkUpToTheRoot) {
  const auto m = switch_box({32, 4});
  const auto* gpu = m.find("0000:03:00.0");
  EXPECT_NEAR(gpu->current_bytes_per_second, 63.0e9, 0.1e9);
  EXPECT_NEAR(gpu->path_bytes_per_second, 15.75e9, 0.1e9);
  EXPECT_EQ(gpu->path_limited_by, "0000:01:00.0");
}

TEST(LinkModelTest, CapableIsMinOfDeviceAndParentPortMaximum) {
  auto m = switch_box();
  for (auto& d : m.pci_devices) {
    if (d.address == "0000:80:01.0") {
      d.max = {16, 16};
    }
  }
  annotate_links(m);
  EXPECT_NEAR(m.find("0000:81:00.0")->capable_bytes_per_second, 31.5e9, 0.1e9);
}

TEST(LinkModelTest, CapableTakesTheLowerSpeedAndTheFewerLanesOfTheTwoEnds) {
  // A Gen5 x16 device in a Gen4 x32 port (QEMU's pcie-root-port) trains at Gen4 x16: 31.5 GB/s,
  // although each end alone could carry 63.
  auto m = switch_box();
  for (auto& d : m.pci_devices) {
    if (d.address == "0000:80:01.0") {
      d.max = {16, 32};
    }
    if (d.address == "0000:81:00.0") {
      d.max = {32, 16};
    }
  }
  annotate_links(m);
  EXPECT_NEAR(m.find("0000:81:00.0")->capable_bytes_per_second, 31.5e9, 0.1e9);
}

TEST(LinkModelTest, FunctionsOfOneCardAreOnePhysicalDevice) {
  auto m = switch_box();
  const PciDevice nic = *m.find("0000:81:00.0");
  PciDevice second = nic;
  second.address = "0000:81:00.1";
  m.pci_devices.push_back(second);
  const auto cards = physical_devices(m);
  const auto it = std::find_if(cards.begin(), cards.end(), [](const PhysicalDevice& c) {
    return c.first().address == "0000:81:00.0";
  });
  ASSERT_NE(it, cards.end());
  EXPECT_THAT(it->addresses(), ElementsAre("0000:81:00.0", "0000:81:00.1"));
  // Devices with their own bus:device stay apart.
  EXPECT_EQ(std::count_if(cards.begin(), cards.end(),
                          [](const PhysicalDevice& c) { return c.functions.size() == 1; }),
            static_cast<long>(cards.size()) - 1);
}

TEST(LinkModelTest, DevicesUnderOneSwitchArePix) {
  const auto m = switch_box();
  EXPECT_EQ(to_string(classify_path(m, "0000:03:00.0", "0000:04:00.0")), "PIX");
  EXPECT_EQ(to_string(classify_path(m, "0000:03:00.0", "0000:03:00.0")), "X");
}

TEST(LinkModelTest, DevicesOnDifferentSocketsAreSys) {
  const auto m = switch_box();
  const auto p = classify_path(m, "0000:03:00.0", "0000:81:00.0");
  EXPECT_EQ(p.path_class, PathClass::kSys);
  EXPECT_GT(p.bottleneck_bytes_per_second, 0);
}

TEST(LinkModelTest, NvlinkThroughSwitchesCountsBondedLinks) {
  auto m = switch_box();
  NvmlGpu a;
  a.pci = "0000:03:00.0";
  NvmlGpu b;
  b.pci = "0000:81:00.0";
  for (int i = 0; i < 18; ++i) {
    a.nvlinks.push_back({i, true, "0000:05:00.0", 5});
    b.nvlinks.push_back({i, i < 16, "0000:06:00.0", 5});
  }
  m.nvml.gpus = {a, b};
  const auto p = classify_path(m, "0000:03:00.0", "0000:81:00.0");
  EXPECT_EQ(to_string(p), "NV16");
  EXPECT_DOUBLE_EQ(p.bottleneck_bytes_per_second, 16 * 25e9);
}

}  // namespace
}  // namespace acco::topo
