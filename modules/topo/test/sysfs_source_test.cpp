// Bad input to the probe: a healthy generated sysroot with one file damaged must still probe, note
// the file as an input issue and report nothing it did not see; bad sysroots and snapshots must
// fail with a one-line error naming the input.
#include "acco/topo/sysfs_source.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "acco/core/units.hpp"
#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"
#include "acco/topo/json.hpp"
#include "acco/topo/probe.hpp"

#include "machines.hpp"
#include "sysroot_builder.hpp"

namespace acco::topo {
namespace {

namespace stdfs = std::filesystem;
using acco::testing::DgxH100Options;
using acco::testing::FirmwareQuirksOptions;
using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using acco::testing::TempDir;
using ::testing::AnyOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

const std::string kGpu(acco::testing::kDgxH100Gpus[0]);
// The switch downstream port above GPU 0: a bridge whose ACS decides GPU-NIC peer traffic.
const std::string kGpuPort = "0000:17:00.0";

std::string device_file(const std::string& address, const std::string& name) {
  return "/sys/bus/pci/devices/" + address + "/" + name;
}

// A sysroot path as the probe names it ("/sys/...") mapped onto the directory holding it.
stdfs::path on_disk(const stdfs::path& root, const std::string& path) {
  return root / stdfs::path(path).relative_path();
}

void overwrite(const stdfs::path& root, const std::string& path, const std::string& content) {
  std::ofstream out(on_disk(root, path), std::ios::binary | std::ios::trunc);
  ASSERT_TRUE(out) << path;
  out << content;
}

Result<ProbeResult> probe_at(const stdfs::path& sysroot, const stdfs::path& write_snapshot = {}) {
  ProbeRequest request;
  request.sysroot = sysroot.string();
  request.write_snapshot = write_snapshot.string();
  return probe(request);
}

Result<ProbeResult> replay(const stdfs::path& snapshot) {
  ProbeRequest request;
  request.from_snapshot = snapshot.string();
  return probe(request);
}

ProbeResult probe_sysroot(const stdfs::path& root) {
  auto result = probe_at(root);
  EXPECT_THAT(result, IsOk());
  return result.value_or(ProbeResult{});
}

struct Damaged {
  ProbeResult healthy;
  ProbeResult damaged;
};

// Probes a DGX H100 before and after `damage` changes its sysroot.
Damaged probe_damaged_dgx(const std::function<void(const stdfs::path&)>& damage,
                          const DgxH100Options& options = {}) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path(), options);
  Damaged out;
  out.healthy = probe_sysroot(dir.path());
  EXPECT_TRUE(out.healthy.machine.input_issues.empty());
  damage(dir.path());
  out.damaged = probe_sysroot(dir.path());
  return out;
}

// Every finding other than input-unreadable was already made, with at least these devices, on
// the healthy machine: damage may hide facts but must not invent problems.
void expect_no_invented_findings(const Damaged& d) {
  for (const auto& f : d.damaged.findings) {
    if (f.rule == "input-unreadable") {
      continue;
    }
    const bool known =
        std::any_of(d.healthy.findings.begin(), d.healthy.findings.end(), [&](const Finding& h) {
          return h.rule == f.rule && h.severity == f.severity &&
                 std::all_of(f.devices.begin(), f.devices.end(), [&](const std::string& dev) {
                   return std::find(h.devices.begin(), h.devices.end(), dev) != h.devices.end();
                 });
        });
    EXPECT_TRUE(known) << "invented finding " << f.rule << ": " << f.message;
  }
}

// Exactly one input issue, about `path`, reported as an input-unreadable finding.
void expect_one_issue(const Damaged& d, const std::string& path) {
  const auto& issues = d.damaged.machine.input_issues;
  ASSERT_EQ(issues.size(), 1U);
  EXPECT_EQ(issues[0].path, path);
  EXPECT_FALSE(issues[0].problem.empty());
  EXPECT_THAT(issues[0].problem, Not(HasSubstr("\n")));
  const auto it = std::find_if(d.damaged.findings.begin(), d.damaged.findings.end(),
                               [](const Finding& f) { return f.rule == "input-unreadable"; });
  ASSERT_NE(it, d.damaged.findings.end());
  EXPECT_EQ(it->severity, Severity::kInfo);
  ASSERT_FALSE(it->evidence.empty());
  EXPECT_EQ(it->evidence[0].source, path);
  expect_no_invented_findings(d);
}

void expect_no_issue(const Damaged& d) {
  EXPECT_TRUE(d.damaged.machine.input_issues.empty());
  expect_no_invented_findings(d);
}

const PciDevice& device(const ProbeResult& r, const std::string& address) {
  const PciDevice* d = r.machine.find(address);
  EXPECT_NE(d, nullptr) << address;
  static const PciDevice kNone;
  return d != nullptr ? *d : kNone;
}

bool has_ib_port(const ProbeResult& r, const std::string& ib_device) {
  return std::any_of(r.machine.ib_ports.begin(), r.machine.ib_ports.end(),
                     [&](const IbPort& p) { return p.device == ib_device; });
}

// A one-line error naming `input`.
void expect_one_line_error(const Result<ProbeResult>& r, const std::string& input) {
  ASSERT_THAT(r, Not(IsOk()));
  EXPECT_THAT(r, AnyOf(StatusIs(Errc::kInvalidArgument), StatusIs(Errc::kNotFound)));
  EXPECT_THAT(r.error().message, HasSubstr(input));
  EXPECT_THAT(r.error().message, Not(HasSubstr("\n")));
}

