// The network assessment: what the sysfs source reads for it (MTU, GID types, port netdevs, NIC
// interrupts, socket buffer sysctls, /dev/shm, RLIMIT_MEMLOCK), each rule firing on a machine
// that has the fault and staying quiet on its healthy twin, and the NCCL environment acco
// recommends.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/core/fs.hpp"
#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"
#include "acco/topo/checks.hpp"
#include "acco/topo/json.hpp"
#include "acco/topo/link_model.hpp"
#include "acco/topo/nccl_env.hpp"
#include "acco/topo/probe.hpp"
#include "acco/topo/sysfs_source.hpp"

#include "machines.hpp"
#include "sysroot_builder.hpp"

namespace acco::topo {
namespace {

namespace stdfs = std::filesystem;
using ::acco::testing::IsOk;
using ::acco::testing::slurp;
using ::acco::testing::StatusIs;
using acco::testing::TempDir;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr const char* kWorkstationNic = "0000:a1:00.0";  // mlx5_0, ens3f0np0, NUMA 1

// Writes (or replaces) a file of a generated sysroot, path relative to its root.
void put(const stdfs::path& root, const std::string& relative, const std::string& content) {
  const auto path = root / relative;
  stdfs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

Machine read(const stdfs::path& dir) {
  auto fs = core::make_disk_fs(dir.string());
  EXPECT_THAT(fs, IsOk());
  auto m = discover_sysfs(**fs);
  EXPECT_THAT(m, IsOk());
  annotate_links(*m);
  return *m;
}

std::vector<Finding> of_rule(const Machine& m, const std::string& rule) {
  std::vector<Finding> out;
  for (auto& f : check(m)) {
    if (f.rule == rule) {
      out.push_back(std::move(f));
    }
  }
  return out;
}

const NetInterface& netdev(const Machine& m, const std::string& name) {
  const auto it = std::find_if(m.net_interfaces.begin(), m.net_interfaces.end(),
                               [&](const NetInterface& n) { return n.name == name; });
  EXPECT_NE(it, m.net_interfaces.end()) << name;
  return *it;
}

const IbPort& port(const Machine& m, const std::string& device) {
  const auto it = std::find_if(m.ib_ports.begin(), m.ib_ports.end(),
                               [&](const IbPort& p) { return p.device == device; });
  EXPECT_NE(it, m.ib_ports.end()) << device;
  return *it;
}

PciDevice& device(Machine& m, const std::string& address) {
  const auto it = std::find_if(m.pci_devices.begin(), m.pci_devices.end(),
                               [&](const PciDevice& d) { return d.address == address; });
  EXPECT_NE(it, m.pci_devices.end()) << address;
  return *it;
}

class WorkstationTest : public ::testing::Test {
 protected:
  void SetUp() override { acco::testing::write_workstation(dir_.path()); }
  [[nodiscard]] const stdfs::path& root() const { return dir_.path(); }
  TempDir dir_;
};

// --- what the source reads -----------------------------------------------------------------

TEST_F(WorkstationTest, ReadsEachInterfacesMtu) {
  put(root(), "sys/class/net/ens3f0np0/mtu", "9000\n");
  const auto m = read(root());
  EXPECT_EQ(netdev(m, "ens3f0np0").mtu, 9000);
  EXPECT_EQ(netdev(m, "lo").mtu, 65536);
}

TEST_F(WorkstationTest, GarbageMtuIsAnInputIssue) {
  put(root(), "sys/class/net/ens3f0np0/mtu", "jumbo\n");
  const auto m = read(root());
  EXPECT_FALSE(netdev(m, "ens3f0np0").mtu.has_value());
  EXPECT_THAT(m.input_issues, Contains(Field(&InputIssue::path, "/sys/class/net/ens3f0np0/mtu")));
}

TEST_F(WorkstationTest, PortNetdevComesFromTheDevicesNetDirectoryWithoutGidAttrs) {
  const auto m = read(root());
  EXPECT_EQ(port(m, "mlx5_0").netdev, "ens3f0np0");
  EXPECT_THAT(port(m, "mlx5_0").gid_types, IsEmpty());
}

TEST_F(WorkstationTest, ReadsDistinctGidTypesSkippingUnpopulatedEntries) {
  const std::string dir = "sys/class/infiniband/mlx5_0/ports/1/gid_attrs/";
  put(root(), dir + "types/0", "IB/RoCE v1\n");
  put(root(), dir + "types/1", "RoCE v2\n");
  put(root(), dir + "types/2", "IB/RoCE v1\n");
  put(root(), dir + "types/3", "RoCE v2\n");
  put(root(), dir + "types/10", "");  // an empty GID reads as nothing
  put(root(), dir + "ndevs/0", "ens3f0np0\n");
  const auto m = read(root());
  EXPECT_THAT(port(m, "mlx5_0").gid_types, ElementsAre("IB/RoCE v1", "RoCE v2"));
  EXPECT_EQ(port(m, "mlx5_0").roce_v2_gid_index, 1);
  EXPECT_EQ(port(m, "mlx5_0").netdev, "ens3f0np0");
  EXPECT_THAT(m.input_issues, IsEmpty());
}

TEST_F(WorkstationTest, ReadsNicInterruptsAndTheirAffinity) {
  put(root(), std::string("sys/bus/pci/devices/") + kWorkstationNic + "/msi_irqs/120", "msix\n");
  put(root(), std::string("sys/bus/pci/devices/") + kWorkstationNic + "/msi_irqs/99", "msix\n");
  put(root(), "proc/irq/99/smp_affinity_list", "32-35\n");
  put(root(), "proc/irq/120/smp_affinity_list", "0\n");
  const auto m = read(root());
  const auto* nic = m.find(kWorkstationNic);
  ASSERT_NE(nic, nullptr);
  ASSERT_EQ(nic->irqs.size(), 2U);
  EXPECT_EQ(nic->irqs[0].irq, 99);
  EXPECT_THAT(nic->irqs[0].cpus, ElementsAre(32, 33, 34, 35));
  EXPECT_EQ(nic->irqs[1].affinity_text, "0");
}

TEST_F(WorkstationTest, GarbageIrqAffinityIsAnInputIssue) {
  put(root(), std::string("sys/bus/pci/devices/") + kWorkstationNic + "/msi_irqs/120", "msix\n");
  put(root(), "proc/irq/120/smp_affinity_list", "all of them\n");
  const auto m = read(root());
  EXPECT_THAT(m.find(kWorkstationNic)->irqs[0].cpus, IsEmpty());
  EXPECT_THAT(m.input_issues,
              Contains(Field(&InputIssue::path, "/proc/irq/120/smp_affinity_list")));
}

TEST_F(WorkstationTest, ReadsSocketBufferCeilings) {
  put(root(), "proc/sys/net/core/rmem_max", "212992\n");
  put(root(), "proc/sys/net/core/wmem_max", "212992\n");
  put(root(), "proc/sys/net/ipv4/tcp_rmem", "4096\t131072\t6291456\n");
  put(root(), "proc/sys/net/ipv4/tcp_wmem", "4096\t16384\t4194304\n");
  const auto m = read(root());
  EXPECT_EQ(m.limits.rmem_max, 212992);
  EXPECT_EQ(m.limits.wmem_max, 212992);
  EXPECT_EQ(m.limits.tcp_rmem_max, 6291456);
  EXPECT_EQ(m.limits.tcp_wmem_max, 4194304);
  EXPECT_EQ(m.limits.tcp_rmem_text, "4096 131072 6291456");
}

TEST_F(WorkstationTest, TcpRmemWithoutThreeFieldsIsAnInputIssue) {
  put(root(), "proc/sys/net/ipv4/tcp_rmem", "4096 131072\n");
  const auto m = read(root());
  EXPECT_FALSE(m.limits.tcp_rmem_max.has_value());
  EXPECT_THAT(m.input_issues, Contains(Field(&InputIssue::path, "/proc/sys/net/ipv4/tcp_rmem")));
}

TEST_F(WorkstationTest, ReadsTheMemlockSoftLimit) {
  put(root(), "proc/self/limits",
      "Limit                     Soft Limit           Hard Limit           Units     \n"
      "Max open files            1024                 1048576              files     \n"
      "Max locked memory         8388608              unlimited            bytes     \n");
  auto m = read(root());
  EXPECT_EQ(m.limits.memlock_unlimited, false);
  EXPECT_EQ(m.limits.memlock_bytes, 8388608U);
  put(root(), "proc/self/limits",
      "Limit                     Soft Limit           Hard Limit           Units     \n"
      "Max locked memory         unlimited            unlimited            bytes     \n");
  m = read(root());
  EXPECT_EQ(m.limits.memlock_unlimited, true);
  EXPECT_FALSE(m.limits.memlock_bytes.has_value());
}

TEST_F(WorkstationTest, LimitsWithoutMemlockLineIsAnInputIssue) {
  put(root(), "proc/self/limits", "Limit Soft Limit Hard Limit Units\n");
  const auto m = read(root());
  EXPECT_FALSE(m.limits.memlock_unlimited.has_value());
  EXPECT_THAT(m.input_issues, Contains(Field(&InputIssue::path, "/proc/self/limits")));
}

TEST_F(WorkstationTest, ShmSizeComesFromTheSizeOption) {
  put(root(), "proc/self/mountinfo",
      "22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw\n"
      "26 22 0:24 / /dev/shm rw,nosuid,nodev - tmpfs shm rw,size=65536k,inode64\n");
  const auto m = read(root());
  EXPECT_EQ(m.limits.shm_bytes, 64ULL << 20);
  EXPECT_EQ(m.limits.shm_evidence, "size=65536k");
}

TEST_F(WorkstationTest, ShmWithoutSizeOptionIsHalfOfMemory) {
  put(root(), "proc/self/mountinfo",
      "22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw\n"
      "26 22 0:24 / /dev/shm rw,nosuid,nodev - tmpfs tmpfs rw,inode64\n");
  put(root(), "proc/meminfo", "MemTotal:       16777216 kB\nMemFree:        1000 kB\n");
  const auto m = read(root());
  EXPECT_EQ(m.limits.shm_bytes, 8ULL << 30);
  EXPECT_THAT(m.limits.shm_evidence, HasSubstr("half of MemTotal"));
}

TEST(NetLimitsTest, EveryFigureIsAbsentWhenItsFileIs) {
  TempDir dir;
  acco::testing::write_ci_vm(dir.path());
  const auto m = read(dir.path());
  EXPECT_EQ(m.limits, HostLimits{});
}

// --- roce-mtu-low ---------------------------------------------------------------------------

TEST_F(WorkstationTest, RoceMtuLowFiresOnA1500ByteRocePort) {
  const auto f = of_rule(read(root()), "roce-mtu-low");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  EXPECT_THAT(f[0].message, HasSubstr("RoCE MTU is 1024"));
  EXPECT_THAT(f[0].recommendation, HasSubstr("ip link set dev ens3f0np0 mtu 9000"));
}

TEST_F(WorkstationTest, RoceMtuLowNeeds4192BytesForA4096RoceMtu) {
  put(root(), "sys/class/net/ens3f0np0/mtu", "4096\n");
  EXPECT_THAT(of_rule(read(root()), "roce-mtu-low"), Not(IsEmpty()));
  put(root(), "sys/class/net/ens3f0np0/mtu", "4200\n");
  EXPECT_THAT(of_rule(read(root()), "roce-mtu-low"), IsEmpty());
}

TEST(RoceMtuTest, SlowerRocePortBesideFasterRailsIsInfo) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());  // 100 GbE RoCE management beside 400G IB rails
  const auto f = of_rule(read(dir.path()), "roce-mtu-low");
  ASSERT_FALSE(f.empty());
  for (const auto& finding : f) {
    EXPECT_EQ(finding.severity, Severity::kInfo);
    EXPECT_THAT(finding.message, HasSubstr("management or storage"));
  }
}

TEST(RoceMtuTest, InfiniBandPortsAreNotJudgedByTheirIpoibMtu) {
  TempDir dir;
  acco::testing::write_kvm_guest(dir.path());  // IB ports with IPoIB at 4092
  EXPECT_THAT(of_rule(read(dir.path()), "roce-mtu-low"), IsEmpty());
}

// --- roce-gid-v1-only -----------------------------------------------------------------------

TEST_F(WorkstationTest, RoceGidV1OnlyFiresWithoutARoceV2Gid) {
  put(root(), "sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/0", "IB/RoCE v1\n");
  const auto f = of_rule(read(root()), "roce-gid-v1-only");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_THAT(f[0].recommendation, HasSubstr("cma_roce_mode -d mlx5_0 -p 1 -m 2"));
}

TEST_F(WorkstationTest, RoceGidV1OnlyIsQuietWithARoceV2Gid) {
  put(root(), "sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/0", "IB/RoCE v1\n");
  put(root(), "sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/1", "RoCE v2\n");
  EXPECT_THAT(of_rule(read(root()), "roce-gid-v1-only"), IsEmpty());
}

TEST_F(WorkstationTest, RoceGidV1OnlyIsQuietWhenNoGidTypeWasReadable) {
  EXPECT_THAT(of_rule(read(root()), "roce-gid-v1-only"), IsEmpty());
}

// --- rail-unbalanced ------------------------------------------------------------------------

TEST(RailTest, DgxWithOneNicPerGpuSwitchIsBalanced) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  EXPECT_THAT(of_rule(read(dir.path()), "rail-unbalanced"), IsEmpty());
}

