#include "acco/topo/hwloc_source.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/core/fs.hpp"
#include "acco/core/json.hpp"
#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"
#include "acco/topo/checks.hpp"
#include "acco/topo/link_model.hpp"
#include "acco/topo/probe.hpp"
#include "acco/topo/sysfs_source.hpp"

#include "machines.hpp"
#include "sysroot_builder.hpp"

namespace acco::topo {
namespace {

namespace stdfs = std::filesystem;
using ::acco::testing::HasValue;
using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using acco::testing::TempDir;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

Result<HwlocView> from_root(const stdfs::path& root) {
  return discover_hwloc({HwlocInputKind::kFsRoot, root.string()});
}

Machine sysfs_machine(const stdfs::path& root) {
  auto disk = core::make_disk_fs(root.string());
  EXPECT_THAT(disk, IsOk());
  auto m = discover_sysfs(**disk);
  EXPECT_THAT(m, IsOk());
  return m.has_value() ? *m : Machine{};
}

void overwrite(const stdfs::path& root, const std::string& path, const std::string& text) {
  std::ofstream(root / path.substr(1), std::ios::trunc) << text;
}

struct Counts {
  int packages;
  int cores;
  int pus;
  int nodes;
};

void expect_counts(const HwlocView& v, const Counts& c) {
  EXPECT_EQ(v.cpu.packages, c.packages);
  EXPECT_EQ(v.cpu.cores, c.cores);
  EXPECT_EQ(v.cpu.pus, c.pus);
  EXPECT_EQ(v.cpu.numa_nodes, c.nodes);
  EXPECT_EQ(static_cast<int>(v.numa_nodes.size()), c.nodes);
}

TEST(HwlocSourceTest, ReadsEachCannedMachineFromItsSysroot) {
  struct Case {
    void (*write)(const stdfs::path&);
    Counts counts;
  };
  const std::vector<Case> cases = {
      {[](const stdfs::path& d) { acco::testing::write_dgx_h100(d); }, {2, 112, 224, 2}},
      {[](const stdfs::path& d) { acco::testing::write_workstation(d); }, {2, 64, 128, 2}},
      {[](const stdfs::path& d) { acco::testing::write_flattened_vm(d); }, {2, 96, 96, 2}},
      {[](const stdfs::path& d) { acco::testing::write_ci_vm(d); }, {1, 2, 2, 1}},
  };
  for (const auto& c : cases) {
    TempDir dir;
    c.write(dir.path());
    auto view = from_root(dir.path());
    ASSERT_THAT(view, IsOk());
    expect_counts(*view, c.counts);
    EXPECT_TRUE(view->xml.empty());  // exported only when asked for
    EXPECT_THAT(view->cpu.source, ::testing::StartsWith("hwloc 2."));
  }
}

TEST(HwlocSourceTest, CachesPackagesAndNodesOfTheDgx) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  auto view = from_root(dir.path());
  ASSERT_THAT(view, IsOk());
  ASSERT_THAT(view->cpu.caches,
              ElementsAre(CacheLevel{"L1d", 48 << 10, 112}, CacheLevel{"L1i", 32 << 10, 112},
                          CacheLevel{"L2", 2 << 20, 112}, CacheLevel{"L3", 105ULL << 20, 2}));
  ASSERT_EQ(view->numa_nodes.size(), 2U);
  EXPECT_EQ(view->numa_nodes[0].package, 0);
  EXPECT_EQ(view->numa_nodes[1].package, 1);
  EXPECT_EQ(view->numa_nodes[1].cpus.size(), 112U);
  EXPECT_EQ(view->numa_nodes[1].cpus.front(), 56);
  EXPECT_EQ(view->numa_nodes[0].memory_bytes, 1056508412ULL * 1024);
  EXPECT_THAT(view->numa_nodes[0].distances, ElementsAre(10, 21));
}

// Every function acco's sysfs reader lists, hwloc lists with the same parent and node.
TEST(HwlocSourceTest, AgreesWithTheSysfsReaderOnEveryPciFunction) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  auto view = from_root(dir.path());
  ASSERT_THAT(view, IsOk());
  Machine m = sysfs_machine(dir.path());
  ASSERT_EQ(view->pci.size(), m.pci_devices.size());
  for (std::size_t i = 0; i < m.pci_devices.size(); ++i) {
    EXPECT_EQ(view->pci[i].address, m.pci_devices[i].address);
    EXPECT_EQ(view->pci[i].parent, m.pci_devices[i].parent) << m.pci_devices[i].address;
    EXPECT_EQ(view->pci[i].root_bus, m.pci_devices[i].root_bus) << m.pci_devices[i].address;
    EXPECT_EQ(view->pci[i].numa_node, m.pci_devices[i].numa_node) << m.pci_devices[i].address;
  }
  merge_hwloc(m, *view);
  EXPECT_THAT(m.cpu.disagreements, IsEmpty());
  EXPECT_EQ(m.cpu.packages, 2);
}

