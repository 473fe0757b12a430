#include "acco/power/nvml_sensor.hpp"

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "acco/core/fs.hpp"
#include "acco/core/json.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::power {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using nlohmann::json;

const std::string kFake = ACCO_FAKE_NVML_PATH;
const std::string kFakeRequiredOnly = ACCO_FAKE_NVML_REQUIRED_ONLY_PATH;
const std::string kFakeLegacy = ACCO_FAKE_NVML_LEGACY_PATH;
const std::string kDataDir = ACCO_NVML_TEST_DATA_DIR;

json telemetry_config() {
  auto config = core::read_json_file(kDataDir + "/telemetry.json");
  EXPECT_THAT(config, IsOk());
  return config.value_or(json::object());
}

// Points the fake at `config`, written to a file of its own so every test sees only its own.
void use_config(const json& config) {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string path = ::testing::TempDir() + "fake_nvml_power_" + test->name() + ".json";
  std::ofstream(path) << config.dump(2);
  ::setenv("ACCO_FAKE_NVML_CONFIG", path.c_str(), 1);
}

// A sysfs where every GPU is awake unless named here with its runtime_status.
core::ReplayFs runtime_status(const std::map<std::string, std::string>& statuses = {}) {
  core::FsRecord record;
  for (const auto& [pci, status] : statuses) {
    core::FsRecord::Answer answer;
    answer.ok = true;
    answer.value = status + "\n";
    record.files["/sys/bus/pci/devices/" + pci + "/power/runtime_status"] = answer;
  }
  return core::ReplayFs(record);
}

std::unique_ptr<SensorSource> open_source(const core::Fs& fs, const json& config,
                                          const std::string& library = kFake) {
  use_config(config);
  Result<std::unique_ptr<SensorSource>> source = make_nvml_source(fs, library);
  EXPECT_THAT(source, IsOk());
  return source.has_value() ? std::move(*source) : nullptr;
}

std::vector<DeviceSample> read_ok(SensorSource& source) {
  Result<std::vector<DeviceSample>> samples = source.read();
  EXPECT_THAT(samples, IsOk());
  return samples.value_or(std::vector<DeviceSample>{});
}