TEST(RailTest, GpuWhoseSwitchLostItsRdmaNicIsNamed) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  auto m = read(dir.path());
  // The card is gone from GPU 3's switch: neither its function nor its port is there.
  const std::string gone(acco::testing::kDgxH100Nics[3]);
  std::erase_if(m.ib_ports, [&](const IbPort& p) { return p.pci == gone; });
  std::erase_if(m.pci_devices, [&](const PciDevice& d) { return d.address == gone; });
  std::erase_if(m.net_interfaces, [&](const NetInterface& n) { return n.pci == gone; });
  const auto f = of_rule(m, "rail-unbalanced");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].devices.front(), std::string(acco::testing::kDgxH100Gpus[3]));
  EXPECT_THAT(f[0].message, HasSubstr("7 of 8 GPUs"));
}

TEST(RailTest, NoGpuOnASwitchWithANicIsLeftToGpuNicRemote) {
  TempDir dir;
  acco::testing::write_workstation(dir.path());  // GPUs and NIC each on their own root port
  EXPECT_THAT(of_rule(read(dir.path()), "rail-unbalanced"), IsEmpty());
}

// --- nic-irq-remote -------------------------------------------------------------------------

TEST_F(WorkstationTest, NicIrqRemoteFiresWhenVectorsGoOnlyToTheOtherSocket) {
  auto m = read(root());
  device(m, kWorkstationNic).irqs = {{120, "0-31", {}}, {121, "32", {32}}};
  for (int cpu = 0; cpu < 32; ++cpu) {
    device(m, kWorkstationNic).irqs[0].cpus.push_back(cpu);
  }
  const auto f = of_rule(m, "nic-irq-remote");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_THAT(f[0].message, HasSubstr("1 of its 2 interrupt vectors"));
  EXPECT_THAT(f[0].recommendation,
              HasSubstr("for i in 120; do echo 32-63,96-127 > /proc/irq/$i/smp_affinity_list"));
}

