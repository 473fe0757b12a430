#include "sysroot_builder.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>

#include "acco/testing/files.hpp"

#include "machines.hpp"

namespace acco::testing {
namespace {

namespace fs = std::filesystem;

// Every entry under `root` with what it holds, links not followed: "d", "f:<content>",
// "l:<target>".
std::map<std::string, std::string> snapshot(const fs::path& root) {
  std::map<std::string, std::string> entries;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string rel = e.path().lexically_relative(root).string();
    if (e.is_symlink()) {
      entries[rel] = "l:" + fs::read_symlink(e.path()).string();
    } else if (e.is_directory()) {
      entries[rel] = "d";
    } else {
      entries[rel] = "f:" + slurp(e.path());
    }
  }
  return entries;
}

std::set<std::string> changed(const std::map<std::string, std::string>& a,
                              const std::map<std::string, std::string>& b) {
  std::set<std::string> out;
  for (const auto& [path, value] : a) {
    const auto it = b.find(path);
    if (it == b.end() || it->second != value) {
      out.insert(path);
    }
  }
  for (const auto& [path, value] : b) {
    if (!a.contains(path)) {
      out.insert(path);
    }
  }
  return out;
}

std::uint16_t u16(const std::string& bytes, std::size_t at) {
  return static_cast<std::uint16_t>(static_cast<unsigned char>(bytes[at]) |
                                    (static_cast<unsigned char>(bytes[at + 1]) << 8));
}

std::uint32_t u32(const std::string& bytes, std::size_t at) {
  return u16(bytes, at) | (static_cast<std::uint32_t>(u16(bytes, at + 2)) << 16);
}

bool ends_with_any(const std::string& path, std::initializer_list<std::string_view> names) {
  const std::string base = fs::path(path).filename().string();
  return std::any_of(names.begin(), names.end(), [&](std::string_view n) { return base == n; });
}

// GPU 0's tray in the DGX, relative to the sysroot.
const std::string kRootPort = "sys/devices/pci0000:15/0000:15:01.0";
const std::string kUpstream = kRootPort + "/0000:16:00.0";
const std::string kGpuPort = kUpstream + "/0000:17:00.0";
const std::string kNicPort = kUpstream + "/0000:17:01.0";
const std::string kGpu = kGpuPort + "/0000:18:00.0";
const std::string kNic = kNicPort + "/0000:19:00.0";
const std::string kIbPort = kNic + "/infiniband/mlx5_0/ports/1";

TEST(SysrootBuilderTest, EveryBusPciDevicesLinkIsRelativeAndResolvesToItsFunctionInSysDevices) {
  for (const auto& machine : canned_machines()) {
    SCOPED_TRACE(machine.name);
    TempDir dir;
    machine.write(dir.path(), {});
    const fs::path devices = fs::canonical(dir.path() / "sys/devices");
    int count = 0;
    for (const auto& e : fs::directory_iterator(dir.path() / "sys/bus/pci/devices")) {
      ++count;
      ASSERT_TRUE(e.is_symlink()) << e.path();
      EXPECT_TRUE(fs::read_symlink(e.path()).is_relative()) << e.path();
      const fs::path target = fs::canonical(e.path());
      EXPECT_EQ(target.filename(), e.path().filename());
      EXPECT_TRUE(target.string().starts_with(devices.string() + "/pci0000:")) << target;
      EXPECT_TRUE(fs::exists(target / "class")) << target;
    }
    EXPECT_GT(count, 0);
  }
}

TEST(SysrootBuilderTest, DgxGpuNestsBelowRootPortAndBothSwitchPorts) {
  TempDir dir;
  write_dgx_h100(dir.path());
  EXPECT_EQ(fs::canonical(dir.path() / "sys/bus/pci/devices/0000:18:00.0"),
            fs::canonical(dir.path()) / kGpu);
  EXPECT_EQ(fs::canonical(dir.path() / "sys/bus/pci/devices/0000:19:00.0"),
            fs::canonical(dir.path()) / kNic);
  EXPECT_EQ(fs::canonical(dir.path() / "sys/bus/pci/devices/0000:05:00.0"),
            fs::canonical(dir.path()) /
                "sys/devices/pci0000:00/0000:00:05.0/0000:03:00.0/0000:04:00.0/0000:05:00.0");
}

TEST(SysrootBuilderTest, DgxListsEveryFunctionBridgesIncluded) {
  TempDir dir;
  write_dgx_h100(dir.path());
  std::set<std::string> listed;
  for (const auto& e : fs::directory_iterator(dir.path() / "sys/bus/pci/devices")) {
    listed.insert(e.path().filename().string());
  }
  // pci0000:00: host bridge, 3 root ports, 2 NIC functions, NVMe, 1+4 switch ports, 4
  // NVSwitches; 8 trays of root port, 3 switch ports, GPU, NIC; the second NVMe and its port.
  EXPECT_EQ(listed.size(), 16U + 8U * 6U + 2U);
  for (const auto& bdf : kDgxH100Gpus) {
    EXPECT_TRUE(listed.contains(std::string(bdf))) << bdf;
  }
  for (const auto& bdf : {"0000:15:01.0", "0000:16:00.0", "0000:17:00.0", "0000:17:01.0"}) {
    EXPECT_TRUE(listed.contains(bdf)) << bdf;
  }
}

TEST(SysrootBuilderTest, AttributesHaveTheKernelsExactFormat) {
  TempDir dir;
  write_dgx_h100(dir.path());
  const fs::path gpu = dir.path() / kGpu;
  EXPECT_EQ(slurp(gpu / "class"), "0x030200\n");
  EXPECT_EQ(slurp(gpu / "vendor"), "0x10de\n");
  EXPECT_EQ(slurp(gpu / "device"), "0x2330\n");
  EXPECT_EQ(slurp(gpu / "subsystem_vendor"), "0x10de\n");
  EXPECT_EQ(slurp(gpu / "subsystem_device"), "0x16c1\n");
  EXPECT_EQ(slurp(gpu / "numa_node"), "0\n");
  EXPECT_EQ(slurp(gpu / "local_cpulist"), "0-55,112-167\n");
  EXPECT_EQ(slurp(gpu / "local_cpus"),
            "00000000,000000ff,ffffffff,ffff0000,00000000,00ffffff,ffffffff\n");
  EXPECT_EQ(slurp(gpu / "current_link_speed"), "32.0 GT/s PCIe\n");
  EXPECT_EQ(slurp(gpu / "current_link_width"), "16\n");
  EXPECT_EQ(slurp(gpu / "max_link_speed"), "32.0 GT/s PCIe\n");
  EXPECT_EQ(slurp(gpu / "max_link_width"), "16\n");
  EXPECT_EQ(slurp(dir.path() / kGpuPort / "class"), "0x060400\n");
  EXPECT_EQ(slurp(dir.path() / kGpuPort / "vendor"), "0x1000\n");
  EXPECT_EQ(slurp(dir.path() / kGpuPort / "device"), "0xc030\n");
  EXPECT_EQ(slurp(dir.path() / kGpuPort / "secondary_bus_number"), "24\n");
  EXPECT_EQ(slurp(dir.path() / kRootPort / "subordinate_bus_number"), "25\n");
  EXPECT_EQ(slurp(dir.path() / kNic / "class"), "0x020700\n");
  EXPECT_EQ(slurp(dir.path() / "sys/bus/pci/devices/0000:db:00.0/numa_node"), "1\n");
  EXPECT_EQ(slurp(dir.path() / "sys/bus/pci/devices/0000:02:00.0/current_link_speed"),
            "16.0 GT/s PCIe\n");
  EXPECT_EQ(slurp(dir.path() / "sys/bus/pci/devices/0000:02:00.0/current_link_width"), "4\n");
}

TEST(SysrootBuilderTest, APortReportsTheLinkToItsChildAndAnEmptyPortReportsUnknown) {
  TempDir dir;
  SysrootBuilder b(dir.path());
  b.numa_node({.id = 0, .cpus = "0-3", .distances = {10}, .memory_kib = 1024});
  auto bus = b.root_bus("0000:40", 0);
  const FunctionSpec port{{0x060400, 0x1022, 0x1483, 0, 0}, Link{5, 16}, "pcieport"};
  auto empty = bus.add("0000:40:01.2", port);
  bus.add("0000:40:01.1", port)
      .add("0000:41:00.0", {{0x020000, 0x15b3, 0x101d, 0, 0}, Link{4, 8}, ""});
  EXPECT_EQ(slurp(dir.path() / "sys/bus/pci/devices/0000:40:01.1/current_link_speed"),
            "16.0 GT/s PCIe\n");
  EXPECT_EQ(slurp(dir.path() / "sys/bus/pci/devices/0000:40:01.1/current_link_width"), "8\n");
  EXPECT_EQ(slurp(dir.path() / "sys/bus/pci/devices/0000:41:00.0/current_link_width"), "8\n");
  EXPECT_EQ(slurp(empty.dir() / "current_link_speed"), "Unknown\n");
  EXPECT_EQ(slurp(empty.dir() / "current_link_width"), "0\n");
  EXPECT_EQ(slurp(empty.dir() / "max_link_speed"), "32.0 GT/s PCIe\n");
}

TEST(SysrootBuilderTest, DevicesWithoutPcieCapabilityHaveNoLinkFiles) {
  TempDir dgx;
  write_dgx_h100(dgx.path());
  const fs::path host = dgx.path() / "sys/bus/pci/devices/0000:00:00.0";
  EXPECT_EQ(slurp(host / "class"), "0x060000\n");
  for (const char* file :
       {"current_link_speed", "current_link_width", "max_link_speed", "max_link_width"}) {
    EXPECT_FALSE(fs::exists(host / file)) << file;
  }
}

TEST(SysrootBuilderTest, DriverAndIommuLinksAreRelativeAndResolve) {
  TempDir dir;
  write_dgx_h100(dir.path());
  const fs::path gpu = dir.path() / kGpu;
  EXPECT_EQ(fs::read_symlink(gpu / "driver"), "../../../../../../bus/pci/drivers/nvidia");
  EXPECT_EQ(fs::canonical(gpu / "driver"),
            fs::canonical(dir.path() / "sys/bus/pci/drivers/nvidia"));
  EXPECT_EQ(fs::canonical(dir.path() / "sys/bus/pci/drivers/nvidia/0000:18:00.0"),
            fs::canonical(gpu));
  EXPECT_EQ(fs::canonical(dir.path() / kGpuPort / "driver").filename(), "pcieport");
  EXPECT_FALSE(fs::exists(dir.path() / "sys/bus/pci/devices/0000:00:00.0/driver"));

  EXPECT_TRUE(fs::read_symlink(gpu / "iommu_group").is_relative());
  const fs::path group = fs::canonical(gpu / "iommu_group");
  EXPECT_EQ(group.parent_path(), fs::canonical(dir.path() / "sys/kernel/iommu_groups"));
  EXPECT_EQ(slurp(group / "type"), "identity\n");
  EXPECT_EQ(fs::canonical(group / "devices/0000:18:00.0"), fs::canonical(gpu));
  // Under one switch with ACS off, GPU and NIC share a group.
  EXPECT_EQ(fs::canonical(dir.path() / kNic / "iommu_group"), group);
  EXPECT_NE(fs::canonical(dir.path() / kUpstream / "iommu_group"), group);
}

TEST(SysrootBuilderTest, NetClassLinksResolveToTheNetdevUnderItsPciFunction) {
  TempDir dir;
  write_dgx_h100(dir.path());
  const fs::path net = dir.path() / "sys/class/net/ibp25s0";
  EXPECT_EQ(fs::read_symlink(net),
            "../../devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0/0000:19:00.0/net/"
            "ibp25s0");
  EXPECT_EQ(fs::read_symlink(net / "device"), "../../../0000:19:00.0");
  EXPECT_EQ(fs::canonical(net / "device"), fs::canonical(dir.path() / kNic));
  EXPECT_EQ(slurp(net / "speed"), "400000\n");
  EXPECT_EQ(slurp(net / "operstate"), "up\n");
  EXPECT_EQ(slurp(dir.path() / "sys/class/net/enp1s0f1np1/speed"), "100000\n");
  EXPECT_EQ(fs::canonical(dir.path() / "sys/class/net/enp1s0f1np1/device").filename(),
            "0000:01:00.1");
}

TEST(SysrootBuilderTest, LoopbackIsVirtualWithNoDeviceLinkAndNoSpeed) {
  TempDir dir;
  write_ci_vm(dir.path());
  const fs::path lo = dir.path() / "sys/class/net/lo";
  EXPECT_EQ(fs::canonical(lo), fs::canonical(dir.path() / "sys/devices/virtual/net/lo"));
  EXPECT_FALSE(fs::exists(lo / "device"));
  EXPECT_FALSE(fs::exists(lo / "speed"));
  EXPECT_EQ(slurp(lo / "operstate"), "unknown\n");
}

TEST(SysrootBuilderTest, VirtioNetdevHangsUnderTheVirtioChildOfItsPciFunction) {
  TempDir dir;
  write_ci_vm(dir.path());
  const fs::path eth0 = dir.path() / "sys/class/net/eth0";
  EXPECT_EQ(fs::read_symlink(eth0), "../../devices/pci0000:00/0000:00:03.0/virtio2/net/eth0");
  EXPECT_EQ(fs::read_symlink(eth0 / "device"), "../../../virtio2");
  EXPECT_EQ(fs::canonical(eth0 / "device"),
            fs::canonical(dir.path() / "sys/devices/pci0000:00/0000:00:03.0/virtio2"));
  EXPECT_EQ(slurp(eth0 / "speed"), "-1\n");
  EXPECT_EQ(slurp(eth0 / "operstate"), "up\n");
  EXPECT_EQ(slurp(eth0 / "device/device"), "0x0001\n");
}

TEST(SysrootBuilderTest, InfinibandDeviceHasPortsAndLinksToItsPciFunction) {
  TempDir dir;
  write_dgx_h100(dir.path());
  const fs::path ib = dir.path() / "sys/class/infiniband/mlx5_0";
  EXPECT_EQ(fs::canonical(ib), fs::canonical(dir.path() / kNic / "infiniband/mlx5_0"));
  EXPECT_EQ(fs::canonical(ib / "device"), fs::canonical(dir.path() / kNic));
  EXPECT_EQ(slurp(ib / "node_guid"), "946d:ae03:00c4:5f20\n");
  EXPECT_EQ(slurp(ib / "fw_ver"), "28.39.1002\n");
  EXPECT_EQ(slurp(ib / "ports/1/state"), "4: ACTIVE\n");
  EXPECT_EQ(slurp(ib / "ports/1/phys_state"), "5: LinkUp\n");
  EXPECT_EQ(slurp(ib / "ports/1/rate"), "400 Gb/sec (4X NDR)\n");
  EXPECT_EQ(slurp(ib / "ports/1/link_layer"), "InfiniBand\n");
  EXPECT_TRUE(fs::exists(ib / "device/net/ibp25s0/speed"));
  EXPECT_EQ(slurp(dir.path() / "sys/class/infiniband/mlx5_8/ports/1/link_layer"), "Ethernet\n");
}

TEST(SysrootBuilderTest, NvmeControllerHasItsAttributesNamespaceAndDeviceLink) {
  TempDir dir;
  write_dgx_h100(dir.path());
  const fs::path nvme = dir.path() / "sys/class/nvme/nvme1";
  EXPECT_EQ(fs::canonical(nvme / "device"),
            fs::canonical(dir.path() / "sys/devices/pci0000:c0/0000:c0:01.0/0000:c1:00.0"));
  EXPECT_EQ(slurp(nvme / "model"), "SAMSUNG MZQL23T8HCLS-00A07\n");
  EXPECT_EQ(slurp(nvme / "transport"), "pcie\n");
  EXPECT_EQ(slurp(nvme / "address"), "0000:c1:00.0\n");
  EXPECT_EQ(slurp(nvme / "state"), "live\n");
  EXPECT_EQ(slurp(nvme / "nvme1n1/size"), "7501476528\n");
  EXPECT_EQ(slurp(nvme / "device/numa_node"), "1\n");
  EXPECT_EQ(slurp(nvme / "device/class"), "0x010802\n");
}

TEST(SysrootBuilderTest, NumaAndCpuFilesDescribeBothSockets) {
  TempDir dir;
  write_dgx_h100(dir.path());
  const fs::path sys = dir.path() / "sys/devices/system";
  EXPECT_EQ(slurp(sys / "node/online"), "0-1\n");
  EXPECT_EQ(slurp(sys / "node/node0/cpulist"), "0-55,112-167\n");
  EXPECT_EQ(slurp(sys / "node/node1/cpulist"), "56-111,168-223\n");
  EXPECT_EQ(slurp(sys / "node/node0/distance"), "10 21\n");
  EXPECT_EQ(slurp(sys / "node/node1/distance"), "21 10\n");
  const std::string meminfo = slurp(sys / "node/node0/meminfo");
  EXPECT_EQ(meminfo.substr(0, meminfo.find('\n')), "Node 0 MemTotal:       1056508412 kB");
  EXPECT_EQ(slurp(sys / "cpu/online"), "0-223\n");
  EXPECT_EQ(slurp(sys / "cpu/cpu0/topology/physical_package_id"), "0\n");
  EXPECT_EQ(slurp(sys / "cpu/cpu167/topology/physical_package_id"), "0\n");
  EXPECT_EQ(slurp(sys / "cpu/cpu56/topology/physical_package_id"), "1\n");
  EXPECT_EQ(slurp(sys / "cpu/cpu223/topology/physical_package_id"), "1\n");
  EXPECT_FALSE(fs::exists(sys / "cpu/cpu224"));
}

TEST(SysrootBuilderTest, ProcFilesNameTheKernelDriverAndCpus) {
  TempDir dir;
  write_dgx_h100(dir.path());
  const std::string cmdline = slurp(dir.path() / "proc/cmdline");
  EXPECT_NE(cmdline.find(" iommu=pt"), std::string::npos);
  EXPECT_EQ(cmdline.back(), '\n');
  EXPECT_EQ(slurp(dir.path() / "proc/sys/kernel/hostname"), "dgx-h100-01\n");
  EXPECT_EQ(slurp(dir.path() / "sys/module/nvidia/version"), "580.95.05\n");
  EXPECT_EQ(slurp(dir.path() / "sys/module/nvidia_peermem/version"), "580.95.05\n");
  EXPECT_NE(slurp(dir.path() / "proc/driver/nvidia/version").find("580.95.05"), std::string::npos);
  const std::string cpuinfo = slurp(dir.path() / "proc/cpuinfo");
  EXPECT_TRUE(cpuinfo.starts_with("processor\t: 0\nvendor_id\t: GenuineIntel\n"));
  EXPECT_NE(cpuinfo.find("processor\t: 3\n"), std::string::npos);
  EXPECT_NE(cpuinfo.find("model name\t: Intel(R) Xeon(R) Platinum 8480C\n"), std::string::npos);
  EXPECT_NE(cpuinfo.find(" avx512f "), std::string::npos);
  EXPECT_EQ(cpuinfo.find("hypervisor"), std::string::npos);
}

TEST(SysrootBuilderTest, NcclStylePciBusLookupFindsTheFunction) {
  TempDir dir;
  write_dgx_h100(dir.path());
  // NCCL: realpath("/sys/class/pci_bus/DDDD:BB/../../DDDD:BB:DD.F").
  EXPECT_EQ(fs::canonical(dir.path() / "sys/class/pci_bus/0000:18/../../0000:18:00.0"),
            fs::canonical(dir.path() / kGpu));
  EXPECT_TRUE(fs::exists(dir.path() / "sys/class/pci_bus/0000:15"));
}

TEST(SysrootBuilderTest, ConfigHoldsTheSixtyFourByteHeaderByDefault) {
  TempDir dir;
  write_dgx_h100(dir.path());
  const std::string gpu = slurp(dir.path() / kGpu / "config");
  ASSERT_EQ(gpu.size(), 64U);
  EXPECT_EQ(u16(gpu, 0x00), 0x10de);
  EXPECT_EQ(u16(gpu, 0x02), 0x2330);
  EXPECT_EQ(u32(gpu, 0x08) >> 8, 0x030200U);
  EXPECT_EQ(static_cast<unsigned char>(gpu[0x34]), 0x40);
  const std::string port = slurp(dir.path() / kGpuPort / "config");
  ASSERT_EQ(port.size(), 64U);
  EXPECT_EQ(static_cast<unsigned char>(port[0x0e]), 0x01);  // type 1 header
  EXPECT_EQ(static_cast<unsigned char>(port[0x19]), 0x18);  // secondary bus
  EXPECT_EQ(static_cast<unsigned char>(port[0x1a]), 0x18);  // subordinate bus
}

TEST(SysrootBuilderTest, AcsRedirectWritesAcsControlInAFullConfigOfThatPortOnly) {
  TempDir dir;
  write_dgx_h100(dir.path(), {.acs_redirect = 0});
  const std::string c = slurp(dir.path() / kGpuPort / "config");
  ASSERT_EQ(c.size(), 4096U);
  const std::size_t cap = static_cast<unsigned char>(c[0x34]);
  ASSERT_EQ(cap, 0x40U);
  EXPECT_EQ(static_cast<unsigned char>(c[cap]), 0x10);   // PCI Express capability
  EXPECT_EQ((u16(c, cap + 2) >> 4) & 0xf, 6);            // downstream port
  EXPECT_EQ(u16(c, cap + 0x0c) & 0x3ff, 5 | (16 << 4));  // LnkCap Gen5 x16
  EXPECT_EQ(u16(c, cap + 0x12) & 0x3ff, 5 | (16 << 4));  // LnkSta Gen5 x16
  const std::uint32_t header = u32(c, 0x100);
  EXPECT_EQ(header & 0xffff, 0x000dU);  // ACS
  EXPECT_EQ((header >> 16) & 0xf, 1U);  // version
  EXPECT_EQ(header >> 20, 0U);          // last in the list
  EXPECT_EQ(u16(c, 0x106), 0x001d);
  EXPECT_EQ(slurp(dir.path() / kNicPort / "config").size(), 64U);
}

TEST(SysrootBuilderTest, ConfigAsRootGivesPortsAnAcsCapabilityWithControlZero) {
  TempDir dir;
  write_dgx_h100(dir.path(), {.config_as_root = true});
  for (const auto& path : {kRootPort, kGpuPort, kNicPort}) {
    const std::string c = slurp(dir.path() / path / "config");
    ASSERT_EQ(c.size(), 4096U) << path;
    EXPECT_EQ(u32(c, 0x100) & 0xffff, 0x000dU) << path;
    EXPECT_EQ(u16(c, 0x106), 0) << path;
  }
  const std::string gpu = slurp(dir.path() / kGpu / "config");
  ASSERT_EQ(gpu.size(), 4096U);
  EXPECT_EQ(u32(gpu, 0x100), 0U);  // endpoints: no extended capabilities
  EXPECT_EQ(slurp(dir.path() / "sys/bus/pci/devices/0000:00:00.0/config").size(), 64U);
}

struct FaultCase {
  std::string fault;
  // The paths that must differ from the healthy tree, given the healthy snapshot.
  std::function<std::set<std::string>(const std::map<std::string, std::string>&)> expected;
};

std::function<std::set<std::string>(const std::map<std::string, std::string>&)> exactly(
    std::set<std::string> paths) {
  return [paths](const auto&) { return paths; };
}

std::function<std::set<std::string>(const std::map<std::string, std::string>&)> every(
    std::function<bool(const std::string&)> pick) {
  return [pick](const std::map<std::string, std::string>& healthy) {
    std::set<std::string> out;
    for (const auto& [path, value] : healthy) {
      if (pick(path)) {
        out.insert(path);
      }
    }
    return out;
  };
}

TEST(SysrootBuilderTest, EachDgxFaultChangesExactlyTheFilesItShould) {
  const std::string ib = kNic + "/infiniband/mlx5_0/ports/1/";
  const std::string groups = "sys/kernel/iommu_groups/";
  const std::string ns0 =
      "sys/devices/pci0000:00/0000:00:03.0/0000:02:00.0/nvme/nvme0/nvme0n1/queue/";
  const std::string mountinfo = "proc/self/mountinfo";
  const std::vector<FaultCase> cases = {
      {"gpu-width-x8", exactly({kGpu + "/current_link_width", kGpuPort + "/current_link_width"})},
      {"gpu-speed-2.5gt",
       exactly({kGpu + "/current_link_speed", kGpuPort + "/current_link_speed"})},
      {"gpu-in-gen4-slot", exactly({kGpuPort + "/max_link_speed", kGpuPort + "/current_link_speed",
                                    kGpu + "/current_link_speed"})},
      {"switch-uplink-x4",
       exactly({kUpstream + "/max_link_width", kUpstream + "/current_link_width",
                kRootPort + "/current_link_width"})},
      {"ib-port-polling",
       exactly({ib + "state", ib + "phys_state", kNic + "/net/ibp25s0/operstate"})},
      {"ib-port-disabled",
       exactly({ib + "state", ib + "phys_state", kNic + "/net/ibp25s0/operstate"})},
      {"ib-rate-hdr", exactly({ib + "rate"})},
      {"ib-rate-2x", exactly({ib + "rate"})},
      {"nic-gen4-x8",
       exactly({kNic + "/max_link_speed", kNic + "/max_link_width", kNic + "/current_link_speed",
                kNic + "/current_link_width", kNicPort + "/current_link_speed",
                kNicPort + "/current_link_width"})},
      {"no-peermem", exactly({"sys/module/nvidia_peermem", "sys/module/nvidia_peermem/version"})},
      {"acs-redirect", exactly({kGpuPort + "/config"})},
      // The GPU keeps the group it was born in (20); group 18 is its switch's.
      {"iommu-group-split",
       exactly({kGpu + "/iommu_group", groups + "18/devices/0000:18:00.0", groups + "20",
                groups + "20/type", groups + "20/devices", groups + "20/devices/0000:18:00.0"})},
      {"numa-unknown", every([](const std::string& p) {
         return p.starts_with("sys/devices/pci") &&
                ends_with_any(p, {"numa_node", "local_cpulist", "local_cpus"});
       })},
      {"iommu-dma-fq", every([&](const std::string& p) {
         return p == "proc/cmdline" || (p.starts_with(groups) && p.ends_with("/type"));
       })},
      {"config-as-root", every([](const std::string& p) {
         return ends_with_any(p, {"config"}) && !p.ends_with("0000:00:00.0/config");
       })},
      {"nvme-scheduler", exactly({ns0 + "scheduler"})},
      {"nvme-nr-requests", exactly({ns0 + "nr_requests"})},
      {"nvme-max-sectors", exactly({ns0 + "max_sectors_kb"})},
      {"nvme-read-ahead-off", exactly({ns0 + "read_ahead_kb"})},
      {"nvme-read-ahead-large", exactly({ns0 + "read_ahead_kb"})},
      // Its hardware queues 8 to 127 are gone.
      {"nvme-queues-few", every([&](const std::string& p) {
         const std::string mq = ns0.substr(0, ns0.size() - 6) + "mq/";
         return p.starts_with(mq) && std::stoi(p.substr(mq.size())) >= 8;
       })},
      {"nvme-poll-queues",
       exactly({"sys/module/nvme/parameters/poll_queues", ns0 + "io_poll",
                "sys/devices/pci0000:c0/0000:c0:01.0/0000:c1:00.0/nvme/nvme1/nvme1n1/queue/"
                "io_poll"})},
      {"raid-sync", exactly({mountinfo})},
      {"raid-strictatime", exactly({mountinfo})},
      {"raid-data-journal", exactly({mountinfo})},
  };
  const CannedMachine& dgx = canned_machines().front();
  ASSERT_EQ(dgx.name, "dgx_h100");
  ASSERT_EQ(cases.size(), dgx.faults.size()) << "every fault needs a case";

  TempDir healthy_dir;
  write_dgx_h100(healthy_dir.path());
  const auto healthy = snapshot(healthy_dir.path());
  for (const auto& c : cases) {
    SCOPED_TRACE(c.fault);
    TempDir dir;
    dgx.write(dir.path(), {c.fault});
    const auto diff = changed(healthy, snapshot(dir.path()));
    const auto expected = c.expected(healthy);
    EXPECT_FALSE(expected.empty());
    EXPECT_EQ(diff, expected);
  }
}

TEST(SysrootBuilderTest, DgxFaultsTakeTheirValuesFromTheKernelsVocabulary) {
  TempDir polling, disabled, hdr, two_x, idle, fq;
  write_dgx_h100(polling.path(), {.ib_port_polling = 0});
  write_dgx_h100(disabled.path(), {.ib_port_disabled = 0});
  write_dgx_h100(hdr.path(), {.ib_rate_hdr = 0});
  write_dgx_h100(two_x.path(), {.ib_rate_2x = 0});
  write_dgx_h100(idle.path(), {.gpu_speed_2_5gt = 0});
  write_dgx_h100(fq.path(), {.iommu_dma_fq = true});
  EXPECT_EQ(slurp(polling.path() / kIbPort / "state"), "1: DOWN\n");
  EXPECT_EQ(slurp(polling.path() / kIbPort / "phys_state"), "2: Polling\n");
  EXPECT_EQ(slurp(disabled.path() / kIbPort / "phys_state"), "3: Disabled\n");
  EXPECT_EQ(slurp(hdr.path() / kIbPort / "rate"), "200 Gb/sec (4X HDR)\n");
  EXPECT_EQ(slurp(two_x.path() / kIbPort / "rate"), "100 Gb/sec (2X HDR)\n");
  EXPECT_EQ(slurp(idle.path() / kGpu / "current_link_speed"), "2.5 GT/s PCIe\n");
  EXPECT_EQ(slurp(fq.path() / "sys/kernel/iommu_groups/0/type"), "DMA-FQ\n");
  EXPECT_EQ(slurp(fq.path() / "proc/cmdline").find("iommu=pt"), std::string::npos);
}

TEST(SysrootBuilderTest, DgxFaultsPickTheGpuTheIndexNames) {
  TempDir dir;
  write_dgx_h100(dir.path(), {.gpu_width_x8 = 7, .switch_uplink_x4 = 5});
  const fs::path devices = dir.path() / "sys/bus/pci/devices";
  EXPECT_EQ(slurp(devices / "0000:db:00.0/current_link_width"), "8\n");
  EXPECT_EQ(slurp(devices / "0000:18:00.0/current_link_width"), "16\n");
  EXPECT_EQ(slurp(devices / "0000:a9:00.0/max_link_width"), "4\n");  // switch 5's upstream port
}

TEST(SysrootBuilderTest, WorkstationHasADowntrainedGpuAndItsOnlyNicOnNumaOne) {
  TempDir dir;
  write_workstation(dir.path());
  const fs::path devices = dir.path() / "sys/bus/pci/devices";
  EXPECT_EQ(fs::canonical(devices / "0000:41:00.0"),
            fs::canonical(dir.path() / "sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0"));
  EXPECT_EQ(slurp(devices / "0000:41:00.0/current_link_width"), "8\n");
  EXPECT_EQ(slurp(devices / "0000:41:00.0/max_link_width"), "16\n");
  EXPECT_EQ(slurp(devices / "0000:41:00.0/current_link_speed"), "16.0 GT/s PCIe\n");
  EXPECT_EQ(slurp(devices / "0000:01:00.0/class"), "0x030000\n");
  EXPECT_EQ(slurp(devices / "0000:21:00.0/numa_node"), "0\n");
  EXPECT_EQ(slurp(devices / "0000:61:00.0/numa_node"), "1\n");
  EXPECT_EQ(slurp(dir.path() / "sys/class/net/ens3f0np0/speed"), "100000\n");
  EXPECT_EQ(slurp(dir.path() / "sys/class/net/ens3f0np0/device/numa_node"), "1\n");
  EXPECT_EQ(slurp(dir.path() / "sys/bus/pci/slots/3/address"), "0000:a1:00\n");
  EXPECT_EQ(slurp(dir.path() / "sys/class/nvme/nvme0/device/numa_node"), "1\n");
  EXPECT_TRUE(fs::is_empty(dir.path() / "sys/kernel/iommu_groups"));
  EXPECT_FALSE(fs::exists(devices / "0000:41:00.0/iommu_group"));
  EXPECT_FALSE(fs::exists(dir.path() / "sys/module/nvidia_peermem"));
  int nics = 0;
  for (const auto& e : fs::directory_iterator(devices)) {
    nics += slurp(e.path() / "class").starts_with("0x02") ? 1 : 0;
  }
  EXPECT_EQ(nics, 1);
}

TEST(SysrootBuilderTest, WorkstationFixesChangeOnlyWhatTheyFix) {
  TempDir healthy_dir, wide_dir, nic_dir;
  write_workstation(healthy_dir.path());
  write_workstation(wide_dir.path(), {.full_width = true});
  write_workstation(nic_dir.path(), {.nic_on_each_socket = true});
  const auto base = snapshot(healthy_dir.path());
  EXPECT_EQ(changed(base, snapshot(wide_dir.path())),
            (std::set<std::string>{
                "sys/devices/pci0000:40/0000:40:01.1/current_link_width",
                "sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0/current_link_width"}));
  for (const auto& path : changed(base, snapshot(nic_dir.path()))) {
    EXPECT_TRUE(path.starts_with("sys/devices/pci0000:30") || path.ends_with("0000:30") ||
                path.ends_with("0000:31") || path.ends_with("0000:30:01.1") ||
                path.ends_with("0000:31:00.0") || path.starts_with("sys/class/net/ens4f0np0") ||
                path.starts_with("sys/class/infiniband") || path.starts_with("sys/bus/pci/slots/4"))
        << path;
  }
  EXPECT_EQ(slurp(nic_dir.path() / "sys/class/net/ens4f0np0/device/numa_node"), "0\n");
}

TEST(SysrootBuilderTest, FlattenedVmPutsGen4H100sOnTheRootBusWithUnknownNuma) {
  TempDir dir;
  write_flattened_vm(dir.path());
  const fs::path devices = dir.path() / "sys/bus/pci/devices";
  for (const char* bdf : {"0000:00:05.0", "0000:00:06.0", "0000:00:07.0", "0000:00:08.0"}) {
    SCOPED_TRACE(bdf);
    EXPECT_EQ(fs::canonical(devices / bdf),
              fs::canonical(dir.path() / "sys/devices/pci0000:00" / bdf));
    EXPECT_EQ(slurp(devices / bdf / "device"), "0x2330\n");
    EXPECT_EQ(slurp(devices / bdf / "numa_node"), "-1\n");
    EXPECT_EQ(slurp(devices / bdf / "local_cpulist"), "0-95\n");
    EXPECT_EQ(slurp(devices / bdf / "current_link_speed"), "16.0 GT/s PCIe\n");
    EXPECT_EQ(slurp(devices / bdf / "max_link_speed"), "16.0 GT/s PCIe\n");
    EXPECT_EQ(slurp(devices / bdf / "current_link_width"), "16\n");
  }
  EXPECT_EQ(slurp(dir.path() / "sys/devices/system/node/online"), "0-1\n");
  EXPECT_NE(slurp(dir.path() / "proc/cpuinfo").find(" hypervisor "), std::string::npos);
  EXPECT_EQ(fs::canonical(dir.path() / "sys/class/net/enp0s3/device"),
            fs::canonical(dir.path() / "sys/devices/pci0000:00/0000:00:03.0/virtio0"));
  EXPECT_EQ(slurp(devices / "0000:00:03.0/vendor"), "0x1af4\n");
  EXPECT_EQ(slurp(devices / "0000:00:03.0/device"), "0x1041\n");
}

TEST(SysrootBuilderTest, FlattenedVmOptionsGiveOneNodeOrQemuRootPorts) {
  TempDir single, ports;
  write_flattened_vm(single.path(), {.single_numa_node = true});
  write_flattened_vm(ports.path(), {.qemu_root_ports = true});
  EXPECT_EQ(slurp(single.path() / "sys/devices/system/node/online"), "0\n");
  EXPECT_EQ(slurp(single.path() / "sys/devices/system/node/node0/distance"), "10\n");
  const fs::path devices = ports.path() / "sys/bus/pci/devices";
  EXPECT_EQ(fs::canonical(devices / "0000:01:00.0"),
            fs::canonical(ports.path() / "sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0"));
  EXPECT_EQ(slurp(devices / "0000:00:1c.0/vendor"), "0x1b36\n");
  EXPECT_EQ(slurp(devices / "0000:00:1c.0/device"), "0x000c\n");
  EXPECT_EQ(slurp(devices / "0000:00:1c.0/max_link_width"), "32\n");
  EXPECT_EQ(slurp(devices / "0000:00:1c.0/current_link_width"), "16\n");
  EXPECT_EQ(slurp(devices / "0000:04:00.0/current_link_speed"), "16.0 GT/s PCIe\n");
}

TEST(SysrootBuilderTest, CiVmMatchesTheMeasuredFirecrackerGuest) {
  TempDir dir;
  write_ci_vm(dir.path());
  const std::map<std::string, std::pair<std::string, std::string>> expected = {
      {"0000:00:00.0", {"0x8086:0x0d57", "0x060000"}},
      {"0000:00:01.0", {"0x1af4:0x1042", "0x018000"}},
      {"0000:00:02.0", {"0x1af4:0x1045", "0xffff00"}},
      {"0000:00:03.0", {"0x1af4:0x1041", "0x020000"}},
      {"0000:00:04.0", {"0x1af4:0x1044", "0xffff00"}},
      {"0000:00:05.0", {"0x1af4:0x1053", "0xffff00"}},
  };
  std::map<std::string, std::pair<std::string, std::string>> found;
  for (const auto& e : fs::directory_iterator(dir.path() / "sys/bus/pci/devices")) {
    const fs::path f = e.path();
    const auto strip = [](std::string s) { return s.substr(0, s.size() - 1); };
    found[f.filename().string()] = {strip(slurp(f / "vendor")) + ":" + strip(slurp(f / "device")),
                                    strip(slurp(f / "class"))};
    EXPECT_EQ(fs::canonical(f).parent_path(), fs::canonical(dir.path() / "sys/devices/pci0000:00"));
    EXPECT_EQ(slurp(f / "numa_node"), "-1\n");
    EXPECT_EQ(slurp(f / "local_cpulist"), "0-1\n");
    EXPECT_EQ(slurp(f / "local_cpus"), "3\n");
    EXPECT_FALSE(fs::exists(f / "current_link_speed"));
    EXPECT_FALSE(fs::exists(f / "max_link_width"));
    EXPECT_EQ(slurp(f / "config").size(), 64U);
  }
  EXPECT_EQ(found, expected);
  EXPECT_EQ(slurp(dir.path() / "sys/devices/system/node/node0/cpulist"), "0-1\n");
  EXPECT_EQ(slurp(dir.path() / "sys/devices/system/node/node0/distance"), "10\n");
  EXPECT_EQ(slurp(dir.path() / "sys/devices/system/cpu/cpu1/topology/physical_package_id"), "0\n");
  EXPECT_TRUE(fs::is_directory(dir.path() / "sys/kernel/iommu_groups"));
  EXPECT_TRUE(fs::is_empty(dir.path() / "sys/kernel/iommu_groups"));
  EXPECT_FALSE(fs::exists(dir.path() / "sys/class/infiniband"));
  EXPECT_FALSE(fs::exists(dir.path() / "sys/class/nvme"));
  EXPECT_EQ(slurp(dir.path() / "proc/cmdline").find("iommu"), std::string::npos);
  EXPECT_EQ(slurp(dir.path() / "proc/sys/kernel/osrelease"), "6.18.44-fc-v657\n");
  const std::string cpuinfo = slurp(dir.path() / "proc/cpuinfo");
  EXPECT_NE(cpuinfo.find(" hypervisor "), std::string::npos);
  EXPECT_NE(cpuinfo.find("processor\t: 1\n"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.path() / "sys/module/nvidia"));
}

TEST(SysrootBuilderTest, ThirtyTwoBitDomainNestsLikeAnyOther) {
  TempDir dir;
  SysrootBuilder b(dir.path());
  b.numa_node({.id = 0, .cpus = "0-3", .distances = {10}, .memory_kib = 1024});
  const FunctionSpec port{{0x060400, 0x8086, 0x352a, 0, 0}, Link{4, 16}, "pcieport"};
  const FunctionSpec nvme{{0x010802, 0x144d, 0xa80a, 0, 0}, Link{4, 4}, "nvme"};
  b.root_bus("10000:00", 0).add("10000:00:02.0", port).add("10000:01:00.0", nvme);
  EXPECT_EQ(fs::canonical(dir.path() / "sys/bus/pci/devices/10000:01:00.0"),
            fs::canonical(dir.path()) / "sys/devices/pci10000:00/10000:00:02.0/10000:01:00.0");
  EXPECT_EQ(slurp(dir.path() / "sys/bus/pci/devices/10000:00:02.0/secondary_bus_number"), "1\n");
  EXPECT_THROW(b.root_bus("10000:00", 0).add("0000:00:03.0", port), std::invalid_argument);
  EXPECT_THROW(b.root_bus("100000000:00", 0), std::invalid_argument);
}

TEST(SysrootBuilderTest, CpuQuirksRewriteOnlyTheirFiles) {
  TempDir dir;
  SysrootBuilder b(dir.path());
  b.numa_node({.id = 0, .cpus = "0-3", .distances = {10, 21}, .memory_kib = 1024})
      .numa_node({.id = 1, .cpus = "", .distances = {21, 10}, .memory_kib = 2048})
      .cpu_packages("2-3", -1)
      .offline_cpus("1");
  const fs::path cpu = dir.path() / "sys/devices/system/cpu";
  EXPECT_EQ(slurp(cpu / "cpu0/topology/physical_package_id"), "0\n");
  EXPECT_EQ(slurp(cpu / "cpu2/topology/physical_package_id"), "-1\n");
  EXPECT_FALSE(fs::exists(cpu / "cpu1/topology"));
  EXPECT_EQ(slurp(cpu / "online"), "0,2-3\n");
  EXPECT_EQ(slurp(dir.path() / "sys/devices/system/node/node0/cpulist"), "0-3\n");
  EXPECT_EQ(slurp(dir.path() / "sys/devices/system/node/node1/cpulist"), "\n");
  EXPECT_EQ(slurp(dir.path() / "sys/devices/system/node/node1/cpumap"), "0\n");
  b.remove("sys/devices/system/node/node0/cpulist");
  EXPECT_FALSE(fs::exists(dir.path() / "sys/devices/system/node/node0/cpulist"));
  EXPECT_EQ(slurp(dir.path() / "sys/devices/system/node/node0/cpumap"), "f\n");
}

TEST(SysrootBuilderTest, FunctionQuirksRewriteOnlyTheirFiles) {
  TempDir dir;
  SysrootBuilder b(dir.path());
  b.numa_node({.id = 0, .cpus = "0-3", .distances = {10, 21}, .memory_kib = 1024})
      .numa_node({.id = 1, .cpus = "4-7", .distances = {21, 10}, .memory_kib = 1024});
  const FunctionSpec port{{0x060400, 0x8086, 0x352a, 0, 0}, Link{4, 16}, "pcieport"};
  const FunctionSpec nic{{0x020000, 0x15b3, 0x101d, 0, 0}, Link{4, 16}, "mlx5_core"};
  auto rp = b.root_bus("0000:40", -1).add("0000:40:01.0", port);
  auto card = rp.add("0000:41:00.0", nic);
  rp.numa_node(1).unlisted();
  card.attr_bytes("vendor", "").remove_attr("local_cpulist");
  const fs::path devices = dir.path() / "sys/devices/pci0000:40";
  EXPECT_EQ(slurp(devices / "0000:40:01.0/numa_node"), "1\n");
  EXPECT_EQ(slurp(devices / "0000:40:01.0/local_cpulist"), "4-7\n");
  EXPECT_EQ(slurp(devices / "0000:40:01.0/local_cpus"), "f0\n");
  EXPECT_EQ(slurp(devices / "0000:40:01.0/0000:41:00.0/numa_node"), "-1\n");
  EXPECT_EQ(slurp(devices / "0000:40:01.0/0000:41:00.0/vendor"), "");
  EXPECT_FALSE(fs::exists(devices / "0000:40:01.0/0000:41:00.0/local_cpulist"));
  EXPECT_FALSE(fs::exists(dir.path() / "sys/bus/pci/devices/0000:40:01.0"));
  EXPECT_TRUE(fs::exists(dir.path() / "sys/bus/pci/devices/0000:41:00.0"));
  EXPECT_THROW(card.numa_node(5), std::invalid_argument);
}

TEST(SysrootBuilderTest, EveryFirmwareQuirkChangesTheTree) {
  const auto it = std::find_if(canned_machines().begin(), canned_machines().end(),
                               [](const CannedMachine& m) { return m.name == "firmware_quirks"; });
  ASSERT_NE(it, canned_machines().end());
  TempDir healthy_dir;
  it->write(healthy_dir.path(), {});
  const auto healthy = snapshot(healthy_dir.path());
  for (const auto& f : it->faults) {
    SCOPED_TRACE(f.name);
    TempDir dir;
    it->write(dir.path(), {std::string(f.name)});
    EXPECT_FALSE(changed(healthy, snapshot(dir.path())).empty());
  }
  TempDir nul;
  write_firmware_quirks(nul.path(), {.cpulist_nul = true});
  EXPECT_EQ(slurp(nul.path() / "sys/devices/system/node/node0/cpulist"),
            std::string("0-15\n\0", 6));
}

TEST(SysrootBuilderTest, BadDescriptionsAreRejected) {
  TempDir dir;
  SysrootBuilder b(dir.path() / "root");
  b.numa_node({.id = 0, .cpus = "0-3", .distances = {10}, .memory_kib = 1024});
  auto bus = b.root_bus("0000:40", 0);
  const FunctionSpec port{{0x060400, 0x1022, 0x1483, 0, 0}, Link{4, 16}, "pcieport"};
  const FunctionSpec nic{{0x020000, 0x15b3, 0x101d, 0, 0}, Link{4, 16}, "mlx5_core"};
  EXPECT_THROW(bus.add("0000:40:1.1", port), std::invalid_argument);
  EXPECT_THROW(bus.add("0000:40:20.0", port), std::invalid_argument);
  EXPECT_THROW(bus.add("0000:41:01.1", port), std::invalid_argument);  // not on this bus
  auto rp = bus.add("0000:40:01.1", port);
  EXPECT_THROW(bus.add("0000:40:01.1", port), std::invalid_argument);  // exists
  EXPECT_THROW(rp.add("0000:40:00.0", nic), std::invalid_argument);    // bus not below
  auto card = rp.add("0000:41:00.0", nic);
  EXPECT_THROW(rp.add("0000:42:00.1", nic), std::invalid_argument);    // not the secondary bus
  EXPECT_THROW(card.add("0000:42:00.0", nic), std::invalid_argument);  // not a bridge
  EXPECT_THROW(card.max_link({7, 16}), std::invalid_argument);
  EXPECT_THROW(bus.add("0000:40:02.1", port).current_link({4, 8}), std::invalid_argument);
  EXPECT_THROW(b.numa_node({.id = 1, .cpus = "4-7", .distances = {10}}), std::invalid_argument);
  EXPECT_THROW(b.root_bus("0000:80", 3), std::invalid_argument);
  EXPECT_THROW(b.function("0000:99:00.0"), std::invalid_argument);
  EXPECT_THROW(SysrootBuilder(dir.path() / "root"), std::invalid_argument);  // not empty

  TempDir other;
  SysrootBuilder fresh(other.path());
  EXPECT_THROW(fresh.numa_node({.id = 0, .cpus = "0-x"}), std::invalid_argument);
  EXPECT_THROW(fresh.cpuinfo({}), std::invalid_argument);  // no CPUs yet
  TempDir dgx;
  EXPECT_THROW(write_dgx_h100(dgx.path(), {.gpu_width_x8 = 8}), std::invalid_argument);
}

struct ToolRun {
  int status = -1;
  std::string output;
};

ToolRun run_tool(const std::string& args) {
  ToolRun r;
  FILE* pipe = popen((std::string(ACCO_MAKE_SYSROOT_PATH) + " " + args + " 2>&1").c_str(), "r");
  if (pipe == nullptr) {
    throw std::runtime_error("popen failed");
  }
  char buf[4096];
  std::size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) {
    r.output.append(buf, n);
  }
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

int lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

TEST(MakeSysrootTest, WritesTheSameTreeAsTheLibraryWithTheNamedFaults) {
  TempDir by_tool, by_library;
  const ToolRun r = run_tool("dgx_h100 " + (by_tool.path() / "t").string() +
                             " --fault gpu-width-x8=3 --fault=no-peermem");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "");
  write_dgx_h100(by_library.path(), {.gpu_width_x8 = 3, .no_peermem = true});
  EXPECT_EQ(snapshot(by_tool.path() / "t"), snapshot(by_library.path()));
}

