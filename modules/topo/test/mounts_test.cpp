// The data directory's mount: mountinfo lines with escapes and optional fields, the longest
// mount point above a path (bind and stacked mounts), NVMe namespaces by name and through
// /sys/dev/block, and the tables that cannot be read.
#include "acco/topo/mounts.hpp"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"

#include "machines.hpp"
#include "sysroot_builder.hpp"

namespace acco::topo {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using acco::testing::SysrootBuilder;
using acco::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const char* const kTable =
    "22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro\n"
    "26 25 0:24 / /dev/shm rw,nosuid,nodev shared:4 master:2 - tmpfs tmpfs rw\n"
    "40 22 253:0 / /data rw,noatime - xfs /dev/mapper/vg0-data rw,attr2,inode64\n"
    "41 22 253:0 /sub\\040dir /my\\040data rw,noatime,ro shared:30 - xfs /dev/mapper/vg0-data rw\n"
    "42 40 0:50 / /data/nfs rw - nfs4 srv:/export rw,vers=4.2\n";

std::vector<Mount> table() {
  auto mounts = parse_mountinfo(kTable);
  EXPECT_THAT(mounts, IsOk());
  return mounts.value_or(std::vector<Mount>{});
}

TEST(MountInfoTest, ParsesEveryFieldAroundTheOptionalOnes) {
  const auto mounts = table();
  ASSERT_EQ(mounts.size(), 5U);
  const Mount& shm = mounts[1];
  EXPECT_EQ(shm.id, 26);
  EXPECT_EQ(shm.parent, 25);
  EXPECT_EQ(shm.device, "0:24");
  EXPECT_EQ(shm.root, "/");
  EXPECT_EQ(shm.mount_point, "/dev/shm");
  EXPECT_EQ(shm.options, "rw,nosuid,nodev");
  EXPECT_EQ(shm.fs_type, "tmpfs");
  EXPECT_EQ(shm.source, "tmpfs");
  EXPECT_EQ(shm.super_options, "rw");
}

TEST(MountInfoTest, OctalEscapesBecomeTheCharactersTheyStandFor) {
  const auto mounts = table();
  ASSERT_EQ(mounts.size(), 5U);
  EXPECT_EQ(mounts[3].root, "/sub dir");
  EXPECT_EQ(mounts[3].mount_point, "/my data");
  auto tab = parse_mountinfo("1 0 8:1 / /a\\011b\\134c rw - ext4 /dev/sda1 rw\n");
  ASSERT_THAT(tab, IsOk());
  EXPECT_EQ(tab->front().mount_point, "/a\tb\\c");
}

TEST(MountInfoTest, LineWithoutTheSeparatorIsInvalidNamingTheLine) {
  EXPECT_THAT(parse_mountinfo("22 1 259:2 / / rw,relatime\n"),
              StatusIs(Errc::kInvalidArgument, HasSubstr("line 1")));
  EXPECT_THAT(parse_mountinfo("x 1 259:2 / / rw - ext4 /dev/sda rw\n"),
              StatusIs(Errc::kInvalidArgument, HasSubstr("cannot parse")));
}

TEST(MountInfoTest, LongestMountPointAboveThePathWins) {
  const auto mounts = table();
  EXPECT_EQ(mount_holding(mounts, "/data/x/y")->mount_point, "/data");
  EXPECT_EQ(mount_holding(mounts, "/data/nfs/train")->mount_point, "/data/nfs");
  EXPECT_EQ(mount_holding(mounts, "/data")->mount_point, "/data");
  // A prefix of the text that is not a directory above it does not count.
  EXPECT_EQ(mount_holding(mounts, "/database")->mount_point, "/");
  EXPECT_EQ(mount_holding(mounts, "/")->mount_point, "/");
}

TEST(MountInfoTest, BindMountIsMatchedByItsOwnMountPointWithItsOwnOptions) {
  const auto mounts = table();
  const Mount* m = mount_holding(mounts, "/my data/shard0");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->root, "/sub dir");
  EXPECT_EQ(m->options, "rw,noatime,ro");
  EXPECT_EQ(m->source, "/dev/mapper/vg0-data");
}

TEST(MountInfoTest, TopmostOfStackedMountsWins) {
  auto mounts = parse_mountinfo(
      "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n"
      "2 1 259:1 / /data rw - ext4 /dev/nvme0n1 rw\n"
      "3 2 0:40 / /data rw - tmpfs tmpfs rw\n");
  ASSERT_THAT(mounts, IsOk());
  EXPECT_EQ(mount_holding(*mounts, "/data/a")->fs_type, "tmpfs");
}

TEST(MountInfoTest, TableWithoutRootHoldsNothingElse) {
  auto mounts = parse_mountinfo("2 1 259:1 / /data rw - ext4 /dev/nvme0n1 rw\n");
  ASSERT_THAT(mounts, IsOk());
  EXPECT_EQ(mount_holding(*mounts, "/home"), nullptr);
}