TEST_F(WorkstationTest, NicIrqRemoteIsQuietWhenEveryVectorMayRunOnItsNode) {
  auto m = read(root());
  device(m, kWorkstationNic).irqs = {{120, "0-127", {}}, {121, "40", {40}}};
  for (int cpu = 0; cpu < 128; ++cpu) {
    device(m, kWorkstationNic).irqs[0].cpus.push_back(cpu);
  }
  EXPECT_THAT(of_rule(m, "nic-irq-remote"), IsEmpty());
}

// --- net-socket-buffers-small ---------------------------------------------------------------

TEST_F(WorkstationTest, SocketBuffersBelowRateTimesRttGiveTheSysctlLines) {
  put(root(), "proc/sys/net/core/rmem_max", "212992\n");
  put(root(), "proc/sys/net/ipv4/tcp_rmem", "4096\t87380\t6291456\n");
  put(root(), "proc/sys/net/core/wmem_max", "16777216\n");
  auto m = read(root());
  auto f = of_rule(m, "net-socket-buffers-small");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kInfo);  // RDMA carries the data here
  // 100 Gb/s x 1 ms = 12.5 MB, rounded up to 16 MiB.
  EXPECT_THAT(f[0].recommendation, HasSubstr("net.core.rmem_max = 16777216"));
  EXPECT_THAT(f[0].recommendation, HasSubstr("net.ipv4.tcp_rmem = 4096 87380 16777216"));
  EXPECT_THAT(f[0].recommendation, Not(HasSubstr("wmem_max")));
  m.ib_ports.clear();
  f = of_rule(m, "net-socket-buffers-small");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
}