// ---- the sysroot itself ----

TEST(SysfsSourceTest, MissingSysrootDirectoryIsNotFoundNamingThePath) {
  TempDir dir;
  const auto missing = (dir.path() / "no-such-sysroot").string();
  const auto r = probe_at(missing);
  ASSERT_THAT(r, StatusIs(Errc::kNotFound));
  EXPECT_THAT(r.error().message, HasSubstr(missing));
  EXPECT_THAT(r.error().message, Not(HasSubstr("\n")));
}

TEST(SysfsSourceTest, SysrootWithoutSysIsNotFound) {
  TempDir dir;
  stdfs::create_directories(dir.path() / "proc");
  const auto r = probe_at(dir.path());
  ASSERT_THAT(r, StatusIs(Errc::kNotFound));
  EXPECT_THAT(r.error().message, HasSubstr("/sys"));
  EXPECT_THAT(r.error().message, HasSubstr(dir.path().string()));
  EXPECT_THAT(r.error().message, Not(HasSubstr("\n")));
}

// ---- one damaged file in a DGX H100 ----

TEST(SysfsSourceTest, EmptyClassFileIsAnInputIssueNotACrash) {
  const auto d = probe_damaged_dgx(
      [](const stdfs::path& root) { overwrite(root, device_file(kGpu, "class"), ""); });
  expect_one_issue(d, device_file(kGpu, "class"));
  EXPECT_EQ(device(d.damaged, kGpu).kind, DeviceKind::kOther);
}

TEST(SysfsSourceTest, GarbageLinkWidthIsAnInputIssueNotACrash) {
  const auto d = probe_damaged_dgx([](const stdfs::path& root) {
    overwrite(root, device_file(kGpu, "current_link_width"), "sixteen\n");
  });
  expect_one_issue(d, device_file(kGpu, "current_link_width"));
  EXPECT_EQ(device(d.damaged, kGpu).current.width, 0);
}

TEST(SysfsSourceTest, TruncatedLinkSpeedIsAnInputIssue) {
  const auto d = probe_damaged_dgx([](const stdfs::path& root) {
    overwrite(root, device_file(kGpu, "current_link_speed"), "16.0 GT");
  });
  expect_one_issue(d, device_file(kGpu, "current_link_speed"));
  EXPECT_EQ(device(d.damaged, kGpu).current.speed_gts, 0);
}

TEST(SysfsSourceTest, UnknownSpeedWordIsAnInputIssue) {
  const auto d = probe_damaged_dgx([](const stdfs::path& root) {
    overwrite(root, device_file(kGpu, "max_link_speed"), "fast\n");
  });
  expect_one_issue(d, device_file(kGpu, "max_link_speed"));
  EXPECT_THAT(d.damaged.machine.input_issues[0].problem, HasSubstr("'fast'"));
  EXPECT_EQ(device(d.damaged, kGpu).max.speed_gts, 0);
}

TEST(SysfsSourceTest, KernelUnknownLinkSpeedIsUnknownNotAnInputIssue) {
  const auto d = probe_damaged_dgx([](const stdfs::path& root) {
    overwrite(root, device_file(kGpu, "current_link_speed"), "Unknown\n");
  });
  expect_no_issue(d);
  EXPECT_EQ(device(d.damaged, kGpu).current.speed_gts, 0);
  EXPECT_FALSE(device(d.damaged, kGpu).current.known());
}

TEST(SysfsSourceTest, GarbageNumaNodeIsAnInputIssue) {
  const auto d = probe_damaged_dgx(
      [](const stdfs::path& root) { overwrite(root, device_file(kGpu, "numa_node"), "banana\n"); });
  expect_one_issue(d, device_file(kGpu, "numa_node"));
  // local_cpulist, which the kernel prints from the same node, still names it.
  EXPECT_EQ(device(d.damaged, kGpu).numa_node, 0);
}

TEST(SysfsSourceTest, NegativeLinkWidthIsAnInputIssue) {
  const auto d = probe_damaged_dgx([](const stdfs::path& root) {
    overwrite(root, device_file(kGpu, "current_link_width"), "-16\n");
  });
  expect_one_issue(d, device_file(kGpu, "current_link_width"));
  EXPECT_EQ(device(d.damaged, kGpu).current.width, 0);
}

TEST(SysfsSourceTest, HugeLinkWidthIsAnInputIssue) {
  const auto d = probe_damaged_dgx([](const stdfs::path& root) {
    overwrite(root, device_file(kGpu, "max_link_width"), "999\n");
  });
  expect_one_issue(d, device_file(kGpu, "max_link_width"));
  EXPECT_EQ(device(d.damaged, kGpu).max.width, 0);
}

TEST(SysfsSourceTest, DanglingDeviceLinkIsAnInputIssue) {
  const auto link = "/sys/bus/pci/devices/" + kGpu;
  const auto d = probe_damaged_dgx([&](const stdfs::path& root) {
    stdfs::remove(on_disk(root, link));
    stdfs::create_symlink("../../../devices/pci0000:15/nowhere", on_disk(root, link));
  });
  expect_one_issue(d, link);
  EXPECT_EQ(d.damaged.machine.find(kGpu), nullptr);
}