TEST(MakeSysrootTest, HelpListsEveryMachineAndFault) {
  const ToolRun r = run_tool("--help");
  EXPECT_EQ(r.status, 0);
  for (const auto& m : canned_machines()) {
    EXPECT_NE(r.output.find(m.name), std::string::npos) << m.name;
    for (const auto& f : m.faults) {
      EXPECT_NE(r.output.find(f.name), std::string::npos) << f.name;
    }
  }
}

TEST(MakeSysrootTest, BadInputGivesOneLineAndExitCode64) {
  TempDir dir;
  const std::string out = (dir.path() / "t").string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "expected MACHINE DIR (machines: dgx_h100, workstation, flattened_vm, ci_vm"},
      {"dgx_h100", "expected MACHINE DIR"},
      {"dgx_h100 " + out + " extra", "expected MACHINE DIR"},
      {"dgx_h200 " + out, "unknown machine 'dgx_h200' (machines: dgx_h100, workstation"},
      {"dgx_h100 " + out + " --fault nope", "unknown fault 'nope' for dgx_h100 (faults: "},
      {"dgx_h100 " + out + " --fault gpu-width-x8=8", "the index must be 0-7"},
      {"dgx_h100 " + out + " --fault no-peermem=1", "this fault takes no index"},
      {"ci_vm " + out + " --fault numa-unknown", "unknown fault 'numa-unknown' for ci_vm"},
      {"dgx_h100 " + out + " --fault", "--fault needs a NAME"},
      {"dgx_h100 " + out + " --verbose", "unknown option '--verbose'"},
      {"workstation " + dir.path().parent_path().string(), "is not empty"},
  };
  for (const auto& [args, message] : cases) {
    SCOPED_TRACE(args);
    const ToolRun r = run_tool(args);
    EXPECT_EQ(r.status, 64);
    EXPECT_EQ(lines(r.output), 1) << r.output;
    EXPECT_TRUE(r.output.starts_with("acco-make-sysroot: ")) << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
  }
  EXPECT_FALSE(fs::exists(out));
  EXPECT_NE(run_tool("dgx_h100 " + out + " --fault nope").output.find("gpu-width-x8[=N]"),
            std::string::npos);
}

TEST(MakeSysrootTest, UnwritableDirectoryGivesExitCode73) {
  const ToolRun r = run_tool("ci_vm /proc/acco-cannot-write-here");
  EXPECT_EQ(r.status, 73) << r.output;
  EXPECT_EQ(lines(r.output), 1) << r.output;
}

}  // namespace
}  // namespace acco::testing