TEST_F(WorkstationTest, SocketBuffersAtRateTimesRttAreQuiet) {
  put(root(), "proc/sys/net/core/rmem_max", "16777216\n");
  put(root(), "proc/sys/net/core/wmem_max", "16777216\n");
  put(root(), "proc/sys/net/ipv4/tcp_rmem", "4096 131072 16777216\n");
  put(root(), "proc/sys/net/ipv4/tcp_wmem", "4096 16384 16777216\n");
  EXPECT_THAT(of_rule(read(root()), "net-socket-buffers-small"), IsEmpty());
}

// --- dev-shm-small and memlock-limited ------------------------------------------------------

TEST_F(WorkstationTest, DevShmSmallByItsSize) {
  auto m = read(root());
  m.limits.shm_bytes = 64ULL << 20;  // Docker's default
  m.limits.shm_evidence = "size=65536k";
  auto f = of_rule(m, "dev-shm-small");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kCritical);
  EXPECT_THAT(f[0].recommendation, HasSubstr("--shm-size=1g"));
  m.limits.shm_bytes = 512ULL << 20;
  f = of_rule(m, "dev-shm-small");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  m.limits.shm_bytes = 1ULL << 30;
  EXPECT_THAT(of_rule(m, "dev-shm-small"), IsEmpty());
  m.limits.shm_bytes.reset();
  EXPECT_THAT(of_rule(m, "dev-shm-small"), IsEmpty());
}