TEST(SysfsSourceTest, DanglingBridgeLinkLeavesOutItsSubtree) {
  // GPU 0's switch upstream port: below it are two downstream ports, GPU 0 and NIC 0.
  const std::string bridge = "0000:16:00.0";
  const auto link = "/sys/bus/pci/devices/" + bridge;
  const auto d = probe_damaged_dgx([&](const stdfs::path& root) {
    stdfs::remove(on_disk(root, link));
    stdfs::create_symlink("../../../devices/pci0000:15/nowhere", on_disk(root, link));
  });
  const auto& issues = d.damaged.machine.input_issues;
  ASSERT_FALSE(issues.empty());
  EXPECT_EQ(issues[0].path, link);
  for (const auto& address :
       {bridge, kGpuPort, kGpu, std::string(acco::testing::kDgxH100Nics[0])}) {
    EXPECT_EQ(d.damaged.machine.find(address), nullptr) << address;
  }
  for (const auto& issue : issues) {
    EXPECT_THAT(issue.path, HasSubstr("/sys/bus/pci/devices/"));
  }
  EXPECT_EQ(issues.size(), 5U);
  EXPECT_EQ(d.damaged.machine.pci_devices.size(), d.healthy.machine.pci_devices.size() - 5);
  expect_no_invented_findings(d);
}

TEST(SysfsSourceTest, DanglingDriverLinkStillNamesTheDriver) {
  // A copied sysroot may lack sys/bus/pci/drivers; the link's own text still names the driver.
  const auto link = device_file(kGpu, "driver");
  const auto d = probe_damaged_dgx([&](const stdfs::path& root) {
    stdfs::remove(on_disk(root, link));
    stdfs::create_symlink("../../../../bus/pci/drivers/gone", on_disk(root, link));
  });
  expect_no_issue(d);
  EXPECT_EQ(device(d.damaged, kGpu).driver, "gone");
}

TEST(SysfsSourceTest, UnreadableFileIsAnInputIssue) {
  if (::geteuid() == 0) {
    GTEST_SKIP() << "running as root: chmod 000 does not stop root from reading";
  }
  const auto path = device_file(kGpu, "current_link_width");
  const auto d = probe_damaged_dgx([&](const stdfs::path& root) {
    stdfs::permissions(on_disk(root, path), stdfs::perms::none);
  });
  expect_one_issue(d, path);
}

TEST(SysfsSourceTest, IbStateWithoutNumberIsAnInputIssue) {
  const std::string path = "/sys/class/infiniband/mlx5_0/ports/1/state";
  const auto d =
      probe_damaged_dgx([&](const stdfs::path& root) { overwrite(root, path, "ACTIVE\n"); });
  expect_one_issue(d, path);
  // Its facts are unknown, so the port is left out rather than reported down or slow.
  EXPECT_TRUE(has_ib_port(d.healthy, "mlx5_0"));
  EXPECT_FALSE(has_ib_port(d.damaged, "mlx5_0"));
}

TEST(SysfsSourceTest, GarbageIbRateIsAnInputIssue) {
  const std::string path = "/sys/class/infiniband/mlx5_0/ports/1/rate";
  const auto d =
      probe_damaged_dgx([&](const stdfs::path& root) { overwrite(root, path, "very fast\n"); });
  expect_one_issue(d, path);
  // Its facts are unknown, so the port is left out rather than reported down or slow.
  EXPECT_TRUE(has_ib_port(d.healthy, "mlx5_0"));
  EXPECT_FALSE(has_ib_port(d.damaged, "mlx5_0"));
}

TEST(SysfsSourceTest, GarbageNodeDistanceIsAnInputIssue) {
  const std::string path = "/sys/devices/system/node/node0/distance";
  const auto d =
      probe_damaged_dgx([&](const stdfs::path& root) { overwrite(root, path, "10 far\n"); });
  expect_one_issue(d, path);
  EXPECT_TRUE(d.damaged.machine.numa_nodes.at(0).distances.empty());
}

TEST(SysfsSourceTest, GarbageCpulistIsAnInputIssue) {
  const std::string path = "/sys/devices/system/node/node0/cpulist";
  const auto d =
      probe_damaged_dgx([&](const stdfs::path& root) { overwrite(root, path, "0-x,7\n"); });
  expect_one_issue(d, path);
}

TEST(SysfsSourceTest, MeminfoWithoutMemTotalIsAnInputIssue) {
  const std::string path = "/sys/devices/system/node/node1/meminfo";
  const auto d = probe_damaged_dgx(
      [&](const stdfs::path& root) { overwrite(root, path, "Node 1 MemFree:        1000 kB\n"); });
  expect_one_issue(d, path);
}

TEST(SysfsSourceTest, GarbageNumaNodeDirectoryNameIsAnInputIssue) {
  const std::string path = "/sys/devices/system/node/node99999999999";
  const auto d = probe_damaged_dgx(
      [&](const stdfs::path& root) { stdfs::create_directories(on_disk(root, path)); });
  expect_one_issue(d, path);
  EXPECT_EQ(d.damaged.machine.numa_nodes.size(), 2U);
}

TEST(SysfsSourceTest, RandomConfigBytesEndTheCapabilityWalk) {
  // Fixed seed: mt19937's output is the same everywhere, so these bytes are too. They make a
  // capability list whose next pointers soon go below 0x100 or revisit an offset.
  std::mt19937 random(20240611);
  std::string bytes(4096, '\0');
  for (auto& b : bytes) {
    b = static_cast<char>(random() & 0xff);
  }
  const auto path = device_file(kGpuPort, "config");
  const auto d = probe_damaged_dgx([&](const stdfs::path& root) { overwrite(root, path, bytes); },
                                   {.config_as_root = true});
  expect_one_issue(d, path);
  EXPECT_FALSE(device(d.damaged, kGpuPort).acs_control.has_value());
}

