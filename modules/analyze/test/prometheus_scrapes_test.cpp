#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/analyze/recorded_readers.hpp"

namespace acco::analyze {
namespace {

using ::testing::ElementsAre;

constexpr std::int64_t kSecond = 1'000'000'000;

std::string dcgm_labels(int gpu) {
  return "gpu=\"" + std::to_string(gpu) + "\",UUID=\"GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e5" +
         std::to_string(gpu) + "\",pci_bus_id=\"00000000:00:1" + std::to_string(gpu) +
         ".0\",device=\"nvidia" + std::to_string(gpu) +
         "\",modelName=\"Tesla T4\",Hostname=\"ip-172-31-13-141\"";
}

// Shaped like dcgm-exporter's README example, with its leaked NOT_SUPPORTED memory temperature.
std::string dcgm_scrape(int gpus, double power) {
  std::string out;
  const auto family = [&](const char* name, const char* type, const char* help,
                          const std::string& value) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
    for (int g = 0; g < gpus; ++g) {
      out += std::string(name) + "{" + dcgm_labels(g) + "} " + value + "\n";
    }
  };
  family("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", "1590");
  family("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", "5000");
  family("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).", "9223372036854775794");
  family("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", "51");
  family("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", std::to_string(power));
  family("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",
         "Total energy consumption since boot (in mJ).", "1234567890");
  family("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries.", "3");
  family("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", "87");
  family("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).", "42");
  family("DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %).", "0");
  family("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", "14914");
  family("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", "194");
  family("DCGM_FI_DEV_POWER_MGMT_LIMIT", "gauge", "Power management limit (in W).", "70");
  family("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "gauge", "Clock throttle reasons.", "4");
  family("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active.",
         "0.81");
  family("DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", "PCIe tx (in B/s).", "1000000");
  family("DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", "PCIe rx (in B/s).", "12600000000");
  return out;
}

std::vector<Snapshot> read(const std::string& text) {
  auto r = read_prometheus_scrapes(text, "scrape.prom");
  EXPECT_TRUE(r.has_value()) << r.error().message;
  return r.value_or(std::vector<Snapshot>{});
}

std::string error_of(const std::string& text) {
  const auto r = read_prometheus_scrapes(text, "scrape.prom");
  EXPECT_FALSE(r.has_value()) << text;
  if (r.has_value()) {
    return "";
  }
  EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
  return r.error().message;
}

TEST(PrometheusScrapesTest, DcgmExporterScrapeIsReadInBaseUnitsAndItsSentinelIsDropped) {
  const auto scrapes = read(dcgm_scrape(1, 27.5));
  ASSERT_EQ(scrapes.size(), 1U);
  EXPECT_EQ(scrapes[0].time_unix_nanos, 0);
  ASSERT_EQ(scrapes[0].devices.size(), 1U);
  const auto& d = scrapes[0].devices[0];
  EXPECT_EQ(d.device, "0");
  EXPECT_EQ(d.uuid, "GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e50");
  EXPECT_EQ(d.pci_bus_id, "0000:00:10.0");
  EXPECT_EQ(d.model, "Tesla T4");
  EXPECT_EQ(d.source, "dcgm-exporter");
  EXPECT_DOUBLE_EQ(*d.sm_clock_hertz, 1590e6);
  EXPECT_DOUBLE_EQ(*d.memory_clock_hertz, 5000e6);
  EXPECT_EQ(d.temperature_memory_celsius, std::nullopt);
  EXPECT_EQ(d.temperature_gpu_celsius, 51);
  EXPECT_DOUBLE_EQ(*d.power_watts, 27.5);
  EXPECT_DOUBLE_EQ(*d.energy_joules, 1234567.89);
  EXPECT_EQ(d.pcie_replays, 3U);
  EXPECT_DOUBLE_EQ(*d.utilization_ratio, 0.87);
  EXPECT_DOUBLE_EQ(*d.memory_utilization_ratio, 0.42);
  EXPECT_EQ(d.memory_free_bytes, 14914ULL << 20);
  EXPECT_EQ(d.memory_used_bytes, 194ULL << 20);
  EXPECT_EQ(d.power_limit_requested_watts, 70);
  EXPECT_EQ(d.clock_event_reasons, power::clock_event::kSwPowerCap);
  EXPECT_EQ(d.pcie_tx_bytes_per_second, 1e6);
  EXPECT_EQ(d.pcie_rx_bytes_per_second, 12.6e9);
  EXPECT_EQ(d.dropped_readings, 1);
}

TEST(PrometheusScrapesTest, TwoConcatenatedScrapesAreTwoSnapshotsOneSecondApart) {
  const auto scrapes = read(dcgm_scrape(2, 27.5) + dcgm_scrape(2, 65.25));
  ASSERT_EQ(scrapes.size(), 2U);
  EXPECT_EQ(scrapes[0].time_unix_nanos, 0);
  EXPECT_EQ(scrapes[1].time_unix_nanos, kSecond);
  ASSERT_EQ(scrapes[1].devices.size(), 2U);
  EXPECT_EQ(scrapes[1].devices[1].device, "1");
  EXPECT_EQ(scrapes[1].devices[1].pci_bus_id, "0000:00:11.0");
  EXPECT_DOUBLE_EQ(*scrapes[0].devices[1].power_watts, 27.5);
  EXPECT_DOUBLE_EQ(*scrapes[1].devices[1].power_watts, 65.25);
  EXPECT_EQ(scrapes[1].devices[1].time_unix_nanos, kSecond);
}

TEST(PrometheusScrapesTest, AccoScrapeCommentsStartScrapesAndSetTheirTime) {
  const auto scrapes =
      read("# acco-scrape 1796142324000\n" + dcgm_scrape(1, 10) +
           "\n# acco-scrape 1796142326500\n" + "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 20\n");
  ASSERT_EQ(scrapes.size(), 2U);
  EXPECT_EQ(scrapes[0].time_unix_nanos, 1'796'142'324'000'000'000);
  EXPECT_EQ(scrapes[1].time_unix_nanos, 1'796'142'326'500'000'000);
  EXPECT_EQ(scrapes[1].devices.at(0).power_watts, 20);
}

TEST(PrometheusScrapesTest, SampleTimestampsSplitScrapesAndSetTheirTime) {
  const auto scrapes = read(
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 10 1796142324000\n"
      "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"} 40 1796142324000\n"
      "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"} 41 1796142325000\n");
  ASSERT_EQ(scrapes.size(), 2U);
  EXPECT_EQ(scrapes[0].time_unix_nanos, 1'796'142'324'000'000'000);
  EXPECT_EQ(scrapes[0].devices.at(0).power_watts, 10);
  EXPECT_EQ(scrapes[1].time_unix_nanos, 1'796'142'325'000'000'000);
  EXPECT_EQ(scrapes[1].devices.at(0).temperature_gpu_celsius, 41);
  EXPECT_EQ(scrapes[1].devices.at(0).power_watts, std::nullopt);
}

TEST(PrometheusScrapesTest, EveryDcgmSentinelAndOutOfRangeValueIsDroppedAndCounted) {
  const auto scrapes = read(
      "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"} 9223372036854775792\n"
      "DCGM_FI_DEV_MEMORY_TEMP{gpu=\"0\"} 1e16\n"
      "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\"} 4294967295\n"
      "DCGM_FI_DEV_MEM_CLOCK{gpu=\"0\"} 2147483634\n"
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 140737488355330\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 9.223372036854776e+18\n"
      "DCGM_FI_DEV_MEM_COPY_UTIL{gpu=\"0\"} NaN\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"0\"} 9223372036854775795\n"
      "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\"} 9223372036854775793\n"
      "DCGM_FI_DEV_PCIE_REPLAY_COUNTER{gpu=\"0\"} +Inf\n"
      "DCGM_FI_DEV_FB_FREE{gpu=\"0\"} 100\n");
  const auto& d = scrapes.at(0).devices.at(0);
  EXPECT_EQ(d.dropped_readings, 10);
  EXPECT_EQ(d.temperature_gpu_celsius, std::nullopt);
  EXPECT_EQ(d.temperature_memory_celsius, std::nullopt);
  EXPECT_EQ(d.sm_clock_hertz, std::nullopt);
  EXPECT_EQ(d.memory_clock_hertz, std::nullopt);
  EXPECT_EQ(d.power_watts, std::nullopt);
  EXPECT_EQ(d.utilization_ratio, std::nullopt);
  EXPECT_EQ(d.memory_utilization_ratio, std::nullopt);
  EXPECT_EQ(d.memory_used_bytes, std::nullopt);
  EXPECT_EQ(d.energy_joules, std::nullopt);
  EXPECT_EQ(d.pcie_replays, std::nullopt);
  EXPECT_EQ(d.memory_free_bytes, 100ULL << 20);
}