TEST_F(WorkstationTest, MemlockLimitedIsAWarningWithRdmaPorts) {
  auto m = read(root());
  m.limits.memlock_unlimited = false;
  m.limits.memlock_bytes = 8ULL << 20;
  m.limits.memlock_text = "8388608";
  auto f = of_rule(m, "memlock-limited");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  EXPECT_THAT(f[0].recommendation, HasSubstr("--ulimit memlock=-1"));
  m.ib_ports.clear();
  f = of_rule(m, "memlock-limited");
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  m.limits.memlock_unlimited = true;
  EXPECT_THAT(of_rule(m, "memlock-limited"), IsEmpty());
}

// --- snapshot round trip and JSON --------------------------------------------------------

// Every new figure survives --snapshot and --from, and reaches acco.probe/1.
TEST_F(WorkstationTest, NetworkFiguresRoundTripThroughASnapshotAndReachTheJson) {
  put(root(), "sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/0", "IB/RoCE v1\n");
  put(root(), "sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/1", "RoCE v2\n");
  put(root(), std::string("sys/bus/pci/devices/") + kWorkstationNic + "/msi_irqs/120", "msix\n");
  put(root(), "proc/irq/120/smp_affinity_list", "0-3\n");
  put(root(), "proc/sys/net/core/rmem_max", "212992\n");
  put(root(), "proc/sys/net/ipv4/tcp_wmem", "4096\t16384\t4194304\n");
  put(root(), "proc/self/limits", "Max locked memory         65536    65536    bytes\n");
  put(root(), "proc/self/mountinfo",
      "22 1 259:2 / / rw - ext4 /dev/nvme0n1p2 rw\n"
      "26 22 0:24 / /dev/shm rw - tmpfs shm rw,size=1g\n");
  ProbeRequest live;
  live.sysroot = root().string();
  live.nvml = NvmlMode::kOff;
  live.capture_snapshot = true;
  auto first = probe(live);
  ASSERT_THAT(first, IsOk());
  const auto file = root() / "snapshot.json";
  ASSERT_THAT(write_snapshot(file.string(), *first->snapshot), IsOk());
  ProbeRequest replay;
  replay.from_snapshot = file.string();
  auto second = probe(replay);
  ASSERT_THAT(second, IsOk());
  const Machine& a = first->machine;
  const Machine& b = second->machine;
  EXPECT_EQ(a.limits, b.limits);
  EXPECT_EQ(a.ib_ports, b.ib_ports);
  EXPECT_EQ(a.net_interfaces, b.net_interfaces);
  EXPECT_EQ(a.find(kWorkstationNic)->irqs, b.find(kWorkstationNic)->irqs);
  EXPECT_EQ(b.limits.shm_bytes, 1ULL << 30);
  EXPECT_EQ(b.limits.memlock_bytes, 65536U);

  const auto j = probe_json(b, second->findings);
  EXPECT_EQ(j["machine"]["limits"]["rmem_max_bytes"], 212992);
  EXPECT_EQ(j["machine"]["limits"]["tcp_wmem"], "4096 16384 4194304");
  EXPECT_EQ(j["machine"]["limits"]["memlock_unlimited"], false);
  bool port_seen = false;
  for (const auto& p : j["machine"]["ib_ports"]) {
    if (p["device"] == "mlx5_0") {
      port_seen = true;
      EXPECT_EQ(p["netdev"], "ens3f0np0");
      EXPECT_EQ(p["roce_v2_gid_index"], 1);
      EXPECT_EQ(p["gid_types"].size(), 2U);
    }
  }
  EXPECT_TRUE(port_seen);
  for (const auto& d : j["devices"]) {
    if (d["pci"] == kWorkstationNic) {
      ASSERT_TRUE(d.contains("irqs"));
      EXPECT_EQ(d["irqs"][0]["affinity"], "0-3");
    }
  }
}