TEST(SysfsSourceTest, LoopingExtendedCapabilityListEnds) {
  const auto path = device_file(kGpuPort, "config");
  const auto d = probe_damaged_dgx(
      [&](const stdfs::path& root) {
        std::string bytes = acco::testing::slurp(on_disk(root, path));
        ASSERT_EQ(bytes.size(), 4096U);
        // AER (id 0x0001), version 1, next capability at 0x100: itself.
        const std::uint32_t header = 0x0001U | (1U << 16) | (0x100U << 20);
        for (int i = 0; i < 4; ++i) {
          bytes[0x100 + i] = static_cast<char>((header >> (8 * i)) & 0xff);
        }
        overwrite(root, path, bytes);
      },
      {.config_as_root = true});
  expect_one_issue(d, path);
  EXPECT_TRUE(device(d.damaged, kGpuPort).config_extended_readable);
  EXPECT_FALSE(device(d.damaged, kGpuPort).acs_control.has_value());
}

TEST(SysfsSourceTest, NetSpeedMinusOneIsUnknownNotAnInputIssue) {
  const auto d = probe_damaged_dgx(
      [](const stdfs::path& root) { overwrite(root, "/sys/class/net/enp1s0f0np0/speed", "-1\n"); });
  expect_no_issue(d);
  const auto& nets = d.damaged.machine.net_interfaces;
  const auto it = std::find_if(nets.begin(), nets.end(),
                               [](const NetInterface& n) { return n.name == "enp1s0f0np0"; });
  ASSERT_NE(it, nets.end());
  EXPECT_FALSE(it->speed_mbps.has_value());
}

TEST(SysfsSourceTest, EmptyNumaNodeFileIsAnInputIssueNamingIt) {
  const auto d = probe_damaged_dgx(
      [](const stdfs::path& root) { overwrite(root, device_file(kGpu, "numa_node"), ""); });
  expect_one_issue(d, device_file(kGpu, "numa_node"));
  EXPECT_EQ(d.damaged.machine.input_issues[0].problem, "the file is empty");
  // local_cpulist still places it.
  EXPECT_EQ(device(d.damaged, kGpu).numa_node, 0);
  EXPECT_EQ(device(d.damaged, kGpu).numa_source, "local_cpulist");
}

TEST(SysfsSourceTest, GarbageCpulistWithNulIsQuotedEscaped) {
  const std::string path = "/sys/devices/system/node/node0/cpulist";
  const auto d = probe_damaged_dgx(
      [&](const stdfs::path& root) { overwrite(root, path, std::string("0-x\0y\n", 6)); });
  expect_one_issue(d, path);
  const auto& problem = d.damaged.machine.input_issues[0].problem;
  EXPECT_THAT(problem, HasSubstr("'0-x\\0y'"));
  EXPECT_EQ(problem.find('\0'), std::string::npos);
}

TEST(SysfsSourceTest, BusEntryThatIsNotAnAddressIsAnInputIssue) {
  const std::string path = "/sys/bus/pci/devices/garbage";
  const auto d = probe_damaged_dgx(
      [&](const stdfs::path& root) { stdfs::create_directories(on_disk(root, path)); });
  expect_one_issue(d, path);
}

TEST(SysfsSourceTest, InfinibandDataRateFollowsTheEncoding) {
  const auto d = probe_damaged_dgx([](const stdfs::path& root) {
    overwrite(root, "/sys/class/infiniband/mlx5_1/ports/1/rate", "56 Gb/sec (4X FDR)\n");
    overwrite(root, "/sys/class/infiniband/mlx5_2/ports/1/rate", "40 Gb/sec (4X QDR)\n");
    overwrite(root, "/sys/class/infiniband/mlx5_3/ports/1/rate", "40 Gb/sec (4X FDR10)\n");
  });
  EXPECT_THAT(d.damaged.machine.input_issues, IsEmpty());
  std::map<std::string, const IbPort*> ports;
  for (const auto& p : d.damaged.machine.ib_ports) {
    ports[p.device] = &p;
  }
  ASSERT_EQ(ports.count("mlx5_0"), 1U);
  EXPECT_DOUBLE_EQ(ports["mlx5_0"]->data_rate_gbps, 400);     // 4X NDR, already the data rate
  EXPECT_NEAR(ports["mlx5_1"]->data_rate_gbps, 54.55, 0.01);  // 64b/66b of 4 x 14.0625
  EXPECT_DOUBLE_EQ(ports["mlx5_2"]->rate_gbps, 40);
  EXPECT_DOUBLE_EQ(ports["mlx5_2"]->data_rate_gbps, 32);  // 8b/10b
  EXPECT_DOUBLE_EQ(ports["mlx5_3"]->data_rate_gbps, 40);  // 64b/66b of 4 x 10.3125
  // RoCE: the Ethernet rate under an InfiniBand name.
  EXPECT_DOUBLE_EQ(ports["mlx5_8"]->data_rate_gbps, 100);
}

// ---- quirks of real trees, from the firmware_quirks fixture ----

ProbeResult quirks(const FirmwareQuirksOptions& options = {}) {
  TempDir dir;
  acco::testing::write_firmware_quirks(dir.path(), options);
  return probe_sysroot(dir.path());
}

bool has_rule(const ProbeResult& r, const std::string& rule) {
  return std::any_of(r.findings.begin(), r.findings.end(),
                     [&](const Finding& f) { return f.rule == rule; });
}