TEST(HwlocSourceTest, XmlExportReadsBackTheSameView) {
  TempDir dir;
  acco::testing::write_workstation(dir.path());
  auto live = discover_hwloc({HwlocInputKind::kFsRoot, dir.path().string(), true});
  ASSERT_THAT(live, IsOk());
  ASSERT_FALSE(live->xml.empty());
  auto replayed = discover_hwloc({HwlocInputKind::kXmlText, live->xml});
  ASSERT_THAT(replayed, IsOk());
  EXPECT_EQ(replayed->cpu, live->cpu);
  EXPECT_EQ(replayed->numa_nodes, live->numa_nodes);
  EXPECT_EQ(replayed->pci, live->pci);

  const auto file = dir.path() / "topology.xml";
  std::ofstream(file) << live->xml;
  auto from_file = discover_hwloc({HwlocInputKind::kXmlFile, file.string()});
  ASSERT_THAT(from_file, IsOk());
  EXPECT_EQ(from_file->pci, live->pci);
}

TEST(HwlocSourceTest, BadInputsAreOneLineErrorsNamingThem) {
  TempDir dir;
  EXPECT_THAT(discover_hwloc({HwlocInputKind::kXmlFile, (dir.path() / "none.xml").string()}),
              StatusIs(Errc::kNotFound, HasSubstr("none.xml: no such file")));
  const auto garbage = dir.path() / "garbage.xml";
  std::ofstream(garbage) << "<topology><object type=";
  EXPECT_THAT(discover_hwloc({HwlocInputKind::kXmlFile, garbage.string()}),
              StatusIs(Errc::kInvalidArgument, HasSubstr("garbage.xml: not an XML export")));
  EXPECT_THAT(discover_hwloc({HwlocInputKind::kXmlFile, dir.path().string()}),
              StatusIs(Errc::kNotFound));
  EXPECT_THAT(discover_hwloc({HwlocInputKind::kXmlText, "not xml"}),
              StatusIs(Errc::kInvalidArgument, HasSubstr("the snapshot's hwloc XML")));
}

// Without topology files hwloc would count the CPUs of the machine running the test; acco says
// it cannot tell instead, and the probe keeps the sysfs reader's packages.
TEST(HwlocSourceTest, ATreeWithoutCpuTopologyFilesIsUnavailableNotThisMachine) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  for (int cpu = 0; cpu < 224; ++cpu) {
    stdfs::remove_all(dir.path() / fmt::format("sys/devices/system/cpu/cpu{}/topology", cpu));
  }
  EXPECT_THAT(from_root(dir.path()),
              StatusIs(Errc::kUnavailable, HasSubstr("found no CPU topology")));
  ProbeRequest request;
  request.sysroot = dir.path().string();
  request.nvml = NvmlMode::kOff;
  auto r = probe(request);
  ASSERT_THAT(r, IsOk());
  EXPECT_TRUE(r->machine.cpu.source.empty());
  EXPECT_THAT(r->machine.cpu.unavailable, HasSubstr("found no CPU topology"));
  EXPECT_EQ(r->machine.numa_nodes.size(), 2U);
}

TEST(HwlocSourceTest, LeavesTheEnvironmentAsItWas) {
  TempDir dir;
  acco::testing::write_ci_vm(dir.path());
  ::unsetenv("HWLOC_FSROOT");
  ASSERT_THAT(from_root(dir.path()), IsOk());
  EXPECT_EQ(std::getenv("HWLOC_FSROOT"), nullptr);
  ::setenv("HWLOC_FSROOT", "/somewhere", 1);
  ASSERT_THAT(from_root(dir.path()), IsOk());
  EXPECT_STREQ(std::getenv("HWLOC_FSROOT"), "/somewhere");
  ::unsetenv("HWLOC_FSROOT");
}