// --- nccl_env -------------------------------------------------------------------------------

std::string value_of(const NcclEnv& env, const std::string& name) {
  for (const auto& s : env.settings) {
    if (s.name == name) {
      return s.value;
    }
  }
  return "<absent>";
}

TEST(NcclEnvTest, KvmGuestNamesItsRailsAndWantsATopologyFile) {
  TempDir dir;
  acco::testing::write_kvm_guest(dir.path());
  const auto env = nccl_env(read(dir.path()));
  EXPECT_EQ(value_of(env, "NCCL_IB_HCA"), "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1");
  EXPECT_EQ(value_of(env, "UCX_NET_DEVICES"), "mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1");
  // The IPoIB interfaces are left to the RDMA side; the virtio NIC carries sockets.
  EXPECT_EQ(value_of(env, "NCCL_SOCKET_IFNAME"), "=enp0s3");
  EXPECT_EQ(value_of(env, "OMPI_MCA_btl_tcp_if_include"), "enp0s3");
  EXPECT_TRUE(env.wants_topo_file);
}

TEST(NcclEnvTest, TheTextIsAShellScriptWithEachReasonAboveItsExport) {
  Machine m;
  m.hostname = "node7";
  m.origin = "sysfs";
  NcclEnv env;
  env.settings.push_back({.name = "NCCL_SOCKET_IFNAME", .value = "=it's", .reason = "why"});
  env.notes.emplace_back("a note");
  env.wants_topo_file = true;
  EXPECT_EQ(nccl_env_text(m, env, ""),
            "# NCCL, UCX and Open MPI settings acco recommends for node7 (sysfs)\n"
            "# NCCL_SOCKET_IFNAME: why\nexport NCCL_SOCKET_IFNAME='=it'\\''s'\n# a note\n"
            "# a virtual machine: NCCL misreads its flattened PCI tree; add --nccl-topo-file FILE "
            "to write an NCCL_TOPO_FILE\n");
  EXPECT_THAT(nccl_env_text(m, env, "/tmp/t.xml"),
              HasSubstr("\nexport NCCL_TOPO_FILE='/tmp/t.xml'\n"));
}

TEST(NcclEnvTest, SlowerManagementPortIsLeftOutOfTheHcaList) {
  TempDir dir;
  acco::testing::write_pcie_server(dir.path(), {.mgmt_cx4_lx = true});
  const auto env = nccl_env(read(dir.path()));
  EXPECT_THAT(value_of(env, "NCCL_IB_HCA"), Not(HasSubstr("mlx5_4")));
  EXPECT_THAT(value_of(env, "NCCL_IB_HCA"), HasSubstr("mlx5_2:1"));
  EXPECT_FALSE(env.wants_topo_file);
}