// A utilization of acco's own series outside 0-1 (1e308 printed "inf%" in acco analyze).
TEST(PrometheusScrapesTest, AccoUtilizationOutsideZeroToOneIsDroppedAndCounted) {
  const auto scrapes = read(
      "acco_gpu_utilization_ratio{device=\"0\"} 1e308\n"
      "acco_gpu_memory_utilization_ratio{device=\"0\"} -0.5\n"
      "acco_gpu_power_watts{device=\"0\"} 10\n");
  const auto& d = scrapes.at(0).devices.at(0);
  EXPECT_EQ(d.dropped_readings, 2);
  EXPECT_EQ(d.utilization_ratio, std::nullopt);
  EXPECT_EQ(d.memory_utilization_ratio, std::nullopt);
  EXPECT_EQ(d.power_watts, 10);
}

TEST(PrometheusScrapesTest, LabelEscapesAreUnescapedAndBlanksAreAllowed) {
  const auto scrapes =
      read("acco_gpu_power_watts { device = \"0\" , model=\"a \\\"b\\\" \\\\ c\\nd\", } \t 12.5\n");
  const auto& d = scrapes.at(0).devices.at(0);
  EXPECT_EQ(d.model, "a \"b\" \\ c\nd");
  EXPECT_EQ(d.power_watts, 12.5);
}

