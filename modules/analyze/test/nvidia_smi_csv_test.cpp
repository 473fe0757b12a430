#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/analyze/recorded_readers.hpp"

namespace acco::analyze {
namespace {

using ::testing::ElementsAre;

// 2026-12-01 16:25:24 UTC
constexpr std::int64_t kT0 = 1'796'142'324'000'000'000;
constexpr std::int64_t kSecond = 1'000'000'000;

// nvidia-smi --query-gpu=timestamp,index,name,pci.bus_id,uuid,temperature.gpu,
//   temperature.memory,power.draw,power.limit,clocks.sm,clocks.mem,utilization.gpu,
//   utilization.memory,memory.used,memory.total,pstate,clocks_throttle_reasons.active
//   --format=csv -l 1   (two H100s, three rounds)
constexpr const char* kWithUnits =
    "timestamp, index, name, pci.bus_id, uuid, temperature.gpu, temperature.memory, "
    "power.draw [W], power.limit [W], clocks.current.sm [MHz], clocks.current.memory [MHz], "
    "utilization.gpu [%], utilization.memory [%], memory.used [MiB], memory.total [MiB], pstate, "
    "clocks_event_reasons.active\n"
    "2026/12/01 16:25:24.000, 0, NVIDIA H100 80GB HBM3, 00000000:18:00.0, "
    "GPU-8d1c0f4e-0000-0000-0000-000000000000, 45, 52, 85.32 W, 700.00 W, 1980 MHz, 2619 MHz, "
    "40 %, 12 %, 1024 MiB, 81559 MiB, P0, 0x0000000000000000\n"
    "2026/12/01 16:25:24.000, 1, NVIDIA H100 80GB HBM3, 00000000:3B:00.0, "
    "GPU-2f6b9a7c-0000-0000-0000-000000000000, 38, 44, 70.10 W, 700.00 W, 345 MHz, 2619 MHz, "
    "0 %, 0 %, 0 MiB, 81559 MiB, P0, 0x0000000000000001\n"
    "2026/12/01 16:25:25.000, 0, NVIDIA H100 80GB HBM3, 00000000:18:00.0, "
    "GPU-8d1c0f4e-0000-0000-0000-000000000000, 61, 70, 650.50 W, 700.00 W, 1755 MHz, 2619 MHz, "
    "100 %, 85 %, 70000 MiB, 81559 MiB, P0, 0x0000000000000004\n"
    "2026/12/01 16:25:25.000, 1, NVIDIA H100 80GB HBM3, 00000000:3B:00.0, "
    "GPU-2f6b9a7c-0000-0000-0000-000000000000, 38, 44, 70.20 W, 700.00 W, 345 MHz, 2619 MHz, "
    "0 %, 0 %, 0 MiB, 81559 MiB, P0, 0x0000000000000001\n"
    "2026/12/01 16:25:26.000, 0, NVIDIA H100 80GB HBM3, 00000000:18:00.0, "
    "GPU-8d1c0f4e-0000-0000-0000-000000000000, 66, 75, 699.90 W, 700.00 W, 1650 MHz, 2619 MHz, "
    "100 %, 90 %, 70000 MiB, 81559 MiB, P0, 0x0000000000000004\n"
    "2026/12/01 16:25:26.000, 1, NVIDIA H100 80GB HBM3, 00000000:3B:00.0, "
    "GPU-2f6b9a7c-0000-0000-0000-000000000000, 39, 44, 70.00 W, 700.00 W, 345 MHz, 2619 MHz, "
    "0 %, 0 %, 0 MiB, 81559 MiB, P0, 0x0000000000000001\n";

std::vector<Snapshot> read(const std::string& text) {
  auto r = read_nvidia_smi_csv(text, "run.csv");
  EXPECT_TRUE(r.has_value()) << r.error().message;
  return r.value_or(std::vector<Snapshot>{});
}

std::string error_of(const std::string& text) {
  const auto r = read_nvidia_smi_csv(text, "run.csv");
  EXPECT_FALSE(r.has_value());
  if (r.has_value()) {
    return "";
  }
  EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
  return r.error().message;
}

TEST(NvidiaSmiCsvTest, NamesAndIdsThatAreNotUtf8AreStoredEscapedAndUtf8AsIs) {
  const auto rounds = read(
      "timestamp, name, uuid, utilization.gpu [%]\n"
      "2026/12/01 16:25:24.000, H\xff\xfe, GPU-\x80, 100 %\n"
      "2026/12/01 16:25:25.000, H\xff\xfe, GPU-\x80, 100 %\n");
  ASSERT_EQ(rounds.size(), 2U);
  EXPECT_EQ(rounds[0].devices.at(0).model, "H\\xff\\xfe");
  EXPECT_EQ(rounds[0].devices.at(0).uuid, "GPU-\\x80");
  const auto utf8 = read(
      "timestamp, name, utilization.gpu [%]\n"
      "2026/12/01 16:25:24.000, Caf\xc3\xa9 \xe2\x84\xa2, 100 %\n");
  EXPECT_EQ(utf8.at(0).devices.at(0).model, "Caf\xc3\xa9 \xe2\x84\xa2");
}

TEST(NvidiaSmiCsvTest, TwoGpusThreeRoundsWithUnitsInCellsAreThreeSnapshotsInBaseUnits) {
  const auto rounds = read(kWithUnits);
  ASSERT_EQ(rounds.size(), 3U);
  EXPECT_EQ(rounds[0].time_unix_nanos, kT0);
  EXPECT_EQ(rounds[1].time_unix_nanos, kT0 + kSecond);
  EXPECT_EQ(rounds[2].time_unix_nanos, kT0 + 2 * kSecond);
  ASSERT_EQ(rounds[1].devices.size(), 2U);
  const auto& d = rounds[1].devices[0];
  EXPECT_EQ(d.device, "0");
  EXPECT_EQ(d.model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d.pci_bus_id, "0000:18:00.0");
  EXPECT_EQ(d.uuid, "GPU-8d1c0f4e-0000-0000-0000-000000000000");
  EXPECT_EQ(d.source, "nvidia-smi");
  EXPECT_EQ(d.time_unix_nanos, kT0 + kSecond);
  EXPECT_EQ(d.temperature_gpu_celsius, 61);
  EXPECT_EQ(d.temperature_memory_celsius, 70);
  EXPECT_DOUBLE_EQ(*d.power_watts, 650.5);
  EXPECT_DOUBLE_EQ(*d.power_limit_requested_watts, 700);
  EXPECT_DOUBLE_EQ(*d.sm_clock_hertz, 1755e6);
  EXPECT_DOUBLE_EQ(*d.memory_clock_hertz, 2619e6);
  EXPECT_DOUBLE_EQ(*d.utilization_ratio, 1.0);
  EXPECT_DOUBLE_EQ(*d.memory_utilization_ratio, 0.85);
  EXPECT_EQ(d.memory_used_bytes, 70000ULL << 20);
  EXPECT_EQ(d.memory_total_bytes, 81559ULL << 20);
  EXPECT_EQ(d.pstate, 0);
  EXPECT_EQ(d.clock_event_reasons, power::clock_event::kSwPowerCap);
  EXPECT_EQ(d.dropped_readings, 0);
  EXPECT_EQ(rounds[1].devices[1].device, "1");
  EXPECT_EQ(rounds[1].devices[1].pci_bus_id, "0000:3b:00.0");
  EXPECT_EQ(rounds[1].devices[1].clock_event_reasons, power::clock_event::kGpuIdle);
}

TEST(NvidiaSmiCsvTest, NounitsTakesTheUnitsFromTheHeader) {
  const auto rounds = read(
      "timestamp, index, power.draw [W], memory.used [MiB], clocks.max.sm [MHz], "
      "utilization.gpu [%]\n"
      "2026/12/01 16:25:24.123, 0, 85.32, 1024, 1980, 40\n");
  ASSERT_EQ(rounds.size(), 1U);
  EXPECT_EQ(rounds[0].time_unix_nanos, kT0 + 123'000'000);
  const auto& d = rounds[0].devices.at(0);
  EXPECT_DOUBLE_EQ(*d.power_watts, 85.32);
  EXPECT_EQ(d.memory_used_bytes, 1024ULL << 20);
  EXPECT_DOUBLE_EQ(*d.sm_clock_max_hertz, 1980e6);
  EXPECT_DOUBLE_EQ(*d.utilization_ratio, 0.4);
}

TEST(NvidiaSmiCsvTest, NotAvailableNotSupportedAndErrorCellsAreNulloptNeverANumber) {
  const auto rounds = read(
      "timestamp, index, temperature.memory, power.draw [W], power.draw.instant [W], "
      "clocks.sm [MHz], memory.used [MiB], pcie.link.gen.current, pstate\n"
      "2026/12/01 16:25:24.000, 0, [N/A], [Not Supported], N/A, [Unknown Error], , "
      "[Insufficient Permissions], [N/A]\n");
  const auto& d = rounds.at(0).devices.at(0);
  EXPECT_EQ(d.temperature_memory_celsius, std::nullopt);
  EXPECT_EQ(d.power_watts, std::nullopt);
  EXPECT_EQ(d.sm_clock_hertz, std::nullopt);
  EXPECT_EQ(d.memory_used_bytes, std::nullopt);
  EXPECT_EQ(d.pcie_gen_current, std::nullopt);
  EXPECT_EQ(d.pstate, std::nullopt);
  EXPECT_EQ(d.dropped_readings, 0);
  EXPECT_FALSE(d.lost);
}

TEST(NvidiaSmiCsvTest, ShuffledColumnOrderReadsTheSameValues) {
  const auto shuffled = read(
      "clocks_event_reasons.active, memory.total [MiB], utilization.memory [%], pstate, "
      "memory.used [MiB], utilization.gpu [%], clocks.current.memory [MHz], power.limit [W], "
      "clocks.current.sm [MHz], power.draw [W], temperature.memory, temperature.gpu, uuid, "
      "pci.bus_id, name, index, timestamp\n"
      "0x0000000000000004, 81559 MiB, 85 %, P0, 70000 MiB, 100 %, 2619 MHz, 700.00 W, 1755 MHz, "
      "650.50 W, 70, 61, GPU-8d1c0f4e-0000-0000-0000-000000000000, 00000000:18:00.0, "
      "NVIDIA H100 80GB HBM3, 0, 2026/12/01 16:25:25.000\n");
  const auto ordered = read(kWithUnits);
  ASSERT_EQ(shuffled.size(), 1U);
  EXPECT_EQ(shuffled[0].devices.at(0), ordered.at(1).devices.at(0));
}

TEST(NvidiaSmiCsvTest, PowerLimitsPcieAndMarginColumnsAreRead) {
  const auto rounds = read(
      "timestamp, index, enforced.power.limit [W], power.default_limit [W], "
      "power.min_limit [W], power.max_limit [W], pcie.link.gen.current, pcie.link.gen.max, "
      "pcie.link.width.current, pcie.link.width.max, temperature.gpu.tlimit, memory.free [MiB], "
      "clocks.max.mem [MHz], power.draw.average [W]\n"
      "2026/12/01 16:25:24.000, 0, 650.00 W, 700.00 W, 200.00 W, 700.00 W, 5, 5, 16, 16, 23, "
      "80535 MiB, 2619 MHz, 120.5 W\n");
  const auto& d = rounds.at(0).devices.at(0);
  EXPECT_EQ(d.power_limit_enforced_watts, 650);
  EXPECT_EQ(d.power_limit_default_watts, 700);
  EXPECT_EQ(d.power_limit_min_watts, 200);
  EXPECT_EQ(d.power_limit_max_watts, 700);
  EXPECT_EQ(d.pcie_gen_current, 5);
  EXPECT_EQ(d.pcie_gen_max, 5);
  EXPECT_EQ(d.pcie_width_current, 16);
  EXPECT_EQ(d.pcie_width_max, 16);
  EXPECT_EQ(d.thermal_margin_celsius, 23);
  EXPECT_EQ(d.memory_free_bytes, 80535ULL << 20);
  EXPECT_DOUBLE_EQ(*d.memory_clock_max_hertz, 2619e6);
  EXPECT_DOUBLE_EQ(*d.power_watts, 120.5);  // power.draw.average when power.draw is absent
}

TEST(NvidiaSmiCsvTest, ReasonColumnsCombineIntoTheBitmaskAndTheActiveMaskWins) {
  const auto bits = read(
      "index, clocks_throttle_reasons.sw_power_cap, clocks_throttle_reasons.hw_slowdown, "
      "clocks_throttle_reasons.sw_thermal_slowdown\n"
      "0, Active, Not Active, Active\n"
      "1, Not Active, Not Active, Not Active\n");
  ASSERT_EQ(bits.size(), 1U);
  EXPECT_EQ(bits[0].devices[0].clock_event_reasons,
            power::clock_event::kSwPowerCap | power::clock_event::kSwThermalSlowdown);
  EXPECT_EQ(bits[0].devices[1].clock_event_reasons, 0U);
  const auto mask = read(
      "index, clocks_event_reasons.sw_power_cap, clocks_event_reasons.active\n"
      "0, Active, 0x0000000000000008\n");
  EXPECT_EQ(mask.at(0).devices.at(0).clock_event_reasons, power::clock_event::kHwSlowdown);
}

TEST(NvidiaSmiCsvTest, WithoutTimestampEachRunOfDistinctIndicesIsOneRoundOneSecondApart) {
  const auto rounds = read(
      "index, power.draw [W]\n"
      "0, 100 W\n1, 101 W\n"
      "0, 200 W\n1, 201 W\n"
      "0, 300 W\n1, 301 W\n");
  ASSERT_EQ(rounds.size(), 3U);
  EXPECT_EQ(rounds[0].time_unix_nanos, 0);
  EXPECT_EQ(rounds[2].time_unix_nanos, 2 * kSecond);
  EXPECT_EQ(rounds[2].devices.size(), 2U);
  EXPECT_EQ(rounds[2].devices[1].power_watts, 301);
  EXPECT_EQ(rounds[2].devices[1].time_unix_nanos, 2 * kSecond);
}

TEST(NvidiaSmiCsvTest, WithoutAnIndexColumnGpusAreNumberedByUuidInOrderOfAppearance) {
  const auto rounds = read(
      "uuid, power.draw [W]\n"
      "GPU-b, 100 W\nGPU-a, 101 W\n"
      "GPU-b, 200 W\nGPU-a, 201 W\n");
  ASSERT_EQ(rounds.size(), 2U);
  EXPECT_EQ(rounds[1].devices[0].uuid, "GPU-b");
  EXPECT_EQ(rounds[1].devices[0].device, "0");
  EXPECT_EQ(rounds[1].devices[1].device, "1");
}

TEST(NvidiaSmiCsvTest, RowsStampedMillisecondsApartAreOneRound) {
  const auto rounds = read(
      "timestamp, index, power.draw [W]\n"
      "2026/12/01 16:25:24.001, 0, 100 W\n"
      "2026/12/01 16:25:24.004, 1, 101 W\n"
      "2026/12/01 16:25:25.002, 0, 200 W\n"
      "2026/12/01 16:25:25.006, 1, 201 W\n");
  ASSERT_EQ(rounds.size(), 2U);
  EXPECT_EQ(rounds[0].time_unix_nanos, kT0 + 1'000'000);
  EXPECT_EQ(rounds[0].devices[1].time_unix_nanos, kT0 + 4'000'000);
}

// nvidia-smi --query-gpu=timestamp,name,utilization.gpu,power.draw --format=csv -lms 15 on one
// GPU: no id column, a new timestamp every row.
std::string one_gpu_every_15_ms(int rows) {
  std::string text = "timestamp, name, utilization.gpu [%], power.draw [W]\n";
  for (int i = 0; i < rows; ++i) {
    const int ms = 15 * i;
    text += fmt::format("2026/12/01 16:25:{:02}.{:03}, NVIDIA H100 80GB HBM3, 97 %, 690.00 W\n",
                        24 + ms / 1000, ms % 1000);
  }
  return text;
}

TEST(NvidiaSmiCsvTest, OneGpuSampledEvery15MsWithoutAnIdColumnIsOneDevice) {
  std::vector<std::string> warnings;
  const auto r = read_nvidia_smi_csv(one_gpu_every_15_ms(200), "run.csv", warnings);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->size(), 200U);
  for (const auto& round : *r) {
    ASSERT_EQ(round.devices.size(), 1U);
    EXPECT_EQ(round.devices[0].device, "0");
  }
  EXPECT_EQ(r->at(1).time_unix_nanos - r->at(0).time_unix_nanos, 15'000'000);
  EXPECT_DOUBLE_EQ(r->at(0).stats.interval_seconds, 0.015);
  EXPECT_THAT(warnings, ElementsAre("run.csv: 1 GPU: no index, uuid or pci.bus_id column and the "
                                    "timestamps increase row by row, so every row is a new "
                                    "reading of one GPU"));
}

TEST(NvidiaSmiCsvTest, OneGpuWhoseMillisecondStampsNowAndThenCoincideIsStillOneDevice) {
  const auto rounds = read(
      "timestamp, utilization.gpu [%]\n"
      "2026/12/01 16:25:24.000, 90 %\n2026/12/01 16:25:24.001, 91 %\n"
      "2026/12/01 16:25:24.001, 92 %\n2026/12/01 16:25:24.002, 93 %\n"
      "2026/12/01 16:25:24.003, 94 %\n");
  ASSERT_EQ(rounds.size(), 5U);
  for (const auto& r : rounds) {
    ASSERT_EQ(r.devices.size(), 1U);
    EXPECT_EQ(r.devices[0].device, "0");
  }
}

TEST(NvidiaSmiCsvTest, AlternatingGpusWithoutAnIdAreToldApartBySerial) {
  std::vector<std::string> warnings;
  const auto r = read_nvidia_smi_csv(
      "timestamp, name, serial, memory.total [MiB], power.draw [W]\n"
      "2026/12/01 16:25:24.000, NVIDIA H100 80GB HBM3, 1650923000001, 81559 MiB, 100 W\n"
      "2026/12/01 16:25:24.000, NVIDIA H100 80GB HBM3, 1650923000002, 81559 MiB, 600 W\n"
      "2026/12/01 16:25:25.000, NVIDIA H100 80GB HBM3, 1650923000001, 81559 MiB, 101 W\n"
      "2026/12/01 16:25:25.000, NVIDIA H100 80GB HBM3, 1650923000002, 81559 MiB, 601 W\n",
      "run.csv", warnings);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->size(), 2U);
  ASSERT_EQ(r->at(1).devices.size(), 2U);
  EXPECT_EQ(r->at(1).devices[0].power_watts, 101);
  EXPECT_EQ(r->at(1).devices[1].power_watts, 601);
  EXPECT_EQ(r->at(1).devices[1].device, "1");
  EXPECT_THAT(warnings, ElementsAre("run.csv: 2 GPU(s) told apart by name, serial, memory.total "
                                    "(no index, uuid or pci.bus_id column; numbered in order of "
                                    "first appearance)"));
}