// A device whose numa_node is -1 is placed from its local CPUs, as hwloc places it.
TEST(HwlocSourceTest, PlacesADeviceWithoutNumaNodeFromItsLocalCpus) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  const std::string gpu4 = "/sys/bus/pci/devices/0000:9a:00.0";
  overwrite(dir.path(), gpu4 + "/numa_node", "-1\n");
  Machine m = sysfs_machine(dir.path());
  auto view = from_root(dir.path());
  ASSERT_THAT(view, IsOk());
  merge_hwloc(m, *view);
  const PciDevice* d = m.find("0000:9a:00.0");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->numa_node, 1);
  EXPECT_THAT(m.cpu.disagreements, IsEmpty());
}

// A broken SRAT: two nodes list the same CPUs. hwloc keeps one; the report says so.
TEST(HwlocSourceTest, NodesWithTheSameCpusAreADisagreementWithItsReason) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  const std::string node = "/sys/devices/system/node/node";
  for (const char* file : {"/cpulist", "/cpumap"}) {
    const std::string text =
        acco::testing::slurp(dir.path() / ("sys/devices/system/node/node0" + std::string(file)));
    overwrite(dir.path(), node + "1" + file, text);
  }
  Machine m = sysfs_machine(dir.path());
  auto view = from_root(dir.path());
  ASSERT_THAT(view, IsOk());
  EXPECT_EQ(view->cpu.numa_nodes, 1);
  merge_hwloc(m, *view);
  EXPECT_THAT(m.cpu.disagreements,
              Contains(HasSubstr("sysfs lists NUMA node 1 (CPUs 0-55,112-167), which hwloc does "
                                 "not keep as a node of its own")));
  annotate_links(m);
  const auto findings = check(m);
  EXPECT_THAT(findings, Contains(Field(&Finding::rule, "hwloc-disagrees")));
}

TEST(HwlocSourceTest, AMachineFromAnXmlExportKnowsWhatTheExportHolds) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  auto view = from_root(dir.path());
  ASSERT_THAT(view, IsOk());
  Machine m = machine_from_hwloc(*view, "hwloc XML test.xml");
  EXPECT_FALSE(m.sysfs_read);
  EXPECT_EQ(m.cpu.packages, 2);
  EXPECT_EQ(m.numa_nodes.size(), 2U);
  const auto count = [&](DeviceKind kind) {
    return std::count_if(m.pci_devices.begin(), m.pci_devices.end(),
                         [&](const PciDevice& d) { return d.kind == kind; });
  };
  EXPECT_EQ(count(DeviceKind::kGpu), 8);
  EXPECT_EQ(count(DeviceKind::kNic), 10);
  EXPECT_EQ(count(DeviceKind::kNvme), 2);
  const PciDevice* gpu = m.find("0000:9a:00.0");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->numa_node, 1);
  EXPECT_FALSE(gpu->current.known());
  annotate_links(m);
  EXPECT_NEAR(gpu->path_bytes_per_second, 63.0e9, 0.1e9);  // Gen5 x16 as hwloc's linkspeed
  // What the export does not hold raises nothing: no modules, no NVML, no config space.
  for (const auto& f : check(m)) {
    EXPECT_NE(f.rule, "gpudirect-rdma-missing");
    EXPECT_NE(f.rule, "nvml-unavailable");
    EXPECT_NE(f.rule, "acs-p2p-redirect");
  }
}

TEST(HwlocSourceTest, ASnapshotWithoutHwlocXmlSaysWhyTheCpuTopologyIsUnknown) {
  TempDir dir;
  acco::testing::write_ci_vm(dir.path());
  const auto snap = dir.path() / "snap.json";
  ProbeRequest request;
  request.sysroot = dir.path().string();
  request.nvml = NvmlMode::kOff;
  request.write_snapshot = snap.string();
  auto live = probe(request);
  ASSERT_THAT(live, IsOk());
  EXPECT_EQ(live->machine.cpu.pus, 2);

  auto j = core::read_json_file(snap.string());
  ASSERT_THAT(j, IsOk());
  ASSERT_TRUE((*j)["hwloc_xml"].is_string());
  EXPECT_THAT((*j)["hwloc_xml"].get<std::string>(), HasSubstr("<topology"));
  j->erase("hwloc_xml");
  std::ofstream(snap) << j->dump();
  ProbeRequest replay;
  replay.from_snapshot = snap.string();
  auto old = probe(replay);
  ASSERT_THAT(old, IsOk());
  EXPECT_TRUE(old->machine.cpu.source.empty());
  EXPECT_THAT(old->machine.cpu.unavailable, HasSubstr("no hwloc XML"));
}

}  // namespace
}  // namespace acco::topo