TEST(PrometheusScrapesTest, LabelValuesThatAreNotUtf8AreStoredEscaped) {
  const auto scrapes = read("acco_gpu_power_watts{device=\"0\",model=\"H\xff\xfe\"} 12.5\n");
  EXPECT_EQ(scrapes.at(0).devices.at(0).model, "H\\xff\\xfe");
}

// dcgm-exporter with only the profiling fields collected on a MIG GPU: every series is an
// instance's, yet the physical GPU is there, its own readings unknown, its instances under it.
TEST(PrometheusScrapesTest, InstanceSeriesAloneStillMakeTheirPhysicalGpu) {
  std::vector<std::string> warnings;
  std::map<std::string, std::vector<std::string>> instances;
  const auto r = read_prometheus_scrapes(
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",UUID=\"GPU-a\",GPU_I_ID=\"1\","
      "GPU_I_PROFILE=\"1g.10gb\",Hostname=\"h\"} 0.5\n"
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",UUID=\"GPU-a\",GPU_I_ID=\"2\","
      "GPU_I_PROFILE=\"1g.10gb\",Hostname=\"h\"} 0.9\n",
      "mig.prom", warnings, instances);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->size(), 1U);
  ASSERT_EQ(r->at(0).devices.size(), 1U);
  const auto& d = r->at(0).devices[0];
  EXPECT_EQ(d.device, "0");
  EXPECT_EQ(d.uuid, "GPU-a");
  EXPECT_EQ(d.source, "dcgm-exporter");
  EXPECT_FALSE(d.utilization_ratio);
  EXPECT_EQ(instances.at("0").size(), 2U);
}

TEST(PrometheusScrapesTest, PowerAboveTenKilowattsIsDroppedAndAZeroLimitIsAbsent) {
  const auto acco = read(
      "acco_gpu_power_watts{device=\"0\"} 1e308\n"
      "acco_gpu_power_limit_watts{device=\"0\",kind=\"enforced\"} 0\n");
  const auto& a = acco.at(0).devices.at(0);
  EXPECT_FALSE(a.power_watts);
  EXPECT_FALSE(a.power_limit_enforced_watts);
  EXPECT_EQ(a.dropped_readings, 1U);
  const auto dcgm = read("DCGM_FI_DEV_POWER_USAGE{" + dcgm_labels(1) + "} 20000\n" +
                         "DCGM_FI_DEV_POWER_MGMT_LIMIT{" + dcgm_labels(1) + "} 0\n");
  const auto& b = dcgm.at(0).devices.at(0);
  EXPECT_FALSE(b.power_watts);
  EXPECT_FALSE(b.power_limit_requested_watts);
  EXPECT_EQ(b.dropped_readings, 1U);
}