const NumaNode& node(const ProbeResult& r, std::size_t i) {
  static const NumaNode kNone;
  EXPECT_LT(i, r.machine.numa_nodes.size());
  return i < r.machine.numa_nodes.size() ? r.machine.numa_nodes[i] : kNone;
}

const std::string kQuirksGpu0(acco::testing::kQuirksGpu0);
const std::string kQuirksGpu1(acco::testing::kQuirksGpu1);

TEST(SysfsSourceTest, QuirksServerReadsTwoNodesOnTwoSockets) {
  const auto r = quirks();
  EXPECT_THAT(r.machine.input_issues, IsEmpty());
  ASSERT_EQ(r.machine.numa_nodes.size(), 2U);
  EXPECT_EQ(node(r, 0).package, 0);
  EXPECT_EQ(node(r, 1).package, 1);
  EXPECT_THAT(r.machine.packages, ElementsAre(0, 1));
  EXPECT_EQ(r.machine.online_cpus.size(), 32U);
  EXPECT_EQ(node(r, 0).cpus_source, "/sys/devices/system/node/node0/cpulist");
  EXPECT_EQ(node(r, 0).cpus_text, "0-15");
  EXPECT_EQ(device(r, kQuirksGpu1).numa_node, 1);
  EXPECT_EQ(device(r, kQuirksGpu1).numa_source, "numa_node");
  EXPECT_FALSE(has_rule(r, "numa-topology-inconsistent"));
  EXPECT_FALSE(has_rule(r, "numa-unknown"));
}

TEST(SysfsSourceTest, CpulistWithTrailingNulIsAcceptedAndQuotedEscaped) {
  const auto r = quirks({.cpulist_nul = true});
  EXPECT_THAT(r.machine.input_issues, IsEmpty());
  EXPECT_EQ(node(r, 0).cpus.size(), 16U);
  EXPECT_EQ(node(r, 0).package, 0);
  EXPECT_EQ(node(r, 0).cpus_text, "0-15\\n\\0");
}

TEST(SysfsSourceTest, NodeWithCpumapButNoCpulistGetsItsCpusFromTheMask) {
  const auto r = quirks({.cpumap_only = true});
  EXPECT_THAT(r.machine.input_issues, IsEmpty());
  EXPECT_EQ(units::format_cpulist(node(r, 0).cpus), "0-15");
  EXPECT_EQ(units::format_cpulist(node(r, 1).cpus), "16-31");
  EXPECT_THAT(node(r, 1).cpus_source, EndsWith("/node1/cpumap"));
  EXPECT_EQ(node(r, 1).package, 1);
  EXPECT_THAT(r.machine.packages, ElementsAre(0, 1));
}

TEST(SysfsSourceTest, OfflineFirstCpuLeavesTheNodeItsPackage) {
  const auto r = quirks({.first_cpu_offline = true});
  EXPECT_THAT(r.machine.input_issues, IsEmpty());
  EXPECT_EQ(node(r, 0).package, 0);
  EXPECT_EQ(node(r, 1).package, 1);
  EXPECT_THAT(r.machine.packages, ElementsAre(0, 1));
  EXPECT_EQ(units::format_cpulist(r.machine.online_cpus), "1-15,17-31");
  EXPECT_FALSE(has_rule(r, "numa-topology-inconsistent"));
}

TEST(SysfsSourceTest, PackageIdMinusOneIsUnknownNotASocket) {
  const auto r = quirks({.package_unknown = true});
  EXPECT_THAT(r.machine.input_issues, IsEmpty());
  EXPECT_THAT(r.machine.packages, IsEmpty());  // the sysfs reader knows no package id
  // hwloc still groups the CPUs by their package_cpus masks and numbers the packages itself.
  EXPECT_EQ(r.machine.cpu.packages, 2);
  EXPECT_EQ(node(r, 0).package, 0);
  EXPECT_EQ(node(r, 1).package, 1);
}

TEST(SysfsSourceTest, OneNodeOverTwoPackagesCountsBothPackages) {
  const auto r = quirks({.one_node = true});
  EXPECT_EQ(r.machine.numa_nodes.size(), 1U);
  EXPECT_THAT(r.machine.packages, ElementsAre(0, 1));
}

// A CXL expander: the kernel's own files (an empty cpulist, HMAT's access0 initiators and
// figures, memory tiers) make it a memory-only node; hwloc hangs it below node 0's CPUs, which
// are its locality, not CPUs it lists, so nothing is inconsistent and it has no socket.
TEST(SysfsSourceTest, MemoryOnlyNodeIsMemoryNearItsInitiators) {
  const auto r = quirks({.memory_only_node = true});
  EXPECT_THAT(r.machine.input_issues, IsEmpty());
  ASSERT_EQ(r.machine.numa_nodes.size(), 3U);
  const NumaNode& n = node(r, 2);
  EXPECT_TRUE(n.memory_only());
  EXPECT_EQ(n.package, -1);
  EXPECT_TRUE(n.cpus.empty());
  EXPECT_EQ(n.memory_bytes, 16ULL << 30);
  EXPECT_THAT(n.initiators, ElementsAre(0));
  EXPECT_EQ(n.read_bandwidth_mbps, 25600U);
  EXPECT_EQ(n.read_latency_ns, 250U);
  EXPECT_EQ(n.memory_tier, 22);
  EXPECT_EQ(node(r, 0).memory_tier, 4);
  EXPECT_EQ(units::format_cpulist(n.near_cpus), "0-15");
  EXPECT_FALSE(node(r, 0).memory_only());
  EXPECT_THAT(r.machine.packages, ElementsAre(0, 1));
  EXPECT_FALSE(has_rule(r, "numa-topology-inconsistent"));
  EXPECT_FALSE(has_rule(r, "hwloc-disagrees"));
}

