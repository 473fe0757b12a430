// The PCI ID database: its format line by line, the class section, malformed and binary lines,
// the excerpt a snapshot keeps, where it is found under a sysroot, the real 1.3 MB file, and the
// names a probe gives devices from it and from NVML.
#include "acco/topo/pci_ids.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "acco/testing/matchers.hpp"
#include "acco/topo/probe.hpp"

#include "machines.hpp"
#include "sysroot_builder.hpp"

namespace acco::topo {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using acco::testing::TempDir;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr const char* kSmall =
    "#\n"
    "#\tList of PCI ID's\n"
    "#\n"
    "#\tVersion: 2023.04.10\n"
    "#\n"
    "\n"
    "# Syntax:\n"
    "# vendor  vendor_name\n"
    "10de  NVIDIA Corporation\n"
    "\t2330  GH100[H100 SXM5 80GB]\n"
    "\t20f1  GA100 [A100 PCIe 40GB]\n"
    "\t\t10de 145f  A100 PCIe 40GB\n"
    "# a comment between entries\n"
    "15b3  Mellanox Technologies\n"
    "\t1015  MT27710 Family [ConnectX-4 Lx]\n"
    "\t\t15b3 0003  Stand-up ConnectX-4 Lx EN, 25GbE dual-port SFP28\n"
    "ffff  Illegal Vendor ID\n"
    "\n"
    "# List of known device classes, subclasses and programming interfaces\n"
    "C 02  Network controller\n"
    "\t00  Ethernet controller\n"
    "\t\t00  Some interface\n"
    "C 03  Display controller\n"
    "\t02  3D controller\n";

TEST(PciIdsTest, NamesVendorsDevicesAndSubsystems) {
  const auto ids = parse_pci_ids(kSmall);
  EXPECT_EQ(ids.lookup({0x10de, 0x2330, 0x10de, 0x16c1}),
            (PciIdNames{"NVIDIA Corporation", "GH100[H100 SXM5 80GB]", ""}));
  EXPECT_EQ(ids.lookup({0x10de, 0x20f1, 0x10de, 0x145f}),
            (PciIdNames{"NVIDIA Corporation", "GA100 [A100 PCIe 40GB]", "A100 PCIe 40GB"}));
  EXPECT_EQ(ids.lookup({0x15b3, 0x1015, 0x15b3, 0x0003}).subsystem,
            "Stand-up ConnectX-4 Lx EN, 25GbE dual-port SFP28");
  // The subsystem belongs to its device: the same subsystem ids under another device name none.
  EXPECT_EQ(ids.lookup({0x10de, 0x2330, 0x10de, 0x145f}).subsystem, "");
  EXPECT_EQ(ids.lookup({0x1234, 0x5678, 0, 0}), PciIdNames{});
  EXPECT_EQ(ids.version(), "2023.04.10");
  EXPECT_EQ(ids.vendors(), 3U);
  EXPECT_EQ(ids.devices(), 3U);
  EXPECT_EQ(ids.subsystems(), 2U);
  EXPECT_EQ(ids.skipped_lines(), 0U);
}

// The class section's lines are tab-indented like devices: under "C 02" they must not become
// devices or subsystems of the last vendor (ffff), and "C 02" is no vendor.
TEST(PciIdsTest, TheClassSectionIsNotReadAsVendors) {
  const auto ids = parse_pci_ids(kSmall);
  EXPECT_EQ(ids.lookup({0xffff, 0x0000, 0, 0}), (PciIdNames{"Illegal Vendor ID", "", ""}));
  EXPECT_EQ(ids.lookup({0xffff, 0x0002, 0, 0}).device, "");
  EXPECT_EQ(ids.lookup({0x0c02, 0, 0, 0}).vendor, "");
  EXPECT_EQ(ids.devices(), 3U);
  // A vendor after the class section is read again.
  const auto after = parse_pci_ids(std::string(kSmall) + "1af4  Red Hat, Inc.\n\t1041  Virtio\n");
  EXPECT_EQ(after.lookup({0x1af4, 0x1041, 0, 0}).device, "Virtio");
}

TEST(PciIdsTest, MalformedLinesAreSkippedAndCountedNeverACrash) {
  const std::string text =
      "zzzz  Not hex\n"
      "\t1234  Under a bad vendor: no parent\n"
      "10de\n"
      "10de  \n"
      "10de\tNVIDIA Corporation\n"  // a tab is a blank as good as two spaces
      "\t2330\n"
      "\t233  Three digits\n"
      "\t2330  GH100[H100 SXM5 80GB]\r\n"
      "\t\t10de  Subsystem without its device id\n"
      "\t\t10de 16c1\n"
      "\t\t\t10de 16c1  Three tabs\n"
      " 15b3  Leading space\n"
      "\tabcd  Under a line that was no vendor\n"
      "1af4  Red\x01Hat\n"
      "1b36  Bad \xff\xfe UTF-8\n"
      "\t000c  Under the binary line\n"
      "15b3  Mellanox Technologies  \n"
      "\t1021  MT2910 Family [ConnectX-7]\n"
      "\t\t15b3 0041  With \xc2\xb2 in UTF-8\n"
      "\t\t15b3 0042  Truncated \xc3\n"
      "\t1022";  // the last line without its newline
  const auto ids = parse_pci_ids(text);
  EXPECT_EQ(ids.lookup({0x10de, 0x2330, 0, 0}).device, "GH100[H100 SXM5 80GB]");
  EXPECT_EQ(ids.lookup({0x10de, 0x1234, 0, 0}).device, "");
  EXPECT_EQ(ids.lookup({0x15b3, 0xabcd, 0, 0}).device, "");
  EXPECT_EQ(ids.lookup({0x1b36, 0x000c, 0, 0}), PciIdNames{});
  EXPECT_EQ(ids.lookup({0x1af4, 0, 0, 0}).vendor, "");
  EXPECT_EQ(ids.lookup({0x15b3, 0x1021, 0x15b3, 0x0041}),
            (PciIdNames{"Mellanox Technologies", "MT2910 Family [ConnectX-7]",
                        "With \xc2\xb2 in UTF-8"}));
  EXPECT_EQ(ids.lookup({0x15b3, 0x1021, 0x15b3, 0x0042}).subsystem, "");
  EXPECT_EQ(ids.vendors(), 2U);
  EXPECT_EQ(ids.devices(), 2U);
  EXPECT_EQ(ids.subsystems(), 1U);
  EXPECT_EQ(ids.skipped_lines(), 16U);
}

// Whatever the bytes, parsing ends and every name it gives is one line of UTF-8 text.
TEST(PciIdsTest, RandomBytesParseWithoutACrash) {
  std::mt19937 random(36);
  const std::string alphabet = "\t\n\r #C0123456789abcdefABCDEFxyz\x01\xff\xc3\xa9";
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  std::uniform_int_distribution<std::size_t> length(0, 400);
  for (int round = 0; round < 2000; ++round) {
    std::string text(length(random), ' ');
    for (auto& c : text) {
      c = alphabet[pick(random)];
    }
    const auto ids = parse_pci_ids(text);
    for (std::uint32_t v : {0x0000U, 0x00abU, 0xabcdU, 0xffffU}) {
      const auto names = ids.lookup({static_cast<std::uint16_t>(v), 0xabcd, 0xabcd, 0xabcd});
      for (const auto& name : {names.vendor, names.device, names.subsystem}) {
        EXPECT_EQ(name.find_first_of("\t\n\r\x01"), std::string::npos);
        EXPECT_NO_THROW((void)nlohmann::json(name).dump());
      }
    }
  }
}

TEST(PciIdsTest, TheFirstOfTwoEntriesWins) {
  const auto ids = parse_pci_ids("10de  First\n\t2330  One\n\t2330  Two\n10de  Second\n");
  EXPECT_EQ(ids.lookup({0x10de, 0x2330, 0, 0}), (PciIdNames{"First", "One", ""}));
}

// What a snapshot keeps: the lines for its devices, which parse to the same names.
TEST(PciIdsTest, TheExcerptNamesTheSameDevicesAndNothingElse) {
  const auto ids = parse_pci_ids(kSmall);
  const std::vector<PciIdKey> keys = {{0x10de, 0x20f1, 0x10de, 0x145f},
                                      {0x10de, 0x2330, 0x10de, 0x16c1},
                                      {0xffff, 0x1234, 0, 0},
                                      {0x10de, 0x2330, 0x10de, 0x16c1},
                                      {0x8086, 0x1234, 0, 0}};
  const auto excerpt = ids.excerpt(keys);
  EXPECT_EQ(excerpt,
            "# The entries of a PCI ID database that name one machine's devices\n"
            "#\tVersion: 2023.04.10\n"
            "10de  NVIDIA Corporation\n"
            "\t20f1  GA100 [A100 PCIe 40GB]\n"
            "\t\t10de 145f  A100 PCIe 40GB\n"
            "\t2330  GH100[H100 SXM5 80GB]\n"
            "ffff  Illegal Vendor ID\n");
  const auto back = parse_pci_ids(excerpt);
  for (const auto& k : keys) {
    EXPECT_EQ(back.lookup(k), ids.lookup(k));
  }
  EXPECT_EQ(back.version(), "2023.04.10");
  EXPECT_EQ(back.lookup({0x15b3, 0x1015, 0, 0}), PciIdNames{});
}

TEST(PciIdsTest, ModelIsNvmlsNameThenTheDeviceThenTheVendorsWords) {
  NvmlGpu gpu;
  gpu.name = "NVIDIA H100 80GB HBM3";
  const PciIdNames names{"NVIDIA Corporation", "GH100[H100 SXM5 80GB]", ""};
  EXPECT_EQ(model_name(&gpu, names, 0x2330), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(model_name(nullptr, names, 0x2330), "GH100[H100 SXM5 80GB]");
  gpu.name.clear();
  EXPECT_EQ(model_name(&gpu, names, 0x2330), "GH100[H100 SXM5 80GB]");
  EXPECT_EQ(model_name(nullptr, {"NVIDIA Corporation", "", ""}, 0x2335),
            "NVIDIA Corporation Device 2335");
  EXPECT_EQ(model_name(nullptr, {}, 0x2335), "");
}

void write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(PciIdsTest, ReadsDebiansPathThenHwdatasUnderTheSysroot) {
  TempDir root;
  ASSERT_THAT(core::make_disk_fs(root.path().string()), IsOk());
  const auto fs = *core::make_disk_fs(root.path().string());
  EXPECT_THAT(read_pci_ids(*fs), StatusIs(Errc::kNotFound,
                                          "no PCI ID database at /usr/share/misc/pci.ids or "
                                          "/usr/share/hwdata/pci.ids"));
  write(root.path() / "usr/share/hwdata/pci.ids", "10de  From hwdata\n");
  auto file = read_pci_ids(*fs);
  ASSERT_THAT(file, IsOk());
  EXPECT_EQ(file->path, "/usr/share/hwdata/pci.ids");
  EXPECT_EQ(file->ids.lookup({0x10de, 0, 0, 0}).vendor, "From hwdata");
  write(root.path() / "usr/share/misc/pci.ids", "10de  From misc\n");
  file = read_pci_ids(*fs);
  ASSERT_THAT(file, IsOk());
  EXPECT_EQ(file->path, "/usr/share/misc/pci.ids");
  EXPECT_EQ(file->ids.lookup({0x10de, 0, 0, 0}).vendor, "From misc");
  // A file named outright is read even when the default ones are there, and must exist.
  write(root.path() / "elsewhere/pci.ids", "10de  Named\n");
  file = read_pci_ids(*fs, "/elsewhere/pci.ids");
  ASSERT_THAT(file, IsOk());
  EXPECT_EQ(file->ids.lookup({0x10de, 0, 0, 0}).vendor, "Named");
  EXPECT_THAT(
      read_pci_ids(*fs, "/missing.ids"),
      StatusIs(Errc::kNotFound, "PCI ID database: /missing.ids: No such file or directory"));
}

// The database Debian's pci.ids package installs, when this host has it: read whole (it is
// larger than a sysfs page by far), with its class section left out. The time is printed for
// docs/development.md's figure.
TEST(PciIdsTest, TheRealDatabaseParsesInMilliseconds) {
  const std::filesystem::path path = "/usr/share/misc/pci.ids";
  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << path << " is not installed (Debian package pci.ids)";
  }
  const auto fs = core::make_disk_fs("/");
  ASSERT_THAT(fs, IsOk());
  const auto start = std::chrono::steady_clock::now();
  const auto file = read_pci_ids(**fs);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_THAT(file, IsOk());
  std::cout << "read and parsed " << path << " (" << std::filesystem::file_size(path) << " bytes; "
            << file->ids.vendors() << " vendors, " << file->ids.devices() << " devices, "
            << file->ids.subsystems() << " subsystems, " << file->ids.skipped_lines()
            << " lines skipped) in " << std::chrono::duration<double, std::milli>(took).count()
            << " ms\n";
  EXPECT_GT(file->ids.vendors(), 2000U);
  EXPECT_GT(file->ids.devices(), 15000U);
  EXPECT_EQ(file->ids.skipped_lines(), 0U);
  EXPECT_EQ(file->ids.lookup({0x10de, 0, 0, 0}).vendor, "NVIDIA Corporation");
  EXPECT_THAT(file->ids.lookup({0x15b3, 0x1021, 0, 0}).device, HasSubstr("ConnectX-7"));
  // Intel's entries lie past the first MiB of the file.
  EXPECT_EQ(file->ids.lookup({0x8086, 0, 0, 0}).vendor, "Intel Corporation");
  // The last vendor, ffff, is followed by the classes, whose lines must not become its devices.
  EXPECT_EQ(file->ids.lookup({0xffff, 0x0000, 0, 0}).device, "");
}

ProbeResult probe_sysroot(const std::filesystem::path& root, bool capture = false) {
  ProbeRequest request;
  request.sysroot = root.string();
  request.nvml = NvmlMode::kOff;
  request.capture_snapshot = capture;
  auto r = probe(request);
  EXPECT_THAT(r, IsOk());
  return r ? *r : ProbeResult{};
}

const PciDevice& device_at(const Machine& m, const std::string& address) {
  const auto* d = m.find(address);
  EXPECT_NE(d, nullptr) << address;
  static const PciDevice kNone;
  return d != nullptr ? *d : kNone;
}

TEST(PciIdsTest, AProbeNamesDevicesFromTheSysrootsDatabase) {
  TempDir root;
  acco::testing::write_dgx_h100(root.path());
  const auto r = probe_sysroot(root.path());
  EXPECT_EQ(r.machine.pci_ids.path, "/usr/share/misc/pci.ids");
  EXPECT_EQ(r.machine.pci_ids.version, "2023.04.10");
  EXPECT_EQ(r.machine.pci_ids.unavailable, "");
  // The NVSwitch came after this version of the database; the H100 did not.
  EXPECT_THAT(r.machine.pci_ids.unlisted, Contains("10de:22a3"));
  EXPECT_THAT(r.machine.pci_ids.unlisted, Not(Contains("10de:2330")));
  const auto& gpu = device_at(r.machine, "0000:18:00.0");
  EXPECT_EQ(gpu.model, "GH100[H100 SXM5 80GB]");
  EXPECT_EQ(gpu.vendor_name, "NVIDIA Corporation");
  const auto& nvswitch = device_at(r.machine, std::string(acco::testing::kDgxH100NvSwitches[0]));
  EXPECT_EQ(nvswitch.model, "NVIDIA Corporation Device 22a3");
  EXPECT_EQ(device_at(r.machine, "0000:19:00.0").model, "MT2910 Family [ConnectX-7]");
}

TEST(PciIdsTest, AProbeWithoutADatabaseSaysWhyAndNamesNothing) {
  TempDir root;
  acco::testing::write_ci_vm(root.path());
  const auto r = probe_sysroot(root.path());
  EXPECT_EQ(r.machine.pci_ids.unavailable,
            "no PCI ID database at /usr/share/misc/pci.ids or /usr/share/hwdata/pci.ids");
  for (const auto& d : r.machine.pci_devices) {
    EXPECT_THAT(d.model, IsEmpty()) << d.address;
  }
}

// A database written in pci.ids' documented format (vendor lines, tab-indented devices,
// two-tab "subvendor subdevice  name" subsystems) that is older than some of the hardware: the
// H200 (10de:2335) came after it, its vendor did not. Not the real file's entries.
constexpr const char* kOlderThanTheHardware =
    "#\tVersion: 2023.04.10\n"
    "10de  NVIDIA Corporation\n"
    "\t2330  GH100 [H100 SXM5 80GB]\n"
    "\t\t10de 16c1  H100 SXM5 80GB\n"
    "15b3  Mellanox Technologies\n"
    "\t1021  MT2910 Family [ConnectX-7]\n";

PciDevice function(std::string address, DeviceKind kind, std::uint16_t vendor, std::uint16_t device,
                   std::uint16_t subsystem_device = 0) {
  PciDevice d;
  d.address = std::move(address);
  d.kind = kind;
  d.vendor_id = vendor;
  d.device_id = device;
  d.subsystem_vendor_id = subsystem_device != 0 ? vendor : 0;
  d.subsystem_device_id = subsystem_device;
  return d;
}

// Eight identical H200s the database does not list, two listed H100s (one with its subsystem
// entry), a NIC and a device of a vendor the database does not know; NVML names one H200.
TEST(PciIdsTest, DevicesNewerThanTheDatabaseGoByTheVendorsWordsAndAreListedOnce) {
  Machine m;
  for (int i = 0; i < 8; ++i) {
    m.pci_devices.push_back(
        function("0000:1" + std::to_string(i) + ":00.0", DeviceKind::kGpu, 0x10de, 0x2335));
  }
  m.pci_devices.push_back(function("0000:30:00.0", DeviceKind::kGpu, 0x10de, 0x2330, 0x16c1));
  m.pci_devices.push_back(function("0000:31:00.0", DeviceKind::kGpu, 0x10de, 0x2330, 0x16c2));
  m.pci_devices.push_back(function("0000:40:00.0", DeviceKind::kNic, 0x15b3, 0x1021));
  m.pci_devices.push_back(function("0000:50:00.0", DeviceKind::kAccelerator, 0x1ded, 0x0001));
  NvmlGpu gpu;
  gpu.pci = "0000:13:00.0";
  gpu.name = "NVIDIA H200";
  m.nvml.available = true;
  m.nvml.gpus = {gpu};
  const PciIds ids = parse_pci_ids(kOlderThanTheHardware);
  EXPECT_EQ(ids.skipped_lines(), 0U);
  name_devices(m, &ids);
  EXPECT_EQ(m.pci_devices[0].model, "NVIDIA Corporation Device 2335");
  EXPECT_EQ(m.pci_devices[0].vendor_name, "NVIDIA Corporation");
  EXPECT_EQ(m.pci_devices[3].model, "NVIDIA H200");  // NVML's name first
  EXPECT_EQ(m.pci_devices[7].model, "NVIDIA Corporation Device 2335");
  EXPECT_EQ(m.pci_devices[8].model, "GH100 [H100 SXM5 80GB]");
  EXPECT_EQ(m.pci_devices[8].subsystem_name, "H100 SXM5 80GB");
  EXPECT_EQ(m.pci_devices[9].subsystem_name, "");  // its subsystem is not listed
  EXPECT_EQ(m.pci_devices[10].model, "MT2910 Family [ConnectX-7]");
  EXPECT_EQ(m.pci_devices[11].model, "");  // nothing names it: the ids are all there is
  EXPECT_EQ(m.pci_devices[11].vendor_name, "");
  // Each id once, in address order, whatever named the devices.
  EXPECT_THAT(m.pci_ids.unlisted, ElementsAre("10de:2335", "1ded:0001"));
  // Naming again (a replay) gives the same list, not a longer one.
  name_devices(m, &ids);
  EXPECT_THAT(m.pci_ids.unlisted, ElementsAre("10de:2335", "1ded:0001"));
  // Without a database nothing is "unlisted": there is nothing it could have listed.
  name_devices(m, nullptr);
  EXPECT_THAT(m.pci_ids.unlisted, IsEmpty());
  EXPECT_EQ(m.pci_devices[3].model, "NVIDIA H200");
  EXPECT_EQ(m.pci_devices[0].model, "");
}

// The excerpt a snapshot keeps for a device the database does not list holds its vendor, so the
// replay says "NVIDIA Corporation Device 2335" as the live probe did.
TEST(PciIdsTest, TheExcerptOfAnUnlistedDeviceKeepsItsVendor) {
  const PciIds ids = parse_pci_ids(kOlderThanTheHardware);
  const auto excerpt = ids.excerpt({{0x10de, 0x2335, 0, 0}, {0x10de, 0x2335, 0, 0}});
  EXPECT_EQ(excerpt,
            "# The entries of a PCI ID database that name one machine's devices\n"
            "#\tVersion: 2023.04.10\n"
            "10de  NVIDIA Corporation\n");
  const PciIds replay = parse_pci_ids(excerpt);
  EXPECT_EQ(replay.lookup({0x10de, 0x2335, 0, 0}), (PciIdNames{"NVIDIA Corporation", "", ""}));
}

// A database that is there but cannot be read (here a directory where the file should be) is the
// same as none: the probe goes on, names nothing and says why; only a file named outright must
// be read.
TEST(PciIdsTest, AnUnreadableDatabaseNamesNothingAndSaysWhy) {
  TempDir root;
  acco::testing::write_ci_vm(root.path());
  std::filesystem::create_directories(root.path() / "usr/share/misc/pci.ids");
  const auto r = probe_sysroot(root.path());
  EXPECT_THAT(r.machine.pci_ids.unavailable, HasSubstr("PCI ID database: /usr/share/misc/pci.ids"));
  EXPECT_THAT(r.machine.pci_ids.unlisted, IsEmpty());
  for (const auto& d : r.machine.pci_devices) {
    EXPECT_THAT(d.model, IsEmpty()) << d.address;
  }
}

// A snapshot keeps the entries for its devices (not the whole database) and replays them, so the
// replay names every device as the live probe did.
TEST(PciIdsTest, ASnapshotReplaysTheNamesFromItsExcerpt) {
  TempDir root;
  acco::testing::write_kvm_guest(root.path());
  const auto live = probe_sysroot(root.path(), true);
  ASSERT_TRUE(live.snapshot.has_value());
  EXPECT_EQ(live.snapshot->pci_ids_source.path, "/usr/share/hwdata/pci.ids");
  EXPECT_THAT(live.snapshot->pci_ids, HasSubstr("\t8233  XIO3130 PCI Express Switch"));
  EXPECT_THAT(live.snapshot->pci_ids, Not(HasSubstr("Broadcom")));
  TempDir out;
  const auto file = (out.path() / "snap.json").string();
  ASSERT_THAT(write_snapshot(file, *live.snapshot), IsOk());
  ProbeRequest request;
  request.from_snapshot = file;
  const auto replay = probe(request);
  ASSERT_THAT(replay, IsOk());
  EXPECT_EQ(replay->machine.pci_ids, live.machine.pci_ids);
  ASSERT_EQ(replay->machine.pci_devices.size(), live.machine.pci_devices.size());
  for (std::size_t i = 0; i < live.machine.pci_devices.size(); ++i) {
    const auto& a = live.machine.pci_devices[i];
    const auto& b = replay->machine.pci_devices[i];
    EXPECT_EQ(a.model, b.model) << a.address;
    EXPECT_EQ(a.vendor_name, b.vendor_name) << a.address;
    EXPECT_EQ(a.subsystem_name, b.subsystem_name) << a.address;
  }
}

TEST(PciIdsTest, ASnapshotOfAnOlderAccoReplaysWithoutNamesAndSaysWhy) {
  const auto s =
      snapshot_from_json(nlohmann::json::parse(R"({"schema": "acco.snapshot/1", "fs": {}})"));
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->pci_ids_source.unavailable,
            "the snapshot holds no PCI ID database entries (taken by an older acco)");
}

}  // namespace
}  // namespace acco::topo