TEST(PrometheusScrapesTest, UnreadDcgmFieldsAndSeriesWithoutAGpuLabelAreNamedOnce) {
  std::vector<std::string> warnings;
  const auto r = read_prometheus_scrapes(
      dcgm_scrape(2, 1) + "DCGM_FI_DEV_GPU_TEMP 40\n" + "go_goroutines 12\n", "scrape.prom",
      warnings);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_THAT(warnings, ElementsAre("scrape.prom: DCGM_FI_DEV_ENC_UTIL is not read",
                                    "scrape.prom: DCGM_FI_PROF_GR_ENGINE_ACTIVE is not read",
                                    "scrape.prom: DCGM_FI_DEV_GPU_TEMP without a gpu label is "
                                    "not read"));
}

// dcgm-exporter on two A100s in MIG mode, two 3g.40gb instances each: every series has
// GPU_I_ID and GPU_I_PROFILE labels and there is no DCGM_FI_DEV_GPU_UTIL.
std::string mig_scrape(double active0) {
  std::string out;
  for (int gpu = 0; gpu < 2; ++gpu) {
    for (int instance = 1; instance <= 2; ++instance) {
      const std::string labels = fmt::format(
          "gpu=\"{}\",UUID=\"GPU-a{}\",pci_bus_id=\"00000000:0{}:00.0\",device=\"nvidia{}\","
          "modelName=\"NVIDIA A100-SXM4-80GB\",GPU_I_PROFILE=\"3g.40gb\",GPU_I_ID=\"{}\"",
          gpu, gpu, gpu + 7, gpu, instance);
      out += fmt::format("DCGM_FI_DEV_GPU_TEMP{{{}}} {}\n", labels, 40 + gpu);
      out += fmt::format("DCGM_FI_DEV_POWER_USAGE{{{}}} {}\n", labels, 250 + gpu);
      out += fmt::format("DCGM_FI_DEV_POWER_MGMT_LIMIT{{{}}} 400\n", labels);
      out += fmt::format("DCGM_FI_DEV_SM_CLOCK{{{}}} 1410\n", labels);
      out += fmt::format("DCGM_FI_DEV_FB_USED{{{}}} {}\n", labels, 1000 * instance);
      out += fmt::format("DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{}}} {}\n", labels,
                         instance == 1 ? active0 : 0.0);
    }
  }
  return out;
}

TEST(PrometheusScrapesTest, MigScrapeIsOneDevicePerPhysicalGpuWithItsInstances) {
  std::vector<std::string> warnings;
  std::map<std::string, std::vector<std::string>> instances;
  const auto r =
      read_prometheus_scrapes(mig_scrape(0.5) + mig_scrape(1.0), "mig.prom", warnings, instances);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->size(), 2U);
  ASSERT_EQ(r->at(1).devices.size(), 2U);
  const auto& d1 = r->at(1).devices[1];
  EXPECT_EQ(d1.device, "1");
  EXPECT_EQ(d1.uuid, "GPU-a1");
  EXPECT_EQ(d1.power_watts, 251);
  EXPECT_EQ(d1.power_limit_requested_watts, 400);
  EXPECT_EQ(d1.sm_clock_hertz, 1410e6);
  EXPECT_EQ(d1.utilization_ratio, std::nullopt);  // not reported per GPU in MIG mode
  EXPECT_EQ(d1.memory_used_bytes, std::nullopt);  // the instances' own
  EXPECT_THAT(instances.at("0"),
              ElementsAre("1 (3g.40gb): graphics engine active 75% (mean of 2 reading(s)), 1000 "
                          "MiB used (last)",
                          "2 (3g.40gb): graphics engine active 0% (mean of 2 reading(s)), 2000 "
                          "MiB used (last)"));
  EXPECT_EQ(instances.size(), 2U);
  EXPECT_THAT(warnings, ::testing::IsEmpty());
}

TEST(PrometheusScrapesTest, AGpuWithOnlyAPowerLimitAndAReplayCounterHasNoOtherReading) {
  const auto r = read_prometheus_scrapes(
      "DCGM_FI_DEV_POWER_MGMT_LIMIT{gpu=\"0\"} 700\n"
      "DCGM_FI_DEV_PCIE_REPLAY_COUNTER{gpu=\"0\"} 0\n",
      "scrape.prom");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const auto& d = r->at(0).devices.at(0);
  EXPECT_EQ(d.power_limit_requested_watts, 700);
  EXPECT_EQ(d.utilization_ratio, std::nullopt);
  EXPECT_EQ(d.power_watts, std::nullopt);
  EXPECT_EQ(d.pcie_rx_bytes_per_second, std::nullopt);
}

