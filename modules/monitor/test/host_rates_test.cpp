// The host's rates between two samples: CPU share, memory, and each byte counted once across
// physical and virtual interfaces, and across dm/md devices and their disks.
#include "acco/monitor/host_rates.hpp"

#include <cstdint>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace acco::monitor {
namespace {

using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;

constexpr std::int64_t kRatesT0 = 1'767'225'600'000'000'000;
constexpr std::int64_t kRatesSecond = 1'000'000'000;
constexpr std::uint64_t kRatesMB = 1'000'000;

power::NetSample rates_nic(const char* name, std::uint64_t rx, std::uint64_t tx, bool physical) {
  return {name, rx, tx, 0, 0, 0, 0, 0, 0, physical};
}

power::DiskSample rates_disk(const char* name, std::uint64_t read, std::uint64_t written,
                             std::vector<std::string> members = {}) {
  return {name, read, written, 0, 0, 0, std::move(members)};
}

// A docker host: eth0 is the NIC; docker0 and the veth carry the same bytes again. Two NVMe
// disks under an md mirror with LVM on top, and zram swap.
power::HostSample docker_host(std::int64_t t, std::uint64_t step) {
  power::HostSample h;
  h.time_unix_nanos = t;
  h.cpu.cpus = 8;
  h.cpu.seconds = {{"user", 30.0 + static_cast<double>(step)},
                   {"system", 10.0 + static_cast<double>(step)},
                   {"idle", 100.0 + 2.0 * static_cast<double>(step)},
                   {"iowait", 5.0}};
  h.memory_bytes = {{"total", 64 * kRatesMB}, {"available", 48 * kRatesMB}};
  h.net = {rates_nic("lo", 9 * kRatesMB * step, 9 * kRatesMB * step, false),
           rates_nic("docker0", 3 * kRatesMB * step, kRatesMB * step, false),
           rates_nic("eth0", 10 * kRatesMB * step, 2 * kRatesMB * step, true),
           rates_nic("veth1a2b", kRatesMB * step, 3 * kRatesMB * step, false)};
  h.disks = {
      rates_disk("nvme0n1", 4 * kRatesMB * step, 8 * kRatesMB * step),
      rates_disk("nvme1n1", 4 * kRatesMB * step, 8 * kRatesMB * step),
      rates_disk("md0", 8 * kRatesMB * step, 8 * kRatesMB * step, {"nvme0n1p2", "nvme1n1p2"}),
      rates_disk("dm-0", 8 * kRatesMB * step, 8 * kRatesMB * step, {"md0"}),
      rates_disk("zram0", 50 * kRatesMB * step, 50 * kRatesMB * step)};
  return h;
}

TEST(HostRatesTest, PhysicalInterfacesAndLeafDisksAreSummedOncePerSecond) {
  const auto before = docker_host(kRatesT0, 1);
  const auto now = docker_host(kRatesT0 + 2 * kRatesSecond, 3);  // two steps in two seconds
  const auto r = host_rates(now, &before);
  EXPECT_THAT(r.interfaces, ElementsAre("eth0"));
  EXPECT_THAT(r.interfaces_left_out,
              ElementsAre("lo: loopback", "docker0: virtual", "veth1a2b: virtual"));
  EXPECT_THAT(r.network_receive_bytes_per_second, Optional(DoubleEq(10e6)));
  EXPECT_THAT(r.network_transmit_bytes_per_second, Optional(DoubleEq(2e6)));
  EXPECT_THAT(r.disks, ElementsAre("nvme0n1", "nvme1n1"));
  EXPECT_THAT(r.disks_left_out, ElementsAre("md0: built on other devices",
                                            "dm-0: built on other devices", "zram0: memory"));
  EXPECT_THAT(r.disk_read_bytes_per_second, Optional(DoubleEq(8e6)));
  EXPECT_THAT(r.disk_written_bytes_per_second, Optional(DoubleEq(16e6)));
  // user + system grew by 4 s, idle by 4 s, iowait not at all.
  EXPECT_THAT(r.cpu_busy_ratio, Optional(DoubleEq(0.5)));
  EXPECT_EQ(r.cpus, 8);
  EXPECT_THAT(r.memory_used_bytes, Optional(DoubleEq(16e6)));
  EXPECT_THAT(r.memory_total_bytes, Optional(DoubleEq(64e6)));
}

TEST(HostRatesTest, TheFirstSampleHasMemoryAndNamesButNoShareAndNoRates) {
  const auto r = host_rates(docker_host(kRatesT0, 1), nullptr);
  EXPECT_EQ(r.cpu_busy_ratio, std::nullopt);
  EXPECT_EQ(r.network_receive_bytes_per_second, std::nullopt);
  EXPECT_EQ(r.disk_read_bytes_per_second, std::nullopt);
  EXPECT_THAT(r.memory_used_bytes, Optional(DoubleEq(16e6)));
  EXPECT_THAT(r.interfaces, ElementsAre("eth0"));
  EXPECT_THAT(r.disks, ElementsAre("nvme0n1", "nvme1n1"));
}

// Inside a container every interface but lo is virtual (its end of a veth pair): those count.
TEST(HostRatesTest, WithoutAPhysicalInterfaceEveryOneButLoCounts) {
  power::HostSample before;
  before.time_unix_nanos = kRatesT0;
  before.net = {rates_nic("lo", 0, 0, false), rates_nic("eth0", kRatesMB, kRatesMB, false)};
  power::HostSample now = before;
  now.time_unix_nanos = kRatesT0 + kRatesSecond;
  now.net = {rates_nic("lo", 5 * kRatesMB, 5 * kRatesMB, false),
             rates_nic("eth0", 3 * kRatesMB, 2 * kRatesMB, false)};
  const auto r = host_rates(now, &before);
  EXPECT_THAT(r.interfaces, ElementsAre("eth0"));
  EXPECT_THAT(r.network_receive_bytes_per_second, Optional(DoubleEq(2e6)));
  EXPECT_THAT(r.network_transmit_bytes_per_second, Optional(DoubleEq(1e6)));
}

// /proc/net/dev of a container started with --network none: lo alone.
TEST(HostRatesTest, OnlyLoIsNoInterfaceAndNoRateRatherThanZero) {
  power::HostSample before;
  before.time_unix_nanos = kRatesT0;
  power::HostSample now;
  now.time_unix_nanos = kRatesT0 + kRatesSecond;
  const auto r = host_rates(now, &before);
  EXPECT_THAT(r.interfaces, IsEmpty());
  EXPECT_EQ(r.network_receive_bytes_per_second, std::nullopt);
  EXPECT_EQ(r.network_transmit_bytes_per_second, std::nullopt);
  EXPECT_THAT(r.disks, IsEmpty());
  EXPECT_EQ(r.disk_read_bytes_per_second, std::nullopt);
}

TEST(HostRatesTest, ACounterThatWentBackwardsOrANewDeviceIsLeftOutOfThatRound) {
  power::HostSample before;
  before.time_unix_nanos = kRatesT0;
  before.net = {rates_nic("eth0", 5 * kRatesMB, 5 * kRatesMB, true),
                rates_nic("eth1", kRatesMB, kRatesMB, true)};
  before.disks = {rates_disk("sda", 10 * kRatesMB, 10 * kRatesMB)};
  power::HostSample now = before;
  now.time_unix_nanos = kRatesT0 + kRatesSecond;
  now.net = {rates_nic("eth0", kRatesMB, kRatesMB, true),  // driver reloaded: counters reset
             rates_nic("eth1", 2 * kRatesMB, 3 * kRatesMB, true),
             rates_nic("eth2", 7 * kRatesMB, 7 * kRatesMB, true)};
  now.disks = {rates_disk("sda", 9 * kRatesMB, 11 * kRatesMB),
               rates_disk("sdb", kRatesMB, kRatesMB)};
  const auto r = host_rates(now, &before);
  EXPECT_THAT(r.network_receive_bytes_per_second, Optional(DoubleEq(1e6)));  // eth1 only
  EXPECT_THAT(r.network_transmit_bytes_per_second, Optional(DoubleEq(2e6)));
  EXPECT_EQ(r.disk_read_bytes_per_second, std::nullopt);  // sda went back, sdb is new
}

TEST(HostRatesTest, TheSameTimeTwiceGivesTheCpuShareButNoRate) {
  const auto before = docker_host(kRatesT0, 1);
  auto now = docker_host(kRatesT0, 3);
  const auto r = host_rates(now, &before);
  EXPECT_THAT(r.cpu_busy_ratio, Optional(DoubleEq(0.5)));
  EXPECT_EQ(r.network_receive_bytes_per_second, std::nullopt);
}

TEST(HostRatesTest, EachHostFieldIsFoundByNameAndReadsItsRate) {
  const auto before = docker_host(kRatesT0, 1);
  const auto r = host_rates(docker_host(kRatesT0 + kRatesSecond, 2), &before);
  ASSERT_EQ(host_fields().size(), 6U);
  const auto* rx = find_host_field("host_network_receive_bytes_per_second");
  ASSERT_NE(rx, nullptr);
  EXPECT_EQ(rx->unit, "bytes_per_second");
  EXPECT_THAT(r.*rx->value, Optional(DoubleEq(10e6)));
  const auto* busy = find_host_field("host_cpu_busy_ratio");
  ASSERT_NE(busy, nullptr);
  EXPECT_EQ(busy->unit, "ratio");
  EXPECT_EQ(find_host_field("power_watts"), nullptr);
}

}  // namespace
}  // namespace acco::monitor