// GPU memory on Grace Hopper: no HMAT, no tiers; hwloc places it by the distances alone.
TEST(SysfsSourceTest, GpuMemoryNodeWithoutHmatIsMemoryOnly) {
  const auto r = quirks({.gpu_memory_node = true});
  EXPECT_THAT(r.machine.input_issues, IsEmpty());
  ASSERT_EQ(r.machine.numa_nodes.size(), 3U);
  const NumaNode& n = node(r, 2);
  EXPECT_TRUE(n.memory_only());
  EXPECT_TRUE(n.initiators.empty());
  EXPECT_FALSE(n.memory_tier.has_value());
  EXPECT_EQ(n.package, -1);
  EXPECT_FALSE(has_rule(r, "numa-topology-inconsistent"));
  EXPECT_FALSE(has_rule(r, "hwloc-disagrees"));
}

// The kernel names packages 0, 1 and 2; hwloc drops the one whose mask conflicts. The kernel's
// packages stay, and hwloc-disagrees says what hwloc kept.
TEST(SysfsSourceTest, PackageHwlocDropsIsADisagreement) {
  const auto r = quirks({.package_dropped = true});
  EXPECT_THAT(r.machine.packages, ElementsAre(0, 1, 2));
  EXPECT_EQ(node(r, 1).package, 1);
  ASSERT_FALSE(r.machine.cpu.disagreements.empty());
  EXPECT_THAT(r.machine.cpu.disagreements,
              Contains(HasSubstr("the kernel's physical_package_id names 3 package(s) (0-2), "
                                 "hwloc keeps 2")));
  EXPECT_TRUE(has_rule(r, "hwloc-disagrees"));
}

TEST(SysfsSourceTest, OfflineNodeIsInPossibleNotOnline) {
  const auto r = quirks({.offline_node = true});
  EXPECT_THAT(r.machine.possible_nodes, ElementsAre(0, 1));
  EXPECT_THAT(r.machine.online_nodes, ElementsAre(0));
  EXPECT_EQ(r.machine.numa_nodes.size(), 1U);
}

TEST(SysfsSourceTest, DeviceWithoutNumaNodeIsPlacedByItsLocalCpulist) {
  const auto r = quirks({.numa_node_absent = true});
  EXPECT_THAT(r.machine.input_issues, IsEmpty());
  const auto& gpu = device(r, kQuirksGpu1);
  EXPECT_EQ(gpu.numa_node, 1);
  EXPECT_EQ(gpu.numa_source, "local_cpulist");
  ASSERT_EQ(gpu.numa_evidence.size(), 1U);
  EXPECT_EQ(gpu.numa_evidence[0].source, device_file(kQuirksGpu1, "local_cpulist"));
  EXPECT_THAT(gpu.numa_evidence[0].value, HasSubstr("16-31"));
  EXPECT_FALSE(has_rule(r, "numa-unknown"));
}

TEST(SysfsSourceTest, DeviceWithNumaMinusOneIsPlacedByItsLocalCpusMask) {
  const auto r = quirks({.numa_from_local_cpus = true});
  EXPECT_THAT(r.machine.input_issues, IsEmpty());
  const auto& gpu = device(r, kQuirksGpu1);
  EXPECT_EQ(gpu.numa_node, 1);
  EXPECT_EQ(gpu.numa_source, "local_cpus");
  EXPECT_EQ(units::format_cpulist(gpu.local_cpus), "16-31");
  EXPECT_THAT(gpu.numa_evidence, Contains(Field(&Evidence::value, "-1")));
  EXPECT_THAT(gpu.numa_evidence,
              Contains(Field(&Evidence::source, device_file(kQuirksGpu1, "local_cpus"))));
  EXPECT_FALSE(has_rule(r, "numa-unknown"));
}

TEST(SysfsSourceTest, DeviceOnEveryCpuTakesItsParentBridgesNode) {
  const auto r = quirks({.numa_from_parent = true});
  const auto& gpu = device(r, kQuirksGpu1);
  EXPECT_EQ(gpu.numa_node, 1);
  EXPECT_EQ(gpu.numa_source, "parent bridge " + std::string(acco::testing::kQuirksGpu1Port));
  EXPECT_FALSE(has_rule(r, "numa-unknown"));
}

TEST(SysfsSourceTest, ThirtyTwoBitPciDomainIsRead) {
  const auto r = quirks({.domain_32bit = true});
  EXPECT_THAT(r.machine.input_issues, IsEmpty());
  const std::string hca(acco::testing::kQuirksHcaDomain32);
  const auto& d = device(r, hca);
  EXPECT_EQ(d.kind, DeviceKind::kNic);
  EXPECT_EQ(d.parent, "10000:00:02.0");
  EXPECT_EQ(d.root_bus, "pci10000:00");
  EXPECT_EQ(d.numa_node, 1);
  ASSERT_EQ(r.machine.ib_ports.size(), 1U);
  EXPECT_EQ(r.machine.ib_ports[0].pci, hca);
}