TEST(PrometheusScrapesTest, AccoValuesWinOverDcgmValuesForTheSameDevice) {
  const auto scrapes = read(
      "DCGM_FI_DEV_FB_USED{gpu=\"0\"} 1\n"
      "acco_gpu_memory_bytes{device=\"0\",state=\"used\"} 1048577\n"
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 10\n"
      "acco_gpu_power_watts{device=\"0\"} 10.125\n"
      "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"} 50\n");
  ASSERT_EQ(scrapes.at(0).devices.size(), 1U);
  const auto& d = scrapes[0].devices[0];
  EXPECT_EQ(d.memory_used_bytes, 1048577U);
  EXPECT_EQ(d.power_watts, 10.125);
  EXPECT_EQ(d.temperature_gpu_celsius, 50);
}

TEST(PrometheusScrapesTest, AScrapeWithoutDevicesIsAMomentWithNone) {
  const auto scrapes = read("# HELP up fine\n# TYPE up gauge\nup 1\nup 1\n");
  ASSERT_EQ(scrapes.size(), 2U);
  EXPECT_TRUE(scrapes[1].devices.empty());
  EXPECT_TRUE(read("# just a comment\n\n").empty());
}

TEST(PrometheusScrapesTest, MalformedLinesAreRejectedNamingTheFileAndLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"up 1\n{gpu=\"0\"} 1\n", "scrape.prom:2: expected a metric name, got '{gpu=\"0\"} 1'"},
      {"up\n", "scrape.prom:1: up: no value"},
      {"up{gpu=\"0\"}1\n", "scrape.prom:1: up: unexpected '1' after the name"},
      {"up{gpu=\"0} 1\n", "scrape.prom:1: label 'gpu': value is not closed by '\"'"},
      {"up{gpu=0} 1\n", "scrape.prom:1: expected '\"' to open the value of label 'gpu'"},
      {"up{gpu} 1\n", "scrape.prom:1: expected '=' after label name 'gpu'"},
      {"up{gpu=\"\\t\"} 1\n",
       "scrape.prom:1: label 'gpu': unknown escape '\\t' (only \\\\, \\\" and \\n)"},
      {"up{gpu=\"0\" x=\"1\"} 1\n",
       "scrape.prom:1: expected ',' or '}' after the value of label 'gpu'"},
      {"up{gpu=\"0\",gpu=\"1\"} 1\n", "scrape.prom:1: label 'gpu' appears twice"},
      {"up{1=\"0\"} 1\n", "scrape.prom:1: expected a label name or '}' at column 4"},
      {"up one\n", "scrape.prom:1: up: cannot parse 'one' as a value"},
      {"up 1 soon\n", "scrape.prom:1: up: cannot parse 'soon' as a timestamp in unix milliseconds"},
      {"up 1 9223372036854775807\n",  // the nanoseconds would overflow
       "scrape.prom:1: up: cannot parse '9223372036854775807' as a timestamp in unix "
       "milliseconds"},
      {"up 1 -5\n", "scrape.prom:1: up: cannot parse '-5' as a timestamp in unix milliseconds"},
      {"up 1 1000 x\n", "scrape.prom:1: up: unexpected 'x' after the timestamp"},
      {"# TYPE up meter\n", "scrape.prom:1: # TYPE up: unknown type 'meter'"},
      {"# HELP\n", "scrape.prom:1: # HELP: expected a metric name"},
      {"\n# acco-scrape yesterday\n",
       "scrape.prom:2: # acco-scrape: expected unix milliseconds, got 'yesterday'"},
      {"# acco-scrape 9223372036854775807\n",  // was read as 1970 (the nanoseconds overflowed)
       "scrape.prom:1: # acco-scrape: expected unix milliseconds, got '9223372036854775807'"},
  };
  for (const auto& [text, message] : cases) {
    EXPECT_EQ(error_of(text), message);
  }
}

}  // namespace
}  // namespace acco::analyze