TEST(NvidiaSmiCsvTest, AlternatingGpusOfDifferentModelsWithoutTimestampsAreToldApartByName) {
  const auto rounds = read(
      "name, memory.total [MiB], power.draw [W]\n"
      "NVIDIA A100-SXM4-40GB, 40960 MiB, 100 W\nNVIDIA H100 80GB HBM3, 81559 MiB, 600 W\n"
      "NVIDIA A100-SXM4-40GB, 40960 MiB, 110 W\nNVIDIA H100 80GB HBM3, 81559 MiB, 610 W\n");
  ASSERT_EQ(rounds.size(), 2U);
  EXPECT_EQ(rounds[1].time_unix_nanos, kSecond);
  EXPECT_EQ(rounds[1].devices.at(1).model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(rounds[1].devices.at(1).power_watts, 610);
}

TEST(NvidiaSmiCsvTest, IdenticalGpusWithoutAnIdAreToldApartByTheirSharedTimestamp) {
  std::vector<std::string> warnings;
  const auto r = read_nvidia_smi_csv(
      "timestamp, name, power.draw [W]\n"
      "2026/12/01 16:25:24.000, NVIDIA H100 80GB HBM3, 100 W\n"
      "2026/12/01 16:25:24.000, NVIDIA H100 80GB HBM3, 600 W\n"
      "2026/12/01 16:25:25.000, NVIDIA H100 80GB HBM3, 101 W\n"
      "2026/12/01 16:25:25.000, NVIDIA H100 80GB HBM3, 601 W\n",
      "run.csv", warnings);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->size(), 2U);
  EXPECT_EQ(r->at(1).devices.at(1).power_watts, 601);
  EXPECT_DOUBLE_EQ(r->at(1).stats.interval_seconds, 1.0);
  EXPECT_THAT(warnings, ElementsAre(::testing::HasSubstr("2 GPU(s) told apart by timestamps")));
}