TEST(SysfsSourceTest, BridgeMissingFromTheBusListingIsFoundInSysDevices) {
  const auto healthy = quirks();
  const auto r = quirks({.bridge_unlisted = true});
  EXPECT_THAT(r.machine.input_issues, IsEmpty());
  EXPECT_EQ(r.machine.pci_devices.size(), healthy.machine.pci_devices.size());
  const auto& port = device(r, std::string(acco::testing::kQuirksGpu0Port));
  EXPECT_EQ(port.kind, DeviceKind::kBridge);
  EXPECT_EQ(device(r, kQuirksGpu0).parent, acco::testing::kQuirksGpu0Port);
  EXPECT_EQ(device(r, kQuirksGpu0).kind, DeviceKind::kGpu);
}

TEST(SysfsSourceTest, EmptyAttributeFileIsAnInputIssueNamingIt) {
  const auto r = quirks({.empty_attribute = true});
  ASSERT_EQ(r.machine.input_issues.size(), 1U);
  EXPECT_EQ(r.machine.input_issues[0].path, device_file(kQuirksGpu0, "subsystem_device"));
  EXPECT_EQ(r.machine.input_issues[0].problem, "the file is empty");
  EXPECT_EQ(device(r, kQuirksGpu0).kind, DeviceKind::kGpu);
}

TEST(SysfsSourceTest, CoprocessorAndOldInfinibandClassAreClassified) {
  const auto r = quirks({.coprocessor = true, .cirrus_vga = true, .old_hca = true});
  EXPECT_THAT(r.machine.input_issues, IsEmpty());
  EXPECT_EQ(device(r, std::string(acco::testing::kQuirksPhi)).kind, DeviceKind::kAccelerator);
  EXPECT_EQ(device(r, std::string(acco::testing::kQuirksHca)).kind, DeviceKind::kNic);
  EXPECT_EQ(device(r, std::string(acco::testing::kQuirksCirrus)).kind, DeviceKind::kOther);
  EXPECT_EQ(device(r, std::string(acco::testing::kQuirksAspeed)).kind, DeviceKind::kOther);
}

TEST(SysfsSourceTest, EveryPciFunctionIsInTheJsonWithItsClass) {
  const auto r = quirks({.cirrus_vga = true});
  const auto j = probe_json(r.machine, r.findings);
  ASSERT_EQ(j["devices"].size(), r.machine.pci_devices.size());
  bool cirrus = false;
  for (const auto& d : j["devices"]) {
    EXPECT_TRUE(d.contains("class"));
    if (d["pci"] == std::string(acco::testing::kQuirksCirrus)) {
      cirrus = true;
      EXPECT_EQ(d["class"], "0x030000");
      EXPECT_EQ(d["kind"], "other");
    }
  }
  EXPECT_TRUE(cirrus);
}

TEST(SysfsSourceTest, ClassifiesByClassCodeAndVendor) {
  EXPECT_EQ(classify_pci(0x030200, 0x10de), DeviceKind::kGpu);
  EXPECT_EQ(classify_pci(0x030000, 0x1002), DeviceKind::kGpu);
  for (const std::uint16_t display_only : std::initializer_list<std::uint16_t>{
           0x1013, 0x1234, 0x1b36, 0x15ad, 0x1af4, 0x1a03, 0x102b, 0x19e5}) {
    EXPECT_EQ(classify_pci(0x030000, display_only), DeviceKind::kOther) << display_only;
  }
  EXPECT_EQ(classify_pci(0x0b4000, 0x8086), DeviceKind::kAccelerator);
  EXPECT_EQ(classify_pci(0x0b0000, 0x8086), DeviceKind::kOther);
  EXPECT_EQ(classify_pci(0x120000, 0x1da3), DeviceKind::kAccelerator);
  EXPECT_EQ(classify_pci(0x120000, 0x19e5), DeviceKind::kAccelerator);
  EXPECT_EQ(classify_pci(0x020000, 0x8086), DeviceKind::kNic);
  EXPECT_EQ(classify_pci(0x020700, 0x15b3), DeviceKind::kNic);
  EXPECT_EQ(classify_pci(0x028000, 0x15b3), DeviceKind::kNic);
  EXPECT_EQ(classify_pci(0x0c0600, 0x15b3), DeviceKind::kNic);
  EXPECT_EQ(classify_pci(0x0c0330, 0x8086), DeviceKind::kOther);  // USB xHCI
}

TEST(SysfsSourceTest, PciAddressesHaveSixteenOrThirtyTwoBitDomains) {
  EXPECT_TRUE(is_pci_address("0000:41:00.0"));
  EXPECT_TRUE(is_pci_address("10000:00:01.0"));
  EXPECT_TRUE(is_pci_address("ffffffff:ff:1f.7"));
  EXPECT_FALSE(is_pci_address("000:41:00.0"));
  EXPECT_FALSE(is_pci_address("100000000:00:01.0"));
  EXPECT_FALSE(is_pci_address("0000:41:00"));
  EXPECT_FALSE(is_pci_address("pci0000:00"));
  EXPECT_FALSE(is_pci_address("0000:4g:00.0"));
}

// ---- the CI VM ----

TEST(SysfsSourceTest, CiVmHasNoInputIssuesAndOnlyTheVirtualizedFinding) {
  TempDir dir;
  acco::testing::write_ci_vm(dir.path());
  const auto r = probe_sysroot(dir.path());
  EXPECT_TRUE(r.machine.input_issues.empty());
  ASSERT_EQ(r.findings.size(), 1U);
  EXPECT_EQ(r.findings[0].rule, "virtualized-topology");
  EXPECT_EQ(r.findings[0].severity, Severity::kInfo);
}

