// The host source over generated sysroots in the kernel's real formats: each value converted to
// base units, absent files read as empty, each malformed file one issue while the rest reads on,
// and the live machine read through the disk Fs.
#include "acco/power/host_source.hpp"

#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sysroot_builder.hpp"

namespace acco::power {
namespace {

using acco::testing::SysrootBuilder;
using acco::testing::TempDir;
using ::testing::AllOf;
using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;
using ::testing::StartsWith;

constexpr std::int64_t kNow = 1'764'000'000'123'456'789;

// A two-socket server's files as Linux 6.8 writes them.
void write_host(SysrootBuilder& b) {
  b.file("proc/stat",
         "cpu  2296112 47290 567789 2389500 4062 0 1181 1203 0 0\n"
         "cpu0 1140733 21798 273389 1215209 1330 0 187 598 0 0\n"
         "cpu1 1155378 25491 294399 1174291 2732 0 994 605 0 0\n"
         "intr 189282636 0 9 0 0\n"
         "ctxt 350186390\n"
         "btime 1763990000\n"
         "processes 1034570\n"
         "procs_running 2\n"
         "procs_blocked 0\n"
         "softirq 97271542 0 11716291 2 5062553 0 0 1 28151064 0 52341631\n");
  b.file("proc/meminfo",
         "MemTotal:       16318276 kB\n"
         "MemFree:         1203520 kB\n"
         "MemAvailable:   10839336 kB\n"
         "Buffers:          301956 kB\n"
         "Cached:          8932004 kB\n"
         "SwapCached:            0 kB\n"
         "SwapTotal:       2097148 kB\n"
         "SwapFree:        2097148 kB\n"
         "HugePages_Total:       0\n"
         "Hugepagesize:       2048 kB\n");
  b.file("proc/pressure/cpu",
         "some avg10=0.71 avg60=0.52 avg300=1.32 total=6602159190\n"
         "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
  b.file("proc/pressure/memory",
         "some avg10=1.50 avg60=0.40 avg300=0.10 total=2500000\n"
         "full avg10=0.25 avg60=0.05 avg300=0.01 total=1000000\n");
  b.file("proc/pressure/io",
         "some avg10=12.00 avg60=3.00 avg300=1.00 total=90000000\n"
         "full avg10=10.00 avg60=2.00 avg300=0.50 total=45000000\n");
  // Linux 5.5+: 17 fields. nvme0n1 with partitions, sda on an old 4.x layout of 14 fields, a
  // loop device and a ram disk that /sys/block lists too.
  b.file("proc/diskstats",
         "   7       0 loop0 62 0 2194 31 0 0 0 0 0 48 31 0 0 0 0 0 0\n"
         "   1       0 ram0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
         " 259       0 nvme0n1 334201 81 23106410 61234 912346 412 81920560 812345 0 356000 "
         "873579 0 0 0 0 43210 12345\n"
         " 259       1 nvme0n1p1 512 0 20480 40 2 0 16 1 0 60 41 0 0 0 0 0 0\n"
         " 259       2 nvme0n1p2 333600 81 23080000 61190 912344 412 81920544 812344 0 355900 "
         "873534 0 0 0 0 0 0\n"
         "   8       0 sda 1000 10 8000 500 2000 20 16000 900 0 1500 1400\n"
         "   8       1 sda1 990 10 7900 490 1990 20 15900 890 0 1490 1380\n");
  for (const char* disk : {"loop0", "ram0", "nvme0n1", "sda"}) {
    b.file(std::string("sys/block/") + disk + "/stat", "0\n");
  }
  const auto net = [&](const std::string& name, const std::map<std::string, int>& counters) {
    for (const auto& [counter, value] : counters) {
      b.file("sys/class/net/" + name + "/statistics/" + counter, std::to_string(value) + "\n");
    }
  };
  net("lo", {{"rx_bytes", 1}, {"tx_bytes", 1}});
  net("ens1f0np0", {{"rx_bytes", 1000},
                    {"tx_bytes", 2000},
                    {"rx_packets", 10},
                    {"tx_packets", 20},
                    {"rx_errors", 1},
                    {"tx_errors", 2},
                    {"rx_dropped", 3},
                    {"tx_dropped", 4}});
  // The NIC links to its PCI function (a directory stands for the link); docker0 is virtual.
  b.file("sys/class/net/ens1f0np0/device/vendor", "0x15b3\n");
  net("docker0", {{"rx_bytes", 70}, {"tx_bytes", 80}});
  b.file("sys/class/net/bonding_masters", "\n");
  const std::string ib = "sys/class/infiniband/mlx5_0/ports/1/counters/";
  b.file(ib + "port_rcv_data", "250000000\n");
  b.file(ib + "port_xmit_data", "500000000\n");
  b.file(ib + "port_rcv_packets", "1200000\n");
  b.file(ib + "port_xmit_packets", "2400000\n");
  b.file(ib + "symbol_error", "0\n");
  b.file(ib + "link_downed", "1\n");
  // port_rcv_errors left out: some drivers do not expose it.
  b.file("sys/class/hwmon/hwmon0/name", "k10temp\n");
  b.file("sys/class/hwmon/hwmon0/temp1_input", "45250\n");
  b.file("sys/class/hwmon/hwmon0/temp1_label", "Tctl\n");
  b.file("sys/class/hwmon/hwmon0/temp3_input", "38000\n");
  b.file("sys/class/hwmon/hwmon0/temp3_label", "Tccd1\n");
  b.file("sys/class/hwmon/hwmon1/name", "nvme\n");
  b.file("sys/class/hwmon/hwmon1/temp1_input", "-5000\n");
  b.file("sys/class/hwmon/hwmon1/temp1_max", "84850\n");
  const std::string rapl = "sys/class/powercap/";
  b.file(rapl + "intel-rapl/enabled", "1\n");
  b.file(rapl + "intel-rapl:0/name", "package-0\n");
  b.file(rapl + "intel-rapl:0/energy_uj", "123456789012\n");
  b.file(rapl + "intel-rapl:0/constraint_0_power_limit_uw", "350000000\n");
  b.file(rapl + "intel-rapl:0:0/name", "dram\n");
  b.file(rapl + "intel-rapl:0:0/energy_uj", "9876543\n");
}

Result<HostSample> read_root(const std::filesystem::path& root, long ticks = 100) {
  auto fs = core::make_disk_fs(root.string());
  if (!fs) {
    return tl::unexpected(fs.error());
  }
  auto source = make_host_source(**fs, {ticks, [] { return kNow; }});
  return source->read();
}

HostSample read_host(const std::function<void(SysrootBuilder&)>& change = {}) {
  TempDir dir;
  SysrootBuilder b(dir.path() / "root");
  write_host(b);
  if (change) {
    change(b);
  }
  auto s = read_root(b.root());
  EXPECT_TRUE(s.has_value()) << s.error().message;
  return s.value_or(HostSample{});
}

TEST(HostSourceTest, CpuTimesAreTicksOverUserHzAndCpusAreTheCpuNLines) {
  const auto s = read_host();
  EXPECT_DOUBLE_EQ(s.cpu.seconds.at("user"), 22961.12);
  EXPECT_DOUBLE_EQ(s.cpu.seconds.at("nice"), 472.90);
  EXPECT_DOUBLE_EQ(s.cpu.seconds.at("system"), 5677.89);
  EXPECT_DOUBLE_EQ(s.cpu.seconds.at("idle"), 23895.00);
  EXPECT_DOUBLE_EQ(s.cpu.seconds.at("iowait"), 40.62);
  EXPECT_DOUBLE_EQ(s.cpu.seconds.at("irq"), 0.0);
  EXPECT_DOUBLE_EQ(s.cpu.seconds.at("softirq"), 11.81);
  EXPECT_DOUBLE_EQ(s.cpu.seconds.at("steal"), 12.03);
  EXPECT_EQ(s.cpu.seconds.size(), 8U);  // guest and guest_nice are inside user and nice
  EXPECT_EQ(s.cpu.cpus, 2);
  EXPECT_THAT(s.issues, IsEmpty());
}

TEST(HostSourceTest, TheTickRateIsInjected) {
  TempDir dir;
  SysrootBuilder b(dir.path() / "root");
  b.file("proc/stat", "cpu  1000 0 500 2000\ncpu0 1000 0 500 2000\n");
  auto s = read_root(b.root(), 250);
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_DOUBLE_EQ(s->cpu.seconds.at("user"), 4.0);
  EXPECT_DOUBLE_EQ(s->cpu.seconds.at("idle"), 8.0);
  EXPECT_EQ(s->cpu.seconds.size(), 4U);  // an old kernel's four columns
}

TEST(HostSourceTest, TheSampleTimeComesFromTheInjectedClock) {
  EXPECT_EQ(read_host().time_unix_nanos, kNow);
}

TEST(HostSourceTest, MemoryKilobytesAreKibibytesInBytes) {
  const auto s = read_host();
  const std::map<std::string, std::uint64_t> expected = {
      {"total", 16318276ULL * 1024},     {"free", 1203520ULL * 1024},
      {"available", 10839336ULL * 1024}, {"buffers", 301956ULL * 1024},
      {"cached", 8932004ULL * 1024},     {"swap_total", 2097148ULL * 1024},
      {"swap_free", 2097148ULL * 1024}};
  EXPECT_EQ(s.memory_bytes, expected);
}

// avg10 / 100 is not exact in binary, so the doubles are compared to 4 ulps.
::testing::Matcher<const PressureSample&> Pressure(const char* resource, const char* kind,
                                                   double seconds, double ratio) {
  return AllOf(Field(&PressureSample::resource, resource), Field(&PressureSample::kind, kind),
               Field(&PressureSample::stalled_seconds, DoubleEq(seconds)),
               Field(&PressureSample::avg10_ratio, DoubleEq(ratio)));
}

TEST(HostSourceTest, PressureTotalsAreSecondsAndAvg10IsARatioWithoutTheSystemCpuFullLine) {
  const auto s = read_host();
  EXPECT_THAT(
      s.pressure,
      ElementsAre(Pressure("cpu", "some", 6602.15919, 0.0071),
                  Pressure("memory", "some", 2.5, 0.015), Pressure("memory", "full", 1.0, 0.0025),
                  Pressure("io", "some", 90.0, 0.12), Pressure("io", "full", 45.0, 0.10)));
}

TEST(HostSourceTest, PressureOfAnOldKernelWithOnlySomeLinesReads) {
  const auto s = read_host([](SysrootBuilder& b) {
    b.file("proc/pressure/cpu", "some avg10=5.00 avg60=0.52 avg300=1.32 total=1000000\n");
    b.remove("proc/pressure/io");
    b.remove("proc/pressure/memory");
  });
  EXPECT_THAT(s.pressure, ElementsAre(Pressure("cpu", "some", 1.0, 0.05)));
  EXPECT_THAT(s.issues, IsEmpty());
}

TEST(HostSourceTest, DisksAreWholeDisksInBytesWithoutPartitionsLoopOrRamDevices) {
  const auto s = read_host();
  EXPECT_THAT(
      s.disks,
      ElementsAre(
          DiskSample{"nvme0n1", 23106410ULL * 512, 81920560ULL * 512, 334201, 912346, 356.0, {}},
          DiskSample{"sda", 8000 * 512, 16000 * 512, 1000, 2000, 1.5, {}}));
  EXPECT_THAT(s.issues, IsEmpty());
}

TEST(HostSourceTest, ADiskNameWithASlashIsFoundUnderSysBlockWithAnExclamationMark) {
  const auto s = read_host([](SysrootBuilder& b) {
    b.file("proc/diskstats", " 104       0 cciss/c0d0 4 0 16 1 2 0 8 1 0 3 2\n");
    b.file("sys/block/cciss!c0d0/stat", "0\n");
  });
  EXPECT_THAT(s.disks, ElementsAre(DiskSample{"cciss/c0d0", 16 * 512, 8 * 512, 4, 2, 0.003, {}}));
}

TEST(HostSourceTest, NetworkInterfacesSkipLoAndFilesThatAreNotInterfaces) {
  const auto s = read_host();
  EXPECT_THAT(s.net, ElementsAre(NetSample{"docker0", 70, 80, 0, 0, 0, 0, 0, 0, false},
                                 NetSample{"ens1f0np0", 1000, 2000, 10, 20, 1, 2, 3, 4, true}));
}

TEST(HostSourceTest, DmAndMdDevicesNameTheDisksTheyAreBuiltOn) {
  const auto s = read_host([](SysrootBuilder& b) {
    b.file("proc/diskstats",
           "   8       0 sda 100 0 800 1 200 0 1600 1 0 2 2\n"
           "   8       1 sda1 100 0 800 1 200 0 1600 1 0 2 2\n"
           "   8      16 sdb 10 0 80 1 20 0 160 1 0 2 2\n"
           "   9       0 md0 100 0 800 1 100 0 800 1 0 2 2\n"
           " 253       0 dm-0 50 0 400 1 50 0 400 1 0 2 2\n");
    for (const char* disk : {"sda", "sdb", "md0", "dm-0"}) {
      b.file(std::string("sys/block/") + disk + "/stat", "0\n");
    }
    b.remove("sys/block/nvme0n1");
    b.file("sys/block/md0/slaves/sda1", "");
    b.file("sys/block/md0/slaves/sdb", "");
    b.file("sys/block/dm-0/slaves/md0", "");
  });
  ASSERT_EQ(s.disks.size(), 4U);
  EXPECT_EQ(s.disks[0].name, "sda");
  EXPECT_THAT(s.disks[0].members, IsEmpty());
  EXPECT_EQ(s.disks[2].name, "md0");
  EXPECT_THAT(s.disks[2].members, ElementsAre("sda1", "sdb"));
  EXPECT_EQ(s.disks[3].name, "dm-0");
  EXPECT_THAT(s.disks[3].members, ElementsAre("md0"));
  EXPECT_THAT(s.issues, IsEmpty());
}

// The two header lines of /proc/net/dev, as Linux prints them (net/core/net-procfs.c).
constexpr const char* kProcNetDevHeader =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
    "drop fifo colls carrier compressed\n";

// A container without /sys: the interfaces of its network namespace from /proc/net/dev.
TEST(HostSourceTest, WithoutSysClassNetInterfacesComeFromProcNetDevWithoutLo) {
  const auto s = read_host([](SysrootBuilder& b) {
    b.remove("sys/class/net");
    b.file(
        "proc/net/dev",
        std::string(kProcNetDevHeader) +
            "    lo: 5419981383 1939001    0    0    0     0          0         0 5419981383 "
            "1939001    0    0    0     0       0          0\n"
            "  eth0: 195819499   11548    1    2    0     0          0         0   777040    9945 "
            "   3    4    0     0       0          0\n"
            "eth1:12 1 0 0 0 0 0 0 34 2 0 0 0 0 0 0\n");
  });
  EXPECT_THAT(s.net,
              ElementsAre(NetSample{"eth0", 195819499, 777040, 11548, 9945, 1, 3, 2, 4, false},
                          NetSample{"eth1", 12, 34, 1, 2, 0, 0, 0, 0, false}));
  EXPECT_THAT(s.issues, IsEmpty());
}

TEST(HostSourceTest, AContainerWhoseProcNetDevHasOnlyLoHasNoInterfaces) {
  const auto s = read_host([](SysrootBuilder& b) {
    b.remove("sys/class/net");
    b.file("proc/net/dev",
           std::string(kProcNetDevHeader) +
               "    lo:       0       0    0    0    0     0          0         0        0       0 "
               "   0    0    0     0       0          0\n");
  });
  EXPECT_THAT(s.net, IsEmpty());
  EXPECT_THAT(s.issues, IsEmpty());
}

TEST(HostSourceTest, AMalformedProcNetDevLineIsOneIssueAndTheOtherLinesRead) {
  const auto s = read_host([](SysrootBuilder& b) {
    b.remove("sys/class/net");
    b.file("proc/net/dev",
           "  eth0: 1 2 3\n"
           "  eth1: 1 2 0 0 0 0 0 0 3 4 0 0 0 0 0 0\n");
  });
  EXPECT_THAT(s.net, ElementsAre(NetSample{"eth1", 1, 3, 2, 4, 0, 0, 0, 0, false}));
  EXPECT_THAT(s.issues,
              ElementsAre("/proc/net/dev: expected '<interface>:' and 16 numbers, got 'eth0: 1 "
                          "2 3'"));
}

TEST(HostSourceTest, InfinibandDataWordsAreFourBytesAndAnAbsentCounterIsNullopt) {
  const auto s = read_host();
  ASSERT_EQ(s.ib_ports.size(), 1U);
  const auto& p = s.ib_ports[0];
  EXPECT_EQ(p.device, "mlx5_0");
  EXPECT_EQ(p.port, 1);
  EXPECT_EQ(p.rx_bytes, 1'000'000'000U);
  EXPECT_EQ(p.tx_bytes, 2'000'000'000U);
  EXPECT_EQ(p.rx_packets, 1'200'000U);
  EXPECT_EQ(p.tx_packets, 2'400'000U);
  EXPECT_EQ(p.symbol_errors, 0U);
  EXPECT_EQ(p.link_downed, 1U);
  EXPECT_EQ(p.rx_errors, std::nullopt);
}

TEST(HostSourceTest, HwmonTemperaturesAreCelsiusNamedByLabelOrTempN) {
  const auto s = read_host();
  EXPECT_THAT(s.hwmon, ElementsAre(HwmonTemperature{"k10temp", "Tctl", 45.25},
                                   HwmonTemperature{"k10temp", "Tccd1", 38.0},
                                   HwmonTemperature{"nvme", "temp1", -5.0}));
}

TEST(HostSourceTest, HwmonAttributesInTheParentDeviceOfOldDriversRead) {
  const auto s = read_host([](SysrootBuilder& b) {
    b.remove("sys/class/hwmon/hwmon1");
    b.file("sys/class/hwmon/hwmon1/device/name", "coretemp\n");
    b.file("sys/class/hwmon/hwmon1/device/temp2_input", "51000\n");
    b.file("sys/class/hwmon/hwmon1/device/temp2_label", "Core 0\n");
  });
  EXPECT_THAT(s.hwmon, ::testing::Contains(HwmonTemperature{"coretemp", "Core 0", 51.0}));
}

TEST(HostSourceTest, RaplZonesAreJoulesAndWattsAndASubZoneWithoutALimitHasNone) {
  const auto s = read_host();
  EXPECT_THAT(s.rapl, ElementsAre(RaplEnergy{"intel-rapl:0", "package-0", 123456.789012, 350.0},
                                  RaplEnergy{"intel-rapl:0:0", "dram", 9.876543, std::nullopt}));
}

TEST(HostSourceTest, AbsentFilesGiveEmptyListsAndNoIssues) {
  TempDir dir;
  SysrootBuilder b(dir.path() / "root");  // sys/class/net and the like exist, empty
  b.file("proc/stat", "cpu  1 2 3 4 5 6 7 8 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n");
  auto s = read_root(b.root());
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ(s->cpu.cpus, 1);
  EXPECT_THAT(s->memory_bytes, IsEmpty());
  EXPECT_THAT(s->pressure, IsEmpty());
  EXPECT_THAT(s->disks, IsEmpty());
  EXPECT_THAT(s->net, IsEmpty());
  EXPECT_THAT(s->ib_ports, IsEmpty());
  EXPECT_THAT(s->hwmon, IsEmpty());
  EXPECT_THAT(s->rapl, IsEmpty());
  EXPECT_THAT(s->issues, IsEmpty());
}

TEST(HostSourceTest, WithoutProcStatTheReadFailsNotFound) {
  TempDir dir;
  SysrootBuilder b(dir.path() / "root");
  auto s = read_root(b.root());
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, Errc::kNotFound);
  EXPECT_THAT(s.error().message, ::testing::HasSubstr("/proc/stat"));
}

struct Damage {
  std::string file;  // relative to the root
  std::string content;
  std::string issue;  // the whole issue line expected
};

class MalformedFileTest : public ::testing::TestWithParam<Damage> {};

TEST_P(MalformedFileTest, AddsOneIssueNamingTheFileAndTheRestStillReads) {
  const auto& d = GetParam();
  const auto s = read_host([&](SysrootBuilder& b) { b.file(d.file, d.content); });
  EXPECT_THAT(s.issues, ElementsAre(d.issue));
  EXPECT_EQ(s.cpu.cpus, 2);
  EXPECT_FALSE(s.memory_bytes.empty() && d.file != "proc/meminfo");
  EXPECT_FALSE(s.pressure.empty());
  EXPECT_FALSE(s.disks.empty());
  EXPECT_FALSE(s.net.empty());
  EXPECT_FALSE(s.ib_ports.empty());
  EXPECT_FALSE(s.hwmon.empty());
  EXPECT_FALSE(s.rapl.empty());
}

INSTANTIATE_TEST_SUITE_P(
    EachFile, MalformedFileTest,
    ::testing::Values(
        Damage{"proc/stat", "garbage\ncpu0 1 2 3 4\ncpu1 1 2 3 4\n",
               "/proc/stat: expected 'cpu' and at least 4 numbers, got 'garbage'"},
        Damage{"proc/stat", "cpu  1 2 x 4\ncpu0 1 2 3 4\ncpu1 1 2 3 4\n",
               "/proc/stat: expected 'cpu' and at least 4 numbers, got 'cpu  1 2 x 4'"},
        Damage{"proc/meminfo", "MemTotal: lots kB\nMemFree: 5 kB\nCached: 7 MB\n",
               "/proc/meminfo: expected '<Key>: <n> kB' lines with MemTotal, got 'MemTotal: "
               "lots kB'"},
        Damage{"proc/meminfo", "",
               "/proc/meminfo: expected '<Key>: <n> kB' lines with MemTotal, got ''"},
        Damage{"proc/pressure/io",
               "some avg10=high avg60=0 avg300=0 total=1\nfull avg10=x total=y\n",
               "/proc/pressure/io: expected 'some|full avg10=<percent> ... total=<microseconds>' "
               "lines, got 'some avg10=high avg60=0 avg300=0 total=1'"},
        Damage{"proc/pressure/memory", "",
               "/proc/pressure/memory: expected 'some|full avg10=<percent> ... "
               "total=<microseconds>' lines, got ''"},
        Damage{"proc/diskstats",
               "   8       0 sda 1000 10 8000\n"
               " 259       0 nvme0n1 1 0 8 1 1 0 8 1 0 2 2\n",
               "/proc/diskstats: expected '<major> <minor> <name>' and at least 11 numbers, got "
               "'8       0 sda 1000 10 8000'"},
        Damage{"sys/class/net/ens1f0np0/statistics/rx_bytes", "12abc\n",
               "/sys/class/net/ens1f0np0/statistics/rx_bytes: expected an unsigned integer, got "
               "'12abc'"},
        Damage{"sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_data", "",
               "/sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_data: expected an unsigned "
               "integer, got ''"},
        Damage{"sys/class/infiniband/mlx5_0/ports/x/counters/port_rcv_data", "1\n",
               "/sys/class/infiniband/mlx5_0/ports/x: expected a port number 1-255, got 'x'"},
        Damage{"sys/class/hwmon/hwmon1/temp1_input", "hot\n",
               "/sys/class/hwmon/hwmon1/temp1_input: expected millidegrees Celsius, got 'hot'"},
        Damage{"sys/class/powercap/intel-rapl:0:0/energy_uj", "-5\n",
               "/sys/class/powercap/intel-rapl:0:0/energy_uj: expected microjoules, got '-5'"},
        Damage{"sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw", "max\n",
               "/sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw: expected "
               "microwatts, got 'max'"}));

// Forwards to a directory tree but answers "permission denied" for chosen files, as the kernel
// does for a non-root reader (tests may run as root, where chmod does not deny).
class DenyingFs final : public core::Fs {
 public:
  DenyingFs(std::unique_ptr<core::Fs> inner, std::set<std::string> denied)
      : inner_(std::move(inner)), denied_(std::move(denied)) {}
  Result<std::string> read_file(const std::string& path) const override {
    if (denied_.contains(path)) {
      return fail(Errc::kUnavailable, path + ": Permission denied");
    }
    return inner_->read_file(path);
  }
  Result<std::vector<std::string>> list_dir(const std::string& path) const override {
    return inner_->list_dir(path);
  }
  Result<std::string> read_link(const std::string& path) const override {
    return inner_->read_link(path);
  }
  Result<std::string> real_path(const std::string& path) const override {
    return inner_->real_path(path);
  }
  bool exists(const std::string& path) const override { return inner_->exists(path); }

 private:
  std::unique_ptr<core::Fs> inner_;
  std::set<std::string> denied_;
};

Result<HostSample> read_denied(std::set<std::string> denied) {
  TempDir dir;
  SysrootBuilder b(dir.path() / "root");
  write_host(b);
  auto disk = core::make_disk_fs(b.root().string());
  if (!disk) {
    return tl::unexpected(disk.error());
  }
  const DenyingFs fs(std::move(*disk), std::move(denied));
  return make_host_source(fs, {100, [] { return kNow; }})->read();
}

TEST(HostSourceTest, ARaplZoneOnlyRootMayReadIsLeftOutWithoutAnIssue) {
  auto s = read_denied({"/sys/class/powercap/intel-rapl:0/energy_uj"});
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_THAT(s->rapl, ElementsAre(RaplEnergy{"intel-rapl:0:0", "dram", 9.876543, std::nullopt}));
  EXPECT_THAT(s->issues, IsEmpty());
}

TEST(HostSourceTest, AnotherFileThatCannotBeReadIsOneIssue) {
  auto s = read_denied({"/proc/meminfo"});
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_THAT(s->memory_bytes, IsEmpty());
  EXPECT_THAT(s->issues, ElementsAre("/proc/meminfo: Permission denied"));
}

TEST(HostSourceTest, AProcStatThatCannotBeReadFailsTheRead) {
  auto s = read_denied({"/proc/stat"});
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, Errc::kUnavailable);
  EXPECT_THAT(s.error().message, StartsWith("host: /proc/stat"));
}

TEST(HostSourceTest, TheLiveMachineHasCpuTimesAndMemory) {
  auto fs = core::make_disk_fs("/");
  ASSERT_TRUE(fs.has_value()) << fs.error().message;
  auto source = make_host_source(**fs, {clock_ticks_per_second(), {}});
  auto s = source->read();
  ASSERT_TRUE(s.has_value()) << s.error().message;
  double cpu_seconds = 0;
  for (const auto& [mode, seconds] : s->cpu.seconds) {
    cpu_seconds += seconds;
  }
  EXPECT_GT(cpu_seconds, 0);
  EXPECT_GE(s->cpu.cpus, 1);
  EXPECT_GT(s->memory_bytes["total"], 0U);
  EXPECT_GT(s->time_unix_nanos, 0);
  for (const auto& issue : s->issues) {
    std::cout << "live issue: " << issue << "\n";
  }
}

TEST(HostSourceTest, ARecordedReadReplaysToTheSameSample) {
  TempDir dir;
  SysrootBuilder b(dir.path() / "root");
  write_host(b);
  auto disk = core::make_disk_fs(b.root().string());
  ASSERT_TRUE(disk.has_value()) << disk.error().message;
  const core::RecordingFs recording(**disk);
  auto live = make_host_source(recording, {100, [] { return kNow; }})->read();
  ASSERT_TRUE(live.has_value()) << live.error().message;
  const core::ReplayFs replay(recording.record());
  auto replayed = make_host_source(replay, {100, [] { return kNow; }})->read();
  ASSERT_TRUE(replayed.has_value()) << replayed.error().message;
  EXPECT_EQ(*replayed, *live);
  EXPECT_FALSE(live->rapl.empty());
}

}  // namespace
}  // namespace acco::power