TEST(NvidiaSmiCsvTest, QuotedCellsCrlfLineEndsAndARepeatedHeaderAreRead) {
  const auto rounds = read(
      "\xEF\xBB\xBFtimestamp,index,name,power.draw [W]\r\n"
      "2026/12/01 16:25:24.000,0,\"NVIDIA \"\"H100\"\", 80GB\",85.32 W\r\n"
      "timestamp,index,name,power.draw [W]\r\n"
      "2026/12/01 16:25:25.000,  0 ,  \"NVIDIA H100\" , 90 W\r\n");
  ASSERT_EQ(rounds.size(), 2U);
  EXPECT_EQ(rounds[0].devices[0].model, "NVIDIA \"H100\", 80GB");
  EXPECT_DOUBLE_EQ(*rounds[0].devices[0].power_watts, 85.32);
  EXPECT_EQ(rounds[1].devices[0].model, "NVIDIA H100");
  EXPECT_EQ(rounds[1].devices[0].power_watts, 90);
}

TEST(NvidiaSmiCsvTest, UnknownColumnsAreIgnoredAndNamedOnceInTheWarnings) {
  std::vector<std::string> warnings;
  const auto r = read_nvidia_smi_csv(
      "index, fan.speed [%], power.draw [W], driver_version\n0, 30 %, 85 W, 550.54.15\n", "run.csv",
      warnings);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->at(0).devices.at(0).power_watts, 85);
  EXPECT_THAT(warnings, ElementsAre("run.csv: column fan.speed is not read",
                                    "run.csv: column driver_version is not read",
                                    "run.csv: 1 GPU(s) told apart by the index column",
                                    "run.csv: no timestamp column: rounds counted 1 s apart"));
}