TEST(MountInfoTest, NvmeNamespaceOfDeviceNodesAndPartitions) {
  EXPECT_EQ(nvme_namespace_of("/dev/nvme0n1p2"), "nvme0n1");
  EXPECT_EQ(nvme_namespace_of("/dev/nvme12n3"), "nvme12n3");
  EXPECT_EQ(nvme_namespace_of("nvme1n1"), "nvme1n1");
  EXPECT_EQ(nvme_namespace_of("/dev/nvme0"), "");
  EXPECT_EQ(nvme_namespace_of("/dev/nvme0c1n1"), "");
  EXPECT_EQ(nvme_namespace_of("/dev/nvme0n1p"), "");
  EXPECT_EQ(nvme_namespace_of("/dev/sda1"), "");
  EXPECT_EQ(nvme_namespace_of("tmpfs"), "");
}

Machine data_dir_on(const std::filesystem::path& root, const std::string& path) {
  auto fs = core::make_disk_fs(root.string());
  EXPECT_THAT(fs, IsOk());
  Machine m;
  read_data_dir(**fs, path, m);
  return m;
}

TEST(DataDirTest, PartitionOfANamespaceIsFoundByItsName) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  const Machine m = data_dir_on(dir.path(), "/home/user/data");
  ASSERT_TRUE(m.data_dir);
  EXPECT_EQ(m.data_dir->unavailable, "");
  EXPECT_EQ(m.data_dir->mount.mount_point, "/");
  EXPECT_EQ(m.data_dir->device_evidence, "/dev/nvme0n1p2");
  EXPECT_THAT(m.data_dir->nvme_namespaces, ElementsAre("nvme0n1"));
}

TEST(DataDirTest, LogicalVolumeIsFollowedThroughItsSlaves) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  const Machine m = data_dir_on(dir.path(), "/raid/imagenet");
  ASSERT_TRUE(m.data_dir);
  EXPECT_EQ(m.data_dir->mount.source, "/dev/mapper/vg0-raid");
  EXPECT_EQ(m.data_dir->device_evidence, "/sys/dev/block/253:0");
  EXPECT_THAT(m.data_dir->nvme_namespaces, ElementsAre("nvme1n1"));
}

TEST(DataDirTest, StackedDevicesOverSeveralNamespacesNameThemAll) {
  TempDir dir;
  SysrootBuilder b(dir.path());
  b.numa_node({.id = 0, .cpus = "0-3", .distances = {10}, .memory_kib = 1024});
  auto bus = b.root_bus("0000:00", 0);
  const acco::testing::FunctionSpec drive{
      {0x010802, 0x144d, 0xa80a}, acco::testing::Link{4, 4}, "nvme"};
  bus.add("0000:00:01.0", drive).nvme("nvme0", {.namespace_sectors = {1000}, .partitions = 1});
  bus.add("0000:00:02.0", drive).nvme("nvme1", {.namespace_sectors = {1000}});
  b.virtual_block_device("md0", "9:0", {"nvme0n1p1", "nvme1n1"})
      .virtual_block_device("dm-3", "253:3", {"md0"})
      .file("proc/self/mountinfo",
            "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n"
            "5 1 253:3 / /scratch rw,noatime - xfs /dev/mapper/crypt-scratch rw\n");
  const Machine m = data_dir_on(dir.path(), "/scratch");
  ASSERT_TRUE(m.data_dir);
  EXPECT_THAT(m.data_dir->nvme_namespaces, ElementsAre("nvme0n1", "nvme1n1"));
}

TEST(DataDirTest, DeviceWithoutNvmeBelowItNamesNone) {
  TempDir dir;
  acco::testing::write_dgx_h100(dir.path());
  const Machine m = data_dir_on(dir.path(), "/boot/efi");
  ASSERT_TRUE(m.data_dir);
  EXPECT_EQ(m.data_dir->mount.fs_type, "vfat");
  EXPECT_THAT(m.data_dir->nvme_namespaces, IsEmpty());
}

TEST(DataDirTest, MissingMountInfoLeavesTheMountUnknownWithTheReason) {
  TempDir dir;
  acco::testing::write_workstation(dir.path());
  const Machine m = data_dir_on(dir.path(), "/data");
  ASSERT_TRUE(m.data_dir);
  EXPECT_THAT(m.data_dir->unavailable, HasSubstr("/proc/self/mountinfo"));
  EXPECT_THAT(m.input_issues, IsEmpty());
}

TEST(DataDirTest, GarbledMountInfoIsAnInputIssue) {
  TempDir dir;
  SysrootBuilder b(dir.path());
  b.file("proc/self/mountinfo", "garbage\n");
  const Machine m = data_dir_on(dir.path(), "/data");
  ASSERT_TRUE(m.data_dir);
  EXPECT_THAT(m.data_dir->unavailable, HasSubstr("line 1"));
  ASSERT_EQ(m.input_issues.size(), 1U);
  EXPECT_EQ(m.input_issues[0].path, "/proc/self/mountinfo");
}

}  // namespace
}  // namespace acco::topo