TEST(NcclEnvTest, WithoutRdmaUcxUsesTheSocketInterface) {
  TempDir dir;
  acco::testing::write_ci_vm(dir.path());
  put(dir.path(), "sys/class/net/eth0/operstate", "up\n");
  const auto env = nccl_env(read(dir.path()));
  EXPECT_EQ(value_of(env, "NCCL_IB_HCA"), "<absent>");
  EXPECT_EQ(value_of(env, "UCX_NET_DEVICES"), "eth0");
  EXPECT_THAT(env.notes, Contains(HasSubstr("no InfiniBand/RoCE port")));
  // A VM, but without GPUs there is nothing for an NCCL topology file to pair.
  EXPECT_TRUE(env.virtual_machine);
  EXPECT_FALSE(env.wants_topo_file);
}

TEST(NcclEnvTest, DownInterfacesAreNotChosen) {
  TempDir dir;
  acco::testing::write_ci_vm(dir.path());
  put(dir.path(), "sys/class/net/eth0/operstate", "down\n");
  const auto env = nccl_env(read(dir.path()));
  EXPECT_EQ(value_of(env, "NCCL_SOCKET_IFNAME"), "<absent>");
}

TEST(NcclTopoXmlTest, KvmGuestPairsEachGpuWithANicUnderAMadeUpSwitch) {
  TempDir dir;
  acco::testing::write_kvm_guest(dir.path());
  const auto xml = nccl_topo_xml(read(dir.path()));
  EXPECT_THAT(xml, HasSubstr("<system version=\"1\">"));
  EXPECT_THAT(xml, HasSubstr("<cpu numaid=\"0\" affinity=\"00000000,0000ffff,ffffffff\">"));
  EXPECT_THAT(xml, HasSubstr("<cpu numaid=\"1\" affinity=\"ffffffff,ffff0000,00000000\">"));
  const auto first = xml.find("<pci busid=\"ffff:ff:01.0\"");
  const auto second = xml.find("<pci busid=\"ffff:ff:02.0\"");
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(second, std::string::npos);
  const auto gpu0 = xml.find("busid=\"0000:01:00.0\"");
  const auto nic0 = xml.find("busid=\"0000:05:00.0\"");
  EXPECT_TRUE(first < gpu0 && gpu0 < nic0 && nic0 < second) << xml;
  // The devices' own links, not the emulated ports'.
  EXPECT_THAT(xml, Not(HasSubstr("2.5 GT/s")));
}

TEST(NcclTopoXmlTest, TheFileIsWrittenOnlyWhereTheRecommendationWantsOne) {
  TempDir dir;
  acco::testing::write_kvm_guest(dir.path() / "guest");
  const Machine guest = read(dir.path() / "guest");
  const std::string xml = (dir.path() / "topo.xml").string();
  ASSERT_THAT(write_nccl_topo_file(guest, nccl_env(guest), xml), IsOk());
  EXPECT_EQ(slurp(xml), nccl_topo_xml(guest));
  EXPECT_THAT(write_nccl_topo_file(guest, nccl_env(guest), "/nonexistent-acco-dir/topo.xml"),
              StatusIs(Errc::kCannotWrite));

  acco::testing::write_ci_vm(dir.path() / "vm");
  const Machine vm = read(dir.path() / "vm");
  EXPECT_THAT(write_nccl_topo_file(vm, nccl_env(vm), xml),
              StatusIs(Errc::kInvalidArgument,
                       vm.origin + " is a virtual machine without GPUs; there is nothing for "
                                   "NCCL to pair"));
  acco::testing::write_pcie_server(dir.path() / "metal", {});
  const Machine metal = read(dir.path() / "metal");
  const std::string other = (dir.path() / "other.xml").string();
  EXPECT_THAT(
      write_nccl_topo_file(metal, nccl_env(metal), other),
      StatusIs(Errc::kInvalidArgument, metal.origin + " is not a virtual machine; NCCL reads its "
                                                      "PCI topology from sysfs as it is"));
  EXPECT_FALSE(std::filesystem::exists(other));
}

}  // namespace
}  // namespace acco::topo