TEST(NvidiaSmiCsvTest, GpuIsLostCellsMarkTheDeviceLost) {
  const auto rounds = read("index, power.draw [W]\n0, [GPU is lost]\n");
  EXPECT_TRUE(rounds.at(0).devices.at(0).lost);
  EXPECT_EQ(rounds.at(0).devices.at(0).power_watts, std::nullopt);
}

TEST(NvidiaSmiCsvTest, UtilizationAboveOneHundredPercentIsDroppedAndCounted) {
  const auto rounds = read("index, utilization.gpu [%], power.draw [W]\n0, 255 %, -1 W\n");
  const auto& d = rounds.at(0).devices.at(0);
  EXPECT_EQ(d.utilization_ratio, std::nullopt);
  EXPECT_EQ(d.power_watts, std::nullopt);
  EXPECT_EQ(d.dropped_readings, 2);
}

TEST(NvidiaSmiCsvTest, NoheaderLogIsRejectedNamingTheFileAndLine) {
  EXPECT_EQ(error_of("\n2026/12/01 16:25:24.123, 0, NVIDIA H100 80GB HBM3, 85.32 W\n"),
            "run.csv:2: not an nvidia-smi --format=csv header ('2026/12/01 16:25:24.123' is not "
            "a query field name); logs written with noheader cannot be read because their "
            "columns are unknown");
}

