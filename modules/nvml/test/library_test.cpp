#include "acco/nvml/library.hpp"

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "acco/testing/matchers.hpp"

#include "error_map.hpp"

namespace acco::nvml {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using nlohmann::json;

const std::string kFake = ACCO_FAKE_NVML_PATH;
const std::string kFakeRequiredOnly = ACCO_FAKE_NVML_REQUIRED_ONLY_PATH;

// One GPU with a few telemetry values; the rest of the config is added by each test.
json one_gpu() {
  return json{{"gpus",
               {{{"pci", "00000000:18:00.0"},
                 {"name", "NVIDIA H100 80GB HBM3"},
                 {"telemetry", {{"power_mw", 350000}, {"temperature", 45}}}}}}};
}

std::shared_ptr<Library> open_fake(const json& config, const std::string& library = kFake) {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string path = ::testing::TempDir() + "fake_nvml_lib_" + test->name() + ".json";
  std::ofstream(path) << config.dump(2);
  ::setenv("ACCO_FAKE_NVML_CONFIG", path.c_str(), 1);
  Result<std::shared_ptr<Library>> nvml = Library::open(library);
  EXPECT_THAT(nvml, IsOk());
  return nvml.value_or(nullptr);
}

TEST(NvmlErrorTest, NotSupportedIsUnsupportedWithCallTextAndCode) {
  const Error error = detail::nvml_error("nvmlDeviceGetPowerUsage", 3, "Not Supported");
  EXPECT_EQ(error, (Error{Errc::kUnsupported, "nvmlDeviceGetPowerUsage: Not Supported (3)"}));
}

TEST(NvmlErrorTest, GpuIsLostIsADeviceErrorThatSaysSoWhateverTheText) {
  const Error error = detail::nvml_error("nvmlDeviceGetTemperature", 15, "Unknown Error");
  EXPECT_EQ(error, (Error{Errc::kDeviceError, "nvmlDeviceGetTemperature: GPU is lost (15)"}));
  EXPECT_TRUE(is_gpu_lost(error));
  EXPECT_FALSE(is_gpu_lost(detail::nvml_error("nvmlDeviceGetTemperature", 999, "Unknown Error")));
}

TEST(NvmlErrorTest, EachCodeMapsToWhatTheCallerShouldDo) {
  const std::vector<std::pair<int, Errc>> cases = {
      {1, Errc::kUnavailable},   {2, Errc::kInvalidArgument}, {3, Errc::kUnsupported},
      {4, Errc::kUnavailable},   {6, Errc::kNotFound},        {9, Errc::kUnavailable},
      {12, Errc::kUnavailable},  {13, Errc::kUnavailable},    {14, Errc::kDeviceError},
      {15, Errc::kDeviceError},  {18, Errc::kUnavailable},    {10, Errc::kDeviceError},
      {999, Errc::kDeviceError},
  };
  for (const auto& [code, errc] : cases) {
    EXPECT_EQ(detail::nvml_error("nvmlX", code, "text").code, errc) << code;
  }
}

TEST(NvmlErrorTest, MissingErrorTextSaysUnknownError) {
  EXPECT_EQ(detail::nvml_error("nvmlX", 10, nullptr).message, "nvmlX: unknown error (10)");
}

TEST(LibraryTest, OpensTheFakeAndReadsAGpu) {
  const auto nvml = open_fake(one_gpu());
  ASSERT_NE(nvml, nullptr);
  EXPECT_EQ(nvml->path(), kFake);
  ASSERT_EQ(nvml->device_count(), 1U);
  const Result<Device> device = nvml->device(0);
  ASSERT_THAT(device, IsOk());
  EXPECT_EQ(nvml->pci_bus_id(*device), "0000:18:00.0");
  EXPECT_EQ(nvml->name(*device), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(nvml->power_usage_milliwatts(*device), 350000U);
  EXPECT_EQ(nvml->temperature_celsius(*device), 45U);
}

TEST(LibraryTest, AbsentTelemetryValueIsUnsupportedNamingTheCall) {
  const auto nvml = open_fake(one_gpu());
  ASSERT_NE(nvml, nullptr);
  const Result<unsigned int> energy = nvml->pcie_replay_counter(*nvml->device(0));
  ASSERT_THAT(energy, StatusIs(Errc::kUnsupported));
  EXPECT_EQ(energy.error().message, "nvmlDeviceGetPcieReplayCounter: Not Supported (3)");
}

TEST(LibraryTest, ConfiguredErrorCodeIsMapped) {
  json config = one_gpu();
  config["gpus"][0]["errors"] = {{"power", 4}};
  const auto nvml = open_fake(config);
  ASSERT_NE(nvml, nullptr);
  const Result<unsigned int> power = nvml->power_usage_milliwatts(*nvml->device(0));
  ASSERT_THAT(power, StatusIs(Errc::kUnavailable));
  EXPECT_EQ(power.error().message, "nvmlDeviceGetPowerUsage: Insufficient Permissions (4)");
}

TEST(LibraryTest, LostGpuIsADeviceErrorThatIsGpuLost) {
  json config = one_gpu();
  config["gpus"][0]["lost_after_reads"] = 1;
  const auto nvml = open_fake(config);
  ASSERT_NE(nvml, nullptr);
  const Device device = *nvml->device(0);
  EXPECT_EQ(nvml->temperature_celsius(device), 45U);
  const Result<unsigned int> again = nvml->temperature_celsius(device);
  ASSERT_THAT(again, StatusIs(Errc::kDeviceError));
  EXPECT_TRUE(is_gpu_lost(again.error()));
  EXPECT_TRUE(is_gpu_lost(nvml->power_usage_milliwatts(device).error()));
}

TEST(LibraryTest, MissingOptionalEntryPointIsUnsupported) {
  const auto nvml = open_fake(one_gpu(), kFakeRequiredOnly);
  ASSERT_NE(nvml, nullptr);
  const Result<unsigned int> power = nvml->power_usage_milliwatts(*nvml->device(0));
  ASSERT_THAT(power, StatusIs(Errc::kUnsupported));
  EXPECT_EQ(power.error().message, "nvmlDeviceGetPowerUsage: not exported by this driver");
  EXPECT_THAT(nvml->clocks_event_reasons(*nvml->device(0)), StatusIs(Errc::kUnsupported));
  EXPECT_THAT(nvml->field_values(*nvml->device(0), {{74, 0}}), StatusIs(Errc::kUnsupported));
}

TEST(LibraryTest, FieldValuesCarryTheirOwnAnswers) {
  json config = one_gpu();
  config["gpus"][0]["telemetry"]["fields"] = {{"74", 1500000000ULL}};
  const auto nvml = open_fake(config);
  ASSERT_NE(nvml, nullptr);
  const auto values = nvml->field_values(*nvml->device(0), {{74, 0}, {75, 0}});
  ASSERT_THAT(values, IsOk());
  ASSERT_EQ(values->size(), 2U);
  EXPECT_EQ((*values)[0].field_id, 74U);
  EXPECT_EQ((*values)[0].value, 1500000000ULL);
  EXPECT_THAT((*values)[1].value, StatusIs(Errc::kUnsupported));
}

TEST(LibraryTest, InitFailureIsUnavailableWithNvmlText) {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string path = ::testing::TempDir() + "fake_nvml_lib_" + test->name() + ".json";
  std::ofstream(path) << json{{"init_error", 9}}.dump();
  ::setenv("ACCO_FAKE_NVML_CONFIG", path.c_str(), 1);
  const auto nvml = Library::open(kFake);
  ASSERT_THAT(nvml, StatusIs(Errc::kUnavailable));
  EXPECT_EQ(nvml.error().message, "nvmlInit_v2: Driver Not Loaded (9)");
}

TEST(LibraryTest, MissingLibraryIsUnavailableWithTheLoadersMessage) {
  const auto nvml = Library::open("/nonexistent/libnvidia-ml.so.1");
  ASSERT_THAT(nvml, StatusIs(Errc::kUnavailable));
  EXPECT_THAT(nvml.error().message, ::testing::HasSubstr("No such file or directory"));
  EXPECT_THAT(Library::open(""), StatusIs(Errc::kUnavailable));
}

// one_gpu() with the limits and clocks the controls check against.
json controllable_gpu() {
  json config = one_gpu();
  config["gpus"][0]["telemetry"]["power_limits_mw"] = {
      {"enforced", 700000}, {"requested", 700000}, {"min", 200000}, {"max", 700000}};
  config["gpus"][0]["telemetry"]["clocks_mhz"] = {{"sm", 1980}, {"sm_max", 1980}};
  return config;
}

TEST(LibraryControlsTest, ASetPowerLimitIsWhatTheLimitGettersAnswerAfterwards) {
  const auto nvml = open_fake(controllable_gpu());
  ASSERT_NE(nvml, nullptr);
  const Device device = *nvml->device(0);
  ASSERT_THAT(nvml->set_power_management_limit_milliwatts(device, 350000), IsOk());
  EXPECT_EQ(nvml->power_management_limit_milliwatts(device), 350000U);
  EXPECT_EQ(nvml->enforced_power_limit_milliwatts(device), 350000U);
}

TEST(LibraryControlsTest, APowerLimitOutsideTheConstraintsIsAnInvalidArgumentAndChangesNothing) {
  const auto nvml = open_fake(controllable_gpu());
  ASSERT_NE(nvml, nullptr);
  const Device device = *nvml->device(0);
  const Status below = nvml->set_power_management_limit_milliwatts(device, 199999);
  ASSERT_THAT(below, StatusIs(Errc::kInvalidArgument));
  EXPECT_EQ(below.error().message, "nvmlDeviceSetPowerManagementLimit: Invalid Argument (2)");
  EXPECT_THAT(nvml->set_power_management_limit_milliwatts(device, 700001),
              StatusIs(Errc::kInvalidArgument));
  EXPECT_EQ(nvml->power_management_limit_milliwatts(device), 700000U);
  EXPECT_EQ(nvml->enforced_power_limit_milliwatts(device), 700000U);
}

TEST(LibraryControlsTest, APowerLimitWithoutPermissionIsUnavailable) {
  json config = controllable_gpu();
  config["gpus"][0]["errors"] = {{"set_power_limit", 4}};
  const auto nvml = open_fake(config);
  ASSERT_NE(nvml, nullptr);
  const Status status = nvml->set_power_management_limit_milliwatts(*nvml->device(0), 350000);
  ASSERT_THAT(status, StatusIs(Errc::kUnavailable));
  EXPECT_EQ(status.error().message,
            "nvmlDeviceSetPowerManagementLimit: Insufficient Permissions (4)");
  EXPECT_EQ(nvml->power_management_limit_milliwatts(*nvml->device(0)), 700000U);
}

TEST(LibraryControlsTest, LockedClocksCapTheSmClockUntilReset) {
  const auto nvml = open_fake(controllable_gpu());
  ASSERT_NE(nvml, nullptr);
  const Device device = *nvml->device(0);
  ASSERT_THAT(nvml->set_gpu_locked_clocks_mhz(device, 900, 1200), IsOk());
  EXPECT_EQ(nvml->clock_mhz(device, Clock::kSm), 1200U);
  EXPECT_EQ(nvml->max_clock_mhz(device, Clock::kSm), 1980U);
  ASSERT_THAT(nvml->reset_gpu_locked_clocks(device), IsOk());
  EXPECT_EQ(nvml->clock_mhz(device, Clock::kSm), 1980U);
}

TEST(LibraryControlsTest, ReversedOrTooHighLockedClocksAreInvalidArguments) {
  const auto nvml = open_fake(controllable_gpu());
  ASSERT_NE(nvml, nullptr);
  const Device device = *nvml->device(0);
  const Status reversed = nvml->set_gpu_locked_clocks_mhz(device, 1200, 900);
  ASSERT_THAT(reversed, StatusIs(Errc::kInvalidArgument));
  EXPECT_EQ(reversed.error().message, "nvmlDeviceSetGpuLockedClocks: Invalid Argument (2)");
  EXPECT_THAT(nvml->set_gpu_locked_clocks_mhz(device, 900, 1981), StatusIs(Errc::kInvalidArgument));
  EXPECT_EQ(nvml->clock_mhz(device, Clock::kSm), 1980U);
}

TEST(LibraryControlsTest, LockedClocksWithoutPermissionOrSupportAreRefused) {
  json config = controllable_gpu();
  config["gpus"][0]["errors"] = {{"locked_clocks", 4}};
  const auto refused = open_fake(config);
  ASSERT_NE(refused, nullptr);
  const Status lock = refused->set_gpu_locked_clocks_mhz(*refused->device(0), 900, 1200);
  ASSERT_THAT(lock, StatusIs(Errc::kUnavailable));
  EXPECT_EQ(lock.error().message, "nvmlDeviceSetGpuLockedClocks: Insufficient Permissions (4)");
  const Status reset = refused->reset_gpu_locked_clocks(*refused->device(0));
  ASSERT_THAT(reset, StatusIs(Errc::kUnavailable));
  EXPECT_EQ(reset.error().message, "nvmlDeviceResetGpuLockedClocks: Insufficient Permissions (4)");
}

TEST(LibraryControlsTest, ControlsTheGpuDoesNotSupportAreUnsupported) {
  json config = controllable_gpu();
  config["gpus"][0]["unsupported"] = {"locked_clocks", "set_power_limit"};
  const auto nvml = open_fake(config);
  ASSERT_NE(nvml, nullptr);
  const Device device = *nvml->device(0);
  EXPECT_THAT(nvml->set_power_management_limit_milliwatts(device, 350000),
              StatusIs(Errc::kUnsupported));
  EXPECT_THAT(nvml->set_gpu_locked_clocks_mhz(device, 900, 1200), StatusIs(Errc::kUnsupported));
  EXPECT_THAT(nvml->reset_gpu_locked_clocks(device), StatusIs(Errc::kUnsupported));
}

TEST(LibraryControlsTest, ControlsOnALostGpuAreGpuLost) {
  json config = controllable_gpu();
  config["gpus"][0]["lost_after_reads"] = 0;
  const auto nvml = open_fake(config);
  ASSERT_NE(nvml, nullptr);
  const Device device = *nvml->device(0);
  ASSERT_TRUE(is_gpu_lost(nvml->temperature_celsius(device).error()));
  const Status limit = nvml->set_power_management_limit_milliwatts(device, 350000);
  ASSERT_THAT(limit, StatusIs(Errc::kDeviceError));
  EXPECT_EQ(limit.error().message, "nvmlDeviceSetPowerManagementLimit: GPU is lost (15)");
  EXPECT_TRUE(is_gpu_lost(nvml->set_gpu_locked_clocks_mhz(device, 900, 1200).error()));
  EXPECT_TRUE(is_gpu_lost(nvml->reset_gpu_locked_clocks(device).error()));
}

TEST(LibraryControlsTest, ControlsADriverDoesNotExportAreUnsupported) {
  const auto nvml = open_fake(controllable_gpu(), kFakeRequiredOnly);
  ASSERT_NE(nvml, nullptr);
  const Device device = *nvml->device(0);
  const Status limit = nvml->set_power_management_limit_milliwatts(device, 350000);
  ASSERT_THAT(limit, StatusIs(Errc::kUnsupported));
  EXPECT_EQ(limit.error().message,
            "nvmlDeviceSetPowerManagementLimit: not exported by this driver");
  const Status lock = nvml->set_gpu_locked_clocks_mhz(device, 900, 1200);
  ASSERT_THAT(lock, StatusIs(Errc::kUnsupported));
  EXPECT_EQ(lock.error().message, "nvmlDeviceSetGpuLockedClocks: not exported by this driver");
  const Status reset = nvml->reset_gpu_locked_clocks(device);
  ASSERT_THAT(reset, StatusIs(Errc::kUnsupported));
  EXPECT_EQ(reset.error().message, "nvmlDeviceResetGpuLockedClocks: not exported by this driver");
}

}  // namespace
}  // namespace acco::nvml