// The fake's test-only count of calls about GPU `index`, read from the loaded fake itself.
unsigned long long fake_calls(unsigned int index) {
  void* fake = dlopen(kFake.c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(fake, nullptr);
  using Calls = unsigned long long (*)(unsigned int);
  const auto calls = reinterpret_cast<Calls>(dlsym(fake, "acco_fake_nvml_device_calls"));
  EXPECT_NE(calls, nullptr);
  const unsigned long long count = calls != nullptr ? calls(index) : 0;
  dlclose(fake);
  return count;
}

TEST(NvmlSensorTest, EveryFieldIsConvertedToBaseUnits) {
  const core::ReplayFs fs = runtime_status();
  const auto source = open_source(fs, telemetry_config());
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->name(), "nvml");
  const std::vector<DeviceSample> samples = read_ok(*source);
  ASSERT_EQ(samples.size(), 3U);

  const DeviceSample& s = samples[0];
  EXPECT_EQ(s.device, "0");
  EXPECT_EQ(s.uuid, "GPU-8d1c3f2e-5a4b-4c6d-9e0f-1a2b3c4d5e00");
  EXPECT_EQ(s.pci_bus_id, "0000:18:00.0");
  EXPECT_EQ(s.model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(s.source, "nvml");
  EXPECT_GT(s.time_unix_nanos, 0);
  EXPECT_FALSE(s.lost);
  EXPECT_FALSE(s.suspended);
  EXPECT_EQ(s.temperature_gpu_celsius, 45.0);
  EXPECT_EQ(s.temperature_memory_celsius, 50.0);
  EXPECT_EQ(s.threshold_shutdown_celsius, 92.0);
  EXPECT_EQ(s.threshold_slowdown_celsius, 89.0);
  EXPECT_EQ(s.threshold_memory_max_celsius, 95.0);
  EXPECT_EQ(s.threshold_gpu_max_celsius, 87.0);
  EXPECT_EQ(s.thermal_margin_celsius, 42.0);
  EXPECT_DOUBLE_EQ(s.power_watts.value_or(0), 350.5);
  EXPECT_DOUBLE_EQ(s.energy_joules.value_or(0), 123456.789);
  EXPECT_DOUBLE_EQ(s.power_limit_enforced_watts.value_or(0), 700.0);
  EXPECT_DOUBLE_EQ(s.power_limit_requested_watts.value_or(0), 650.0);
  EXPECT_DOUBLE_EQ(s.power_limit_default_watts.value_or(0), 700.0);
  EXPECT_DOUBLE_EQ(s.power_limit_min_watts.value_or(0), 200.0);
  EXPECT_DOUBLE_EQ(s.power_limit_max_watts.value_or(0), 700.0);
  EXPECT_EQ(s.sm_clock_hertz, 1980e6);
  EXPECT_EQ(s.memory_clock_hertz, 2619e6);
  EXPECT_EQ(s.sm_clock_max_hertz, 1980e6);
  EXPECT_EQ(s.memory_clock_max_hertz, 2619e6);
  EXPECT_EQ(s.pstate, 0);
  EXPECT_DOUBLE_EQ(s.utilization_ratio.value_or(0), 0.87);
  EXPECT_DOUBLE_EQ(s.memory_utilization_ratio.value_or(0), 0.40);
  EXPECT_EQ(s.memory_total_bytes, 85520809984U);
  EXPECT_EQ(s.memory_used_bytes, 1073741824U);
  EXPECT_EQ(s.memory_free_bytes, 85520809984U - 1073741824U);
  EXPECT_EQ(s.pcie_tx_bytes_per_second, 1000.0 * 1024);
  EXPECT_EQ(s.pcie_rx_bytes_per_second, 2000.0 * 1024);
  EXPECT_EQ(s.pcie_replays, 3U);
  EXPECT_EQ(s.pcie_gen_current, 5);
  EXPECT_EQ(s.pcie_width_current, 16);
  EXPECT_EQ(s.pcie_gen_max, 5);
  EXPECT_EQ(s.pcie_width_max, 16);
  EXPECT_EQ(s.clock_event_reasons, clock_event::kSwPowerCap);
  EXPECT_EQ(s.throttle_seconds, (std::map<std::string, double>{{"power", 1.5},
                                                               {"thermal", 0.25},
                                                               {"sync_boost", 0},
                                                               {"board_limit", 0},
                                                               {"low_util", 9},
                                                               {"reliability", 0},
                                                               {"sw_thermal", 0.1},
                                                               {"hw_thermal", 0},
                                                               {"hw_power_brake", 0}}));
  ASSERT_EQ(s.nvlinks.size(), 2U);
  EXPECT_EQ(s.nvlinks[0], (NvlinkSample{0, true, 26562e6, 1000 * 1024, 2000 * 1024}));
  EXPECT_EQ(s.nvlinks[1], (NvlinkSample{1, false, std::nullopt, 0, 0}));
  EXPECT_EQ(s.dropped_readings, 0);

  // The second GPU: a downtrained link, a busy GPU, throttle bits 0x4 | 0x20.
  EXPECT_EQ(samples[1].pci_bus_id, "0000:2a:00.0");
  EXPECT_EQ(samples[1].pcie_gen_current, 4);
  EXPECT_EQ(samples[1].pcie_width_current, 8);
  EXPECT_EQ(samples[1].pcie_tx_bytes_per_second, 52428800.0 * 1024);
  EXPECT_EQ(samples[1].utilization_ratio, 1.0);
  EXPECT_EQ(samples[1].pstate, 2);
  EXPECT_EQ(samples[1].clock_event_reasons,
            clock_event::kSwPowerCap | clock_event::kSwThermalSlowdown);
  EXPECT_EQ(samples[1].throttle_seconds.at("sw_thermal"), 5.0);
  EXPECT_TRUE(samples[1].nvlinks.empty());
}

TEST(NvmlSensorTest, NotSupportedReadingsAreLeftEmptyNotZero) {
  const core::ReplayFs fs = runtime_status();
  const auto source = open_source(fs, telemetry_config());
  ASSERT_NE(source, nullptr);
  const std::vector<DeviceSample> samples = read_ok(*source);
  ASSERT_EQ(samples.size(), 3U);

  const DeviceSample& s = samples[2];
  EXPECT_EQ(s.model, "NVIDIA RTX 6000 Ada Generation");
  EXPECT_EQ(s.thermal_margin_celsius, std::nullopt);
  EXPECT_EQ(s.energy_joules, std::nullopt);
  EXPECT_EQ(s.threshold_memory_max_celsius, std::nullopt);
  EXPECT_EQ(s.temperature_memory_celsius, std::nullopt);
  EXPECT_TRUE(s.throttle_seconds.empty());
  EXPECT_EQ(s.temperature_gpu_celsius, 38.0);
  EXPECT_EQ(s.utilization_ratio, 0.0);
  EXPECT_EQ(s.pstate, 8);
  EXPECT_EQ(s.dropped_readings, 0);
}

TEST(NvmlSensorTest, EveryUnsupportedQueryLeavesOnlyTheIdentity) {
  json config = telemetry_config();
  config["gpus"][0]["unsupported"] = {"memory",          "pstate",      "pcie",
                                      "nvlink",          "temperature", "thresholds",
                                      "margin",          "power",       "energy",
                                      "power_limits",    "clocks",      "utilization",
                                      "pcie_throughput", "replays",     "clocks_event_reasons",
                                      "fields"};
  const core::ReplayFs fs = runtime_status();
  const auto source = open_source(fs, config);
  ASSERT_NE(source, nullptr);
  std::vector<DeviceSample> samples = read_ok(*source);
  ASSERT_EQ(samples.size(), 3U);

  DeviceSample expected;
  expected.device = "0";
  expected.uuid = "GPU-8d1c3f2e-5a4b-4c6d-9e0f-1a2b3c4d5e00";
  expected.pci_bus_id = "0000:18:00.0";
  expected.model = "NVIDIA H100 80GB HBM3";
  expected.source = "nvml";
  expected.time_unix_nanos = samples[0].time_unix_nanos;
  EXPECT_EQ(samples[0], expected);
}

TEST(NvmlSensorTest, OutOfRangeReadingsAreDroppedAndCounted) {
  json config = telemetry_config();
  json& telemetry = config["gpus"][1]["telemetry"];
  telemetry["utilization"]["gpu"] = 150;
  telemetry["temperature"] = 4294967295U;
  telemetry["thresholds"]["shutdown"] = 201;
  telemetry["power_mw"] = 20000000;
  telemetry["clocks_mhz"]["sm"] = 4294967295U;
  const core::ReplayFs fs = runtime_status();
  const auto source = open_source(fs, config);
  ASSERT_NE(source, nullptr);
  const std::vector<DeviceSample> samples = read_ok(*source);
  ASSERT_EQ(samples.size(), 3U);

  const DeviceSample& s = samples[1];
  EXPECT_EQ(s.utilization_ratio, std::nullopt);
  EXPECT_EQ(s.temperature_gpu_celsius, std::nullopt);
  EXPECT_EQ(s.threshold_shutdown_celsius, std::nullopt);
  EXPECT_EQ(s.power_watts, std::nullopt);
  EXPECT_EQ(s.sm_clock_hertz, std::nullopt);
  EXPECT_EQ(s.dropped_readings, 5);
  // The readings beside them are kept.
  EXPECT_DOUBLE_EQ(s.memory_utilization_ratio.value_or(0), 0.72);
  EXPECT_EQ(s.threshold_slowdown_celsius, 89.0);
  EXPECT_EQ(samples[0].dropped_readings, 0);
}

TEST(NvmlSensorTest, GpuLostMidRunIsReportedLostWhileTheOthersAreStillRead) {
  json config = telemetry_config();
  config["gpus"][1]["lost_after_reads"] = 2;
  const core::ReplayFs fs = runtime_status();
  const auto source = open_source(fs, config);
  ASSERT_NE(source, nullptr);

  for (int read = 0; read < 2; ++read) {
    const std::vector<DeviceSample> samples = read_ok(*source);
    ASSERT_EQ(samples.size(), 3U);
    EXPECT_FALSE(samples[1].lost) << read;
    EXPECT_EQ(samples[1].temperature_gpu_celsius, 61.0) << read;
  }
  for (int read = 2; read < 4; ++read) {
    const std::vector<DeviceSample> samples = read_ok(*source);
    ASSERT_EQ(samples.size(), 3U);
    DeviceSample lost;
    lost.device = "1";
    lost.uuid = "GPU-8d1c3f2e-5a4b-4c6d-9e0f-1a2b3c4d5e01";
    lost.pci_bus_id = "0000:2a:00.0";
    lost.model = "NVIDIA H100 80GB HBM3";
    lost.source = "nvml";
    lost.lost = true;
    lost.time_unix_nanos = samples[1].time_unix_nanos;
    EXPECT_EQ(samples[1], lost) << read;
    EXPECT_EQ(samples[0].temperature_gpu_celsius, 45.0) << read;
    EXPECT_EQ(samples[2].temperature_gpu_celsius, 38.0) << read;
    EXPECT_FALSE(samples[0].lost);
  }
}

TEST(NvmlSensorTest, GpuLostBeforeTheSourceOpenedIsLostOnEveryRead) {
  json config = telemetry_config();
  config["gpus"][2]["lost"] = true;
  const core::ReplayFs fs = runtime_status();
  const auto source = open_source(fs, config);
  ASSERT_NE(source, nullptr);
  const std::vector<DeviceSample> samples = read_ok(*source);
  ASSERT_EQ(samples.size(), 3U);
  EXPECT_TRUE(samples[2].lost);
  EXPECT_EQ(samples[2].device, "2");
  EXPECT_EQ(samples[2].temperature_gpu_celsius, std::nullopt);
  EXPECT_EQ(samples[1].temperature_gpu_celsius, 61.0);
}

TEST(NvmlSensorTest, SuspendedGpuIsReportedWithoutAnyNvmlCall) {
  const core::ReplayFs fs =
      runtime_status({{"0000:2a:00.0", "suspended"}, {"0000:18:00.0", "active"}});
  const auto source = open_source(fs, telemetry_config());
  ASSERT_NE(source, nullptr);
  const unsigned long long before = fake_calls(1);
  const unsigned long long awake_before = fake_calls(0);

  const std::vector<DeviceSample> samples = read_ok(*source);
  ASSERT_EQ(samples.size(), 3U);
  EXPECT_EQ(fake_calls(1), before);
  EXPECT_GT(fake_calls(0), awake_before);
  EXPECT_TRUE(samples[1].suspended);
  EXPECT_FALSE(samples[1].lost);
  EXPECT_EQ(samples[1].pci_bus_id, "0000:2a:00.0");
  EXPECT_EQ(samples[1].uuid, "GPU-8d1c3f2e-5a4b-4c6d-9e0f-1a2b3c4d5e01");
  EXPECT_EQ(samples[1].temperature_gpu_celsius, std::nullopt);
  EXPECT_FALSE(samples[0].suspended);
  EXPECT_EQ(samples[0].temperature_gpu_celsius, 45.0);
}

TEST(NvmlSensorTest, OldDriverWithoutTelemetryEntryPointsGivesTheIdentityOnly) {
  const core::ReplayFs fs = runtime_status();
  const auto source = open_source(fs, telemetry_config(), kFakeRequiredOnly);
  ASSERT_NE(source, nullptr);
  const std::vector<DeviceSample> samples = read_ok(*source);
  ASSERT_EQ(samples.size(), 3U);
  EXPECT_EQ(samples[0].pci_bus_id, "0000:18:00.0");
  EXPECT_EQ(samples[0].model, "");
  EXPECT_EQ(samples[0].power_watts, std::nullopt);
  EXPECT_TRUE(samples[0].nvlinks.empty());
  EXPECT_FALSE(samples[0].lost);
}

TEST(NvmlSensorTest, DriverWithoutClocksEventReasonsFallsBackToThrottleReasons) {
  const core::ReplayFs fs = runtime_status();
  const auto source = open_source(fs, telemetry_config(), kFakeLegacy);
  ASSERT_NE(source, nullptr);
  const std::vector<DeviceSample> samples = read_ok(*source);
  ASSERT_EQ(samples.size(), 3U);
  EXPECT_EQ(samples[0].clock_event_reasons, clock_event::kSwPowerCap);
  // Without nvmlDeviceGetMarginTemperature the margin is empty, the rest is read.
  EXPECT_EQ(samples[0].thermal_margin_celsius, std::nullopt);
  EXPECT_EQ(samples[0].temperature_gpu_celsius, 45.0);
  EXPECT_EQ(samples[0].dropped_readings, 0);
}

TEST(NvmlSensorTest, XidEventsAreReportedOnceWithTheirGpu) {
  json config = telemetry_config();
  config["gpus"][1]["xids"] = {79, 48};
  config["gpus"][2]["xids"] = {13};
  const core::ReplayFs fs = runtime_status();
  const auto source = open_source(fs, config);
  ASSERT_NE(source, nullptr);

  const std::vector<DeviceSample> first = read_ok(*source);
  ASSERT_EQ(first.size(), 3U);
  EXPECT_TRUE(first[0].xids.empty());
  ASSERT_EQ(first[1].xids.size(), 2U);
  EXPECT_EQ(first[1].xids[0].xid, 79U);
  EXPECT_EQ(first[1].xids[1].xid, 48U);
  EXPECT_GT(first[1].xids[0].time_unix_nanos, 0);
  ASSERT_EQ(first[2].xids.size(), 1U);
  EXPECT_EQ(first[2].xids[0].xid, 13U);

  const std::vector<DeviceSample> second = read_ok(*source);
  ASSERT_EQ(second.size(), 3U);
  for (const DeviceSample& sample : second) {
    EXPECT_TRUE(sample.xids.empty()) << sample.device;
  }
}

TEST(NvmlSensorTest, MissingLibraryIsUnavailableNamingIt) {
  const core::ReplayFs fs = runtime_status();
  const auto source = make_nvml_source(fs, "/nonexistent/libnvidia-ml.so.1");
  ASSERT_THAT(source, StatusIs(Errc::kUnavailable));
  EXPECT_EQ(source.error().message,
            "nvml sensors: /nonexistent/libnvidia-ml.so.1: cannot open shared object file: No "
            "such file or directory");
}

TEST(NvmlSensorTest, InitFailureIsUnavailableWithNvmlsReason) {
  use_config(json{{"init_error", 9}});
  const core::ReplayFs fs = runtime_status();
  const auto source = make_nvml_source(fs, kFake);
  ASSERT_THAT(source, StatusIs(Errc::kUnavailable));
  EXPECT_EQ(source.error().message, "nvml sensors: nvmlInit_v2: Driver Not Loaded (9)");
}

}  // namespace
}  // namespace acco::power