TEST(NvidiaSmiCsvTest, HeaderOfAnotherToolIsRejected) {
  EXPECT_EQ(error_of("Time,GPU Power\n1,2\n"),
            "run.csv:1: not an nvidia-smi --format=csv header ('Time' is not a query field "
            "name); logs written with noheader cannot be read because their columns are "
            "unknown");
  EXPECT_EQ(error_of("foo, bar\n1, 2\n"),
            "run.csv:1: not an nvidia-smi --format=csv header (no column acco reads); logs "
            "written with noheader cannot be read because their columns are unknown");
}

TEST(NvidiaSmiCsvTest, HeaderWithoutTimestampOrGpuIdentityIsRejected) {
  EXPECT_EQ(error_of("power.draw [W]\n85 W\n"),
            "run.csv:1: needs a timestamp, index, uuid, pci.bus_id, name, serial or memory.total "
            "column to tell the rounds and GPUs apart");
}

TEST(NvidiaSmiCsvTest, RowWithTheWrongNumberOfCellsIsRejected) {
  EXPECT_EQ(error_of("timestamp, index, name, pci.bus_id, uuid, temperature.gpu, power.draw [W], "
                     "memory.used [MiB]\n"
                     "2026/12/01 16:25:24.000, 0, H100, 00000000:18:00.0, GPU-a, 45, 85 W, 0 MiB\n"
                     "2026/12/01 16:25:25.000, 0, H100, 00000000:18:00.0, GPU-a\n"),
            "run.csv:3: expected 8 cells, got 5");
}

