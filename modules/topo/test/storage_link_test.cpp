// The link under a data directory or file: the DGX fixture's mounts mapped through their NVMe
// namespaces and controllers to the controllers' PCIe links, and every reason there is none.
#include "acco/topo/storage_link.hpp"

#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"
#include "acco/topo/link_model.hpp"
#include "acco/topo/probe.hpp"

#include "machines.hpp"
#include "sysroot_builder.hpp"

namespace acco::topo {
namespace {

using ::acco::testing::IsOk;
using acco::testing::TempDir;
using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

Machine dgx_with(const std::string& path) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  ProbeRequest request;
  request.sysroot = dir.path().string();
  request.nvml = NvmlMode::kOff;
  request.data_dir = path;
  auto r = probe(request);
  EXPECT_THAT(r, IsOk());
  return r ? r->machine : Machine{};
}

const double kGen4x4 = link_bytes_per_second(PcieLink{16, 4});

TEST(StorageLinkTest, AFileOnLvmOverNvmeGetsItsControllersGen4x4Link) {
  const auto link = storage_link(dgx_with("/raid/imagenet/shard-0000.tar"));
  EXPECT_THAT(link.bytes_per_second, DoubleEq(kGen4x4));
  EXPECT_NEAR(link.bytes_per_second, 7.88e9, 0.01e9);
  EXPECT_THAT(link.controllers, ElementsAre("0000:c1:00.0"));
  EXPECT_EQ(link.source, "nvme1n1 on nvme1 at 0000:c1:00.0, Gen4 x4, 7.88 GB/s");
}

TEST(StorageLinkTest, TheRootFileSystemIsOnTheOtherDrive) {
  const auto link = storage_link(dgx_with("/home/user/data.bin"));
  EXPECT_THAT(link.bytes_per_second, DoubleEq(kGen4x4));
  EXPECT_THAT(link.controllers, ElementsAre("0000:02:00.0"));
  EXPECT_THAT(link.source, HasSubstr("nvme0n1 on nvme0 at 0000:02:00.0"));
}

TEST(StorageLinkTest, AFileNotOnNvmeHasNoPeakAndSaysWhatItIsOn) {
  const auto sata = storage_link(dgx_with("/boot/efi/x"));
  EXPECT_EQ(sata.bytes_per_second, 0);
  EXPECT_THAT(sata.controllers, IsEmpty());
  EXPECT_EQ(sata.source, "no NVMe link under /boot/efi/x: /dev/sda1 (vfat)");
  EXPECT_EQ(storage_link(dgx_with("/dev/shm/x")).source,
            "no NVMe link under /dev/shm/x: tmpfs (tmpfs)");
  EXPECT_EQ(storage_link(dgx_with("/mnt/datasets/a")).source,
            "no NVMe link under /mnt/datasets/a: storage01:/export/datasets (nfs4)");
}

TEST(StorageLinkTest, ADowntrainedLinkLowersThePeak) {
  Machine m = dgx_with("/raid/x");
  for (auto& d : m.pci_devices) {
    if (d.address == "0000:c1:00.0") {
      d.current.width = 2;
    }
  }
  annotate_links(m);
  const auto link = storage_link(m);
  EXPECT_THAT(link.bytes_per_second, DoubleEq(kGen4x4 / 2));
  EXPECT_THAT(link.source, HasSubstr("Gen4 x2"));
}

TEST(StorageLinkTest, WithoutADataDirOrAMountThereIsNoPeak) {
  EXPECT_EQ(storage_link(Machine{}).bytes_per_second, 0);
  EXPECT_EQ(storage_link(Machine{}).source, "no path was looked up");
  TempDir dir;
  acco::testing::write_workstation(dir.path());  // no proc/self/mountinfo
  ProbeRequest request;
  request.sysroot = dir.path().string();
  request.nvml = NvmlMode::kOff;
  request.data_dir = "/data/x";
  auto r = probe(request);
  ASSERT_THAT(r, IsOk());
  const auto link = storage_link(r->machine);
  EXPECT_EQ(link.bytes_per_second, 0);
  EXPECT_THAT(link.source, HasSubstr("the mount holding /data/x is unknown"));
}

NvmeNamespace ns(const std::string& name, const std::string& controller) {
  NvmeNamespace n;
  n.name = name;
  n.controller = controller;
  return n;
}

// A machine of plain values: namespaces under a RAID over two controllers, one link each.
Machine raid_of_two() {
  Machine m;
  for (int i = 0; i < 2; ++i) {
    const std::string name = "nvme" + std::to_string(i);
    const std::string pci = "0000:0" + std::to_string(i + 1) + ":00.0";
    m.nvme_controllers.push_back({name, pci, "drive", "pcie", {name + "n1"}});
    m.nvme_namespaces.push_back(ns(name + "n1", name));
    PciDevice d;
    d.address = pci;
    d.kind = DeviceKind::kNvme;
    d.current = {32, 4};
    m.pci_devices.push_back(d);
  }
  annotate_links(m);
  DataDir d;
  d.path = "/data";
  d.mount.source = "/dev/md0";
  d.mount.fs_type = "xfs";
  d.nvme_namespaces = {"nvme0n1", "nvme1n1"};
  m.data_dir = d;
  return m;
}

TEST(StorageLinkTest, ARaidOverTwoControllersSumsTheirLinks) {
  const auto link = storage_link(raid_of_two());
  EXPECT_THAT(link.bytes_per_second, DoubleEq(2 * link_bytes_per_second(PcieLink{32, 4})));
  EXPECT_THAT(link.controllers, ElementsAre("0000:01:00.0", "0000:02:00.0"));
  EXPECT_THAT(link.source, HasSubstr("nvme0n1 on nvme0 at 0000:01:00.0, Gen5 x4, 15.8 GB/s; "
                                     "nvme1n1 on nvme1"));
  EXPECT_THAT(link.source, HasSubstr("; summed: 31.5 GB/s"));
}

TEST(StorageLinkTest, TwoNamespacesOfOneControllerCountItOnce) {
  Machine m = raid_of_two();
  m.nvme_controllers[0].namespaces.push_back("nvme0n2");
  m.nvme_namespaces.push_back(ns("nvme0n2", "nvme0"));
  m.data_dir->nvme_namespaces = {"nvme0n1", "nvme0n2"};
  const auto link = storage_link(m);
  EXPECT_THAT(link.bytes_per_second, DoubleEq(link_bytes_per_second(PcieLink{32, 4})));
  EXPECT_THAT(link.controllers, ElementsAre("0000:01:00.0"));
}

TEST(StorageLinkTest, AFabricsControllerOrAnUnknownLinkGivesNoPeak) {
  Machine tcp = raid_of_two();
  tcp.nvme_controllers[1].pci.clear();
  tcp.nvme_controllers[1].transport = "tcp";
  const auto over_tcp = storage_link(tcp);
  EXPECT_EQ(over_tcp.bytes_per_second, 0);
  EXPECT_EQ(over_tcp.source, "nvme1n1 (under /data) is on nvme1 over tcp, not a local PCIe link");

  Machine unknown = raid_of_two();
  unknown.pci_devices[0].current = {};
  annotate_links(unknown);
  const auto no_link = storage_link(unknown);
  EXPECT_EQ(no_link.bytes_per_second, 0);
  EXPECT_THAT(no_link.source, HasSubstr("the PCIe link of nvme0 at 0000:01:00.0 is unknown"));

  Machine orphan = raid_of_two();
  orphan.nvme_controllers.clear();
  orphan.nvme_namespaces.clear();
  EXPECT_THAT(storage_link(orphan).source,
              HasSubstr("nvme0n1 (under /data) has no NVMe controller"));
}

}  // namespace
}  // namespace acco::topo