// ---- snapshots ----

void write_text(const stdfs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  ASSERT_TRUE(out) << path;
  out << text;
}

// Records a DGX H100 sysroot into `snapshot` and returns the live probe.
ProbeResult record_dgx(const stdfs::path& sysroot, const stdfs::path& snapshot) {
  acco::testing::write_dgx_h100(sysroot, {.config_as_root = true});
  auto r = probe_at(sysroot, snapshot);
  EXPECT_THAT(r, IsOk());
  return r.value_or(ProbeResult{});
}

TEST(SysfsSourceTest, SnapshotReplaysToTheMachineItRecorded) {
  TempDir dir;
  const auto snapshot = dir.path() / "dgx.json";
  const auto live = record_dgx(dir.path() / "root", snapshot);
  ASSERT_TRUE(stdfs::exists(snapshot));
  const auto replayed = replay(snapshot);
  ASSERT_THAT(replayed, IsOk());
  EXPECT_FALSE(live.machine.pci_devices.empty());
  EXPECT_EQ(replayed->machine.pci_devices, live.machine.pci_devices);
  EXPECT_EQ(replayed->machine.numa_nodes, live.machine.numa_nodes);
  EXPECT_EQ(replayed->machine.ib_ports, live.machine.ib_ports);
  EXPECT_EQ(replayed->machine.net_interfaces, live.machine.net_interfaces);
  EXPECT_EQ(replayed->machine.input_issues, live.machine.input_issues);
  EXPECT_EQ(replayed->findings, live.findings);
}

TEST(SysfsSourceTest, TruncatedSnapshotIsInvalidNamingTheFile) {
  TempDir dir;
  const auto snapshot = dir.path() / "dgx.json";
  record_dgx(dir.path() / "root", snapshot);
  const auto text = acco::testing::slurp(snapshot);
  ASSERT_GT(text.size(), 1000U);
  write_text(snapshot, text.substr(0, text.size() / 2));
  const auto r = replay(snapshot);
  expect_one_line_error(r, snapshot.string());
  EXPECT_THAT(r, StatusIs(Errc::kInvalidArgument));
}

TEST(SysfsSourceTest, SnapshotWithWrongSchemaIsInvalidNamingTheFile) {
  TempDir dir;
  const auto snapshot = dir.path() / "other.json";
  write_text(snapshot, R"({"schema": "acco.snapshot/99", "fs": {}})");
  const auto r = replay(snapshot);
  expect_one_line_error(r, snapshot.string());
  EXPECT_THAT(r, StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(r.error().message, HasSubstr("schema"));
}

TEST(SysfsSourceTest, SnapshotWithWrongTypeInFsFilesIsInvalidNamingTheFile) {
  TempDir dir;
  const auto snapshot = dir.path() / "typed.json";
  for (const std::string files :
       {R"({"/proc/cpuinfo": "flags: fpu"})", R"({"/proc/cpuinfo": {"ok": true, "value": 42}})",
        R"({"/proc/cpuinfo": {"ok": "yes"}})", R"(["/proc/cpuinfo"])"}) {
    SCOPED_TRACE(files);
    write_text(snapshot, R"({"schema": "acco.snapshot/1", "fs": {"files": )" + files + "}}");
    const auto r = replay(snapshot);
    expect_one_line_error(r, snapshot.string());
    EXPECT_THAT(r, StatusIs(Errc::kInvalidArgument));
    EXPECT_THAT(r.error().message, HasSubstr("files"));
    EXPECT_THAT(r.error().message, Not(HasSubstr("json.exception")));
  }
}

TEST(SysfsSourceTest, EmptySnapshotFileIsInvalidNamingTheFile) {
  TempDir dir;
  const auto snapshot = dir.path() / "empty.json";
  write_text(snapshot, "");
  const auto r = replay(snapshot);
  expect_one_line_error(r, snapshot.string());
  EXPECT_THAT(r, StatusIs(Errc::kInvalidArgument));
}

TEST(SysfsSourceTest, DirectoryGivenAsSnapshotIsInvalidNamingIt) {
  TempDir dir;
  const auto r = replay(dir.path());
  expect_one_line_error(r, dir.path().string());
}

TEST(SysfsSourceTest, MissingSnapshotFileIsNotFoundNamingIt) {
  TempDir dir;
  const auto snapshot = (dir.path() / "absent.json").string();
  const auto r = replay(snapshot);
  expect_one_line_error(r, snapshot);
  EXPECT_THAT(r, StatusIs(Errc::kNotFound));
}

TEST(SysfsSourceTest, SnapshotIntoMissingDirectoryFailsAndLeavesNoFile) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path() / "root");
  const auto target = dir.path() / "no-such-dir" / "dgx.json";
  const auto r = probe_at(dir.path() / "root", target);
  ASSERT_THAT(r, StatusIs(Errc::kCannotWrite));  // an output, not a missing input
  EXPECT_THAT(r.error().message, HasSubstr(target.string()));
  EXPECT_THAT(r.error().message, Not(HasSubstr("\n")));
  EXPECT_FALSE(stdfs::exists(target));
  EXPECT_FALSE(stdfs::exists(target.parent_path()));
  // Nothing else was written next to the sysroot either.
  std::vector<std::string> entries;
  for (const auto& e : stdfs::directory_iterator(dir.path())) {
    entries.push_back(e.path().filename().string());
  }
  EXPECT_EQ(entries, std::vector<std::string>{"root"});
}

}  // namespace
}  // namespace acco::topo