TEST(NvidiaSmiCsvTest, UnreadableCellsAreRejectedNamingLineAndColumn) {
  EXPECT_EQ(error_of("index, power.draw [W]\n0, 85 MHz\n"),
            "run.csv:2: power.draw: cannot read '85 MHz' as watts");
  EXPECT_EQ(error_of("index, power.draw [W]\n0, hot\n"),
            "run.csv:2: power.draw: cannot read 'hot' as watts");
  EXPECT_EQ(error_of("timestamp, index\n01.12.2026 16:25, 0\n"),
            "run.csv:2: timestamp: cannot read '01.12.2026 16:25' as a timestamp like 2026/12/01 "
            "16:25:24.123");
  // Years whose nanoseconds overflow used to be read as other dates (2999 as 1830).
  EXPECT_EQ(error_of("timestamp, index\n2999/01/01 00:00:00.000, 0\n"),
            "run.csv:2: timestamp: cannot read '2999/01/01 00:00:00.000' as a timestamp like "
            "2026/12/01 16:25:24.123");
  EXPECT_EQ(error_of("index, pstate\n0, fast\n"),
            "run.csv:2: pstate: cannot read 'fast' as a performance state P0-P15");
  EXPECT_EQ(error_of("index, clocks_event_reasons.sw_power_cap\n0, maybe\n"),
            "run.csv:2: clocks_event_reasons.sw_power_cap: cannot read 'maybe' as Active or Not "
            "Active");
  EXPECT_EQ(error_of("index, name\n0, \"H100\n"), "run.csv:2: unbalanced quotes");
  EXPECT_EQ(error_of("index\nzero\n"), "run.csv:2: index: cannot read 'zero' as a GPU index");
}

