#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "acco/core/fs.hpp"
#include "acco/core/json.hpp"
#include "acco/power/actuator.hpp"
#include "acco/power/nvml_sensor.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::power {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using nlohmann::json;
using ::testing::HasSubstr;

const std::string kFake = ACCO_FAKE_NVML_PATH;
const std::string kFakeLegacy = ACCO_FAKE_NVML_LEGACY_PATH;
const std::string kDataDir = ACCO_NVML_TEST_DATA_DIR;
// telemetry.json's first GPU: limits [200, 700] W, 650 W requested, SM clock 1980 MHz at most.
const std::string kGpu0 = "GPU-8d1c3f2e-5a4b-4c6d-9e0f-1a2b3c4d5e00";

json telemetry_config() {
  auto config = core::read_json_file(kDataDir + "/telemetry.json");
  EXPECT_THAT(config, IsOk());
  return config.value_or(json::object());
}

// Sets an environment variable for one scope and puts back what was there before.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name); old != nullptr) {
      old_ = old;
    }
    set(value);
  }
  ~ScopedEnv() { set(old_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ScopedEnv(ScopedEnv&&) = delete;
  ScopedEnv& operator=(ScopedEnv&&) = delete;

 private:
  void set(const std::optional<std::string>& value) const {
    if (value.has_value()) {
      ::setenv(name_, value->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

  const char* name_;
  std::optional<std::string> old_;
};

// A directory of this test's own.
std::filesystem::path test_directory() {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("nvml_actuator_" + std::string(test->name()));
  std::filesystem::create_directories(dir);
  return dir;
}

// Points the fake at `config`, written to a file of its own so every test sees only its own.
void use_config(const json& config) {
  const std::string path = (test_directory() / "config.json").string();
  std::ofstream(path) << config.dump(2);
  ::setenv("ACCO_FAKE_NVML_CONFIG", path.c_str(), 1);
}

std::unique_ptr<Actuator> open_actuator(const std::string& library = kFake) {
  Result<std::unique_ptr<Actuator>> actuator = make_nvml_actuator(library);
  EXPECT_THAT(actuator, IsOk());
  return actuator.has_value() ? std::move(*actuator) : nullptr;
}

// GPU 0 as a fresh NVML sensor source reads it in the same process.
DeviceSample read_gpu0() {
  const core::ReplayFs fs{core::FsRecord{}};
  Result<std::unique_ptr<SensorSource>> source = make_nvml_source(fs, kFake);
  EXPECT_THAT(source, IsOk());
  if (!source.has_value()) {
    return {};
  }
  Result<std::vector<DeviceSample>> samples = (*source)->read();
  EXPECT_THAT(samples, IsOk());
  if (!samples.has_value() || samples->empty()) {
    return {};
  }
  return samples->front();
}

TEST(NvmlActuatorTest, ASetLimitIsReadBackByTheSensorSourceAsRequestedAndEnforced) {
  use_config(telemetry_config());
  const auto actuator = open_actuator();
  ASSERT_NE(actuator, nullptr);
  EXPECT_EQ(actuator->name(), "nvml");
  // 450.0004 W rounds to 450000 mW.
  ASSERT_THAT(actuator->set_power_limit(kGpu0, 450.0004), IsOk());
  const DeviceSample sample = read_gpu0();
  EXPECT_EQ(sample.uuid, kGpu0);
  EXPECT_DOUBLE_EQ(sample.power_limit_requested_watts.value_or(0), 450.0);
  EXPECT_DOUBLE_EQ(sample.power_limit_enforced_watts.value_or(0), 450.0);
}

TEST(NvmlActuatorTest, ALimitOutsideTheDeviceRangeIsAnInvalidArgumentNamingTheDevice) {
  use_config(telemetry_config());
  const auto actuator = open_actuator();
  ASSERT_NE(actuator, nullptr);
  const Status below = actuator->set_power_limit(kGpu0, 150);
  ASSERT_THAT(below, StatusIs(Errc::kInvalidArgument));
  EXPECT_EQ(below.error().message, "set power limit of " + kGpu0 +
                                       " to 150 W: nvmlDeviceSetPowerManagementLimit: Invalid "
                                       "Argument (2)");
  EXPECT_THAT(actuator->set_power_limit(kGpu0, 700.001), StatusIs(Errc::kInvalidArgument));
  EXPECT_DOUBLE_EQ(read_gpu0().power_limit_requested_watts.value_or(0), 650.0);
}

TEST(NvmlActuatorTest, ANegativeOrNonNumericLimitIsAnInvalidArgumentBeforeNvmlIsCalled) {
  use_config(telemetry_config());
  const auto actuator = open_actuator();
  ASSERT_NE(actuator, nullptr);
  const Status negative = actuator->set_power_limit(kGpu0, -1);
  ASSERT_THAT(negative, StatusIs(Errc::kInvalidArgument));
  EXPECT_EQ(negative.error().message,
            "set power limit of " + kGpu0 + " to -1 W: not a power limit in milliwatts");
  EXPECT_THAT(actuator->set_power_limit(kGpu0, std::nan("")), StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(actuator->set_power_limit(kGpu0, 1e10), StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(actuator->lock_sm_clocks(kGpu0, -1e6, 1200e6), StatusIs(Errc::kInvalidArgument));
}

TEST(NvmlActuatorTest, ALimitWithoutPermissionIsUnavailableNamingTheDevice) {
  json config = telemetry_config();
  config["gpus"][0]["errors"] = {{"set_power_limit", 4}, {"locked_clocks", 4}};
  use_config(config);
  const auto actuator = open_actuator();
  ASSERT_NE(actuator, nullptr);
  const Status limit = actuator->set_power_limit(kGpu0, 300);
  ASSERT_THAT(limit, StatusIs(Errc::kUnavailable));
  EXPECT_EQ(limit.error().message,
            "set power limit of " + kGpu0 +
                " to 300 W: nvmlDeviceSetPowerManagementLimit: Insufficient Permissions (4)");
  const Status lock = actuator->lock_sm_clocks(kGpu0, 900e6, 1200e6);
  ASSERT_THAT(lock, StatusIs(Errc::kUnavailable));
  EXPECT_EQ(lock.error().message,
            "lock SM clocks of " + kGpu0 +
                " to [900, 1200] MHz: nvmlDeviceSetGpuLockedClocks: Insufficient Permissions (4)");
  const Status unlock = actuator->unlock_sm_clocks(kGpu0);
  ASSERT_THAT(unlock, StatusIs(Errc::kUnavailable));
  EXPECT_EQ(unlock.error().message,
            "unlock SM clocks of " + kGpu0 +
                ": nvmlDeviceResetGpuLockedClocks: Insufficient Permissions (4)");
}

TEST(NvmlActuatorTest, ADeviceLostAfterCreationIsADeviceError) {
  json config = telemetry_config();
  // The sensor source's first temperature read finds the GPU gone.
  config["gpus"][0]["lost_after_reads"] = 0;
  use_config(config);
  const auto actuator = open_actuator();
  ASSERT_NE(actuator, nullptr);
  EXPECT_TRUE(read_gpu0().lost);
  const Status limit = actuator->set_power_limit(kGpu0, 300);
  ASSERT_THAT(limit, StatusIs(Errc::kDeviceError));
  EXPECT_EQ(limit.error().message, "set power limit of " + kGpu0 +
                                       " to 300 W: nvmlDeviceSetPowerManagementLimit: GPU is "
                                       "lost (15)");
  EXPECT_THAT(actuator->lock_sm_clocks(kGpu0, 900e6, 1200e6),
              StatusIs(Errc::kDeviceError, HasSubstr("GPU is lost")));
  EXPECT_THAT(actuator->unlock_sm_clocks(kGpu0),
              StatusIs(Errc::kDeviceError, HasSubstr("GPU is lost")));
}

TEST(NvmlActuatorTest, AnUnknownUuidIsNotFoundForEveryControl) {
  json config = telemetry_config();
  // A GPU lost before the actuator opened has no uuid it can be found by.
  config["gpus"][1]["lost"] = true;
  use_config(config);
  const auto actuator = open_actuator();
  ASSERT_NE(actuator, nullptr);
  const Status limit = actuator->set_power_limit("GPU-unknown", 300);
  ASSERT_THAT(limit, StatusIs(Errc::kNotFound));
  EXPECT_EQ(limit.error().message,
            "set power limit of GPU-unknown to 300 W: no NVML GPU has this uuid");
  EXPECT_THAT(actuator->set_power_limit("GPU-8d1c3f2e-5a4b-4c6d-9e0f-1a2b3c4d5e01", 300),
              StatusIs(Errc::kNotFound));
  EXPECT_THAT(actuator->lock_sm_clocks("GPU-unknown", 900e6, 1200e6), StatusIs(Errc::kNotFound));
  EXPECT_THAT(
      actuator->unlock_sm_clocks("GPU-unknown"),
      StatusIs(Errc::kNotFound, "unlock SM clocks of GPU-unknown: no NVML GPU has this uuid"));
}

TEST(NvmlActuatorTest, LockedClocksLowerTheReportedSmClockAndUnlockRestoresIt) {
  use_config(telemetry_config());
  const auto actuator = open_actuator();
  ASSERT_NE(actuator, nullptr);
  // 1200.0004 MHz rounds to 1200 MHz.
  ASSERT_THAT(actuator->lock_sm_clocks(kGpu0, 900e6, 1200.0004e6), IsOk());
  EXPECT_EQ(read_gpu0().sm_clock_hertz, 1200e6);
  EXPECT_EQ(read_gpu0().sm_clock_max_hertz, 1980e6);
  ASSERT_THAT(actuator->unlock_sm_clocks(kGpu0), IsOk());
  EXPECT_EQ(read_gpu0().sm_clock_hertz, 1980e6);
}

TEST(NvmlActuatorTest, AReversedOrTooHighClockRangeIsAnInvalidArgument) {
  use_config(telemetry_config());
  const auto actuator = open_actuator();
  ASSERT_NE(actuator, nullptr);
  const Status reversed = actuator->lock_sm_clocks(kGpu0, 1200e6, 900e6);
  ASSERT_THAT(reversed, StatusIs(Errc::kInvalidArgument));
  EXPECT_EQ(reversed.error().message,
            "lock SM clocks of " + kGpu0 +
                " to [1200, 900] MHz: nvmlDeviceSetGpuLockedClocks: Invalid Argument (2)");
  EXPECT_THAT(actuator->lock_sm_clocks(kGpu0, 900e6, 2000e6), StatusIs(Errc::kInvalidArgument));
  EXPECT_EQ(read_gpu0().sm_clock_hertz, 1980e6);
}

TEST(NvmlActuatorTest, ADriverFromBeforeNvml12TakesTheControls) {
  use_config(telemetry_config());
  const auto actuator = open_actuator(kFakeLegacy);
  ASSERT_NE(actuator, nullptr);
  EXPECT_THAT(actuator->set_power_limit(kGpu0, 300), IsOk());
  EXPECT_THAT(actuator->lock_sm_clocks(kGpu0, 900e6, 1200e6), IsOk());
  EXPECT_THAT(actuator->unlock_sm_clocks(kGpu0), IsOk());
}

TEST(NvmlActuatorTest, SettingsOutliveTheSessionThatMadeThemWhenTheFakeKeepsState) {
  use_config(telemetry_config());
  const std::filesystem::path state = test_directory() / "state.json";
  std::filesystem::remove(state);  // from an earlier run
  {
    const ScopedEnv keep("ACCO_FAKE_NVML_STATE", state.string());
    {
      const auto actuator = open_actuator();
      ASSERT_NE(actuator, nullptr);
      ASSERT_THAT(actuator->set_power_limit(kGpu0, 450), IsOk());
      ASSERT_THAT(actuator->lock_sm_clocks(kGpu0, 900e6, 1200e6), IsOk());
    }
    const Result<json> saved = core::read_json_file(state.string());
    ASSERT_THAT(saved, IsOk());
    EXPECT_EQ(
        saved->at("gpus").at(kGpu0),
        (json{{"power_limit_mw", 450000}, {"locked_clocks_mhz", {{"min", 900}, {"max", 1200}}}}));
    // The actuator's session has ended, so this is a fresh nvmlInit_v2 that reloads the file.
    const DeviceSample sample = read_gpu0();
    EXPECT_DOUBLE_EQ(sample.power_limit_requested_watts.value_or(0), 450.0);
    EXPECT_DOUBLE_EQ(sample.power_limit_enforced_watts.value_or(0), 450.0);
    EXPECT_EQ(sample.sm_clock_hertz, 1200e6);
    {
      const auto actuator = open_actuator();
      ASSERT_NE(actuator, nullptr);
      ASSERT_THAT(actuator->unlock_sm_clocks(kGpu0), IsOk());
    }
    EXPECT_EQ(read_gpu0().sm_clock_hertz, 1980e6);
    EXPECT_DOUBLE_EQ(read_gpu0().power_limit_requested_watts.value_or(0), 450.0);
  }
  // Without the state file a session starts from the config again.
  const ScopedEnv forget("ACCO_FAKE_NVML_STATE", std::nullopt);
  EXPECT_DOUBLE_EQ(read_gpu0().power_limit_requested_watts.value_or(0), 650.0);
}

TEST(NvmlActuatorTest, CreationFailsUnavailableWhenTheLibraryCannotBeLoaded) {
  const auto actuator = make_nvml_actuator("/nonexistent/libnvidia-ml.so.1");
  ASSERT_THAT(actuator, StatusIs(Errc::kUnavailable));
  EXPECT_THAT(actuator.error().message, ::testing::StartsWith("nvml actuator: "));
}

}  // namespace
}  // namespace acco::power