TEST(NvidiaSmiCsvTest, AHeaderWithoutRowsIsRejectedAsAnEmptyFileIs) {
  EXPECT_EQ(error_of("timestamp, index, utilization.gpu [%]\n"),
            "run.csv: the file has a header and no rows");
}

TEST(NvidiaSmiCsvTest, HugeMemoryAndPowerAreDroppedAndAZeroPowerLimitIsAbsent) {
  const auto rounds = read(
      "index, memory.used [MiB], power.draw [W], power.limit [W]\n"
      "0, 1e300 MiB, 1e308 W, 0.00 W\n"
      "0, 10 MiB, 10001 W, 700.00 W\n");
  ASSERT_EQ(rounds.size(), 2U);
  const auto& a = rounds[0].devices.at(0);
  EXPECT_FALSE(a.memory_used_bytes);
  EXPECT_FALSE(a.power_watts);
  EXPECT_FALSE(a.power_limit_requested_watts);
  EXPECT_EQ(a.dropped_readings, 2U);
  const auto& b = rounds[1].devices.at(0);
  EXPECT_EQ(b.memory_used_bytes, 10U * 1048576U);
  EXPECT_FALSE(b.power_watts);  // above 10 kW
  EXPECT_EQ(b.power_limit_requested_watts, 700);
}

TEST(NvidiaSmiCsvTest, OneGpuWhoseTimestampsGoBackSaysSo) {
  std::vector<std::string> warnings;
  const auto r = read_nvidia_smi_csv(
      "timestamp, name, utilization.gpu [%]\n"
      "2026/12/01 16:00:05.000, H100, 100 %\n"
      "2026/12/01 16:00:00.000, H100, 100 %\n"
      "2026/12/01 15:00:00.000, H100, 50 %\n",
      "run.csv", warnings);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_THAT(warnings, ::testing::Contains(
                            "run.csv: 1 GPU: no index, uuid or pci.bus_id column and the rows' "
                            "timestamps differ, so every row is a new reading of one GPU; the "
                            "timestamps go backwards 2 time(s), the rows are taken in time order"));
}

TEST(NvidiaSmiCsvTest, EmptyFileIsRejected) {
  EXPECT_EQ(error_of(""), "run.csv: empty; expected an nvidia-smi --format=csv header");
  EXPECT_EQ(error_of("\r\n\n"), "run.csv: empty; expected an nvidia-smi --format=csv header");
}

}  // namespace
}  // namespace acco::analyze
