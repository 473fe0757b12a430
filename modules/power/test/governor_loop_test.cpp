#include "acco/power/governor_loop.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "acco/power/json.hpp"
#include "acco/power/routed_actuator.hpp"
#include "acco/power/simulated_device.hpp"
#include "acco/power/status.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::power {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Says which uuid each call reached.
class CallLog final : public Actuator {
 public:
  explicit CallLog(std::vector<std::string>* calls) : calls_(calls) {}
  [[nodiscard]] std::string name() const override { return "log"; }
  [[nodiscard]] Status set_power_limit(const std::string& uuid, double /*watts*/) override {
    calls_->push_back("limit " + uuid);
    return {};
  }
  [[nodiscard]] Status lock_sm_clocks(const std::string& uuid, double /*min*/,
                                      double /*max*/) override {
    calls_->push_back("lock " + uuid);
    return {};
  }
  [[nodiscard]] Status unlock_sm_clocks(const std::string& uuid) override {
    calls_->push_back("unlock " + uuid);
    return {};
  }

 private:
  std::vector<std::string>* calls_;
};

DeviceSample sample_of(const std::string& uuid, const std::string& source) {
  DeviceSample s;
  s.uuid = uuid;
  s.source = source;
  return s;
}

TEST(RoutedActuatorTest, EachChangeGoesToTheActuatorOfItsDevicesSource) {
  std::vector<std::string> gpu_calls;
  std::vector<std::string> rapl_calls;
  RoutedActuator routed;
  routed.add("nvml", std::make_unique<CallLog>(&gpu_calls));
  routed.add("rapl", std::make_unique<CallLog>(&rapl_calls));
  routed.learn({sample_of("GPU-1", "nvml"), sample_of("package-0", "rapl")});
  EXPECT_THAT(routed.set_power_limit("GPU-1", 300), IsOk());
  EXPECT_THAT(routed.set_power_limit("package-0", 100), IsOk());
  EXPECT_THAT(routed.lock_sm_clocks("GPU-1", 0, 1e9), IsOk());
  EXPECT_THAT(routed.unlock_sm_clocks("GPU-1"), IsOk());
  EXPECT_THAT(gpu_calls, ElementsAre("limit GPU-1", "lock GPU-1", "unlock GPU-1"));
  EXPECT_THAT(rapl_calls, ElementsAre("limit package-0"));
}

TEST(RoutedActuatorTest, AnUnknownDeviceOrASourceWithoutActuatorIsRefused) {
  RoutedActuator routed;
  routed.learn({sample_of("SIM-1", "simulated")});
  EXPECT_THAT(routed.set_power_limit("GPU-9", 300),
              StatusIs(Errc::kNotFound, "GPU-9: no such device"));
  EXPECT_THAT(routed.set_power_limit("SIM-1", 300),
              StatusIs(Errc::kUnsupported, "SIM-1: simulated devices cannot be controlled here"));
}

// A source that says it is NVML's, for the actuator choice.
class NamedNvml final : public SensorSource {
 public:
  [[nodiscard]] std::string name() const override { return "nvml"; }
  [[nodiscard]] Result<std::vector<DeviceSample>> read() override {
    return std::vector<DeviceSample>{};
  }
};

TEST(GovernorLoopTest, ControlOfGpusWithoutNvmlIsUnavailable) {
  NamedNvml nvml;
  GovernorSettings settings;
  settings.allow_control = true;
  settings.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  EXPECT_THAT(GovernorLoop::create(settings, {&nvml}),
              StatusIs(Errc::kUnavailable, HasSubstr("allow_control: ")));
  settings.allow_control = false;  // a dry run needs no actuator
  EXPECT_THAT(GovernorLoop::create(settings, {&nvml}), IsOk());
}

TEST(GovernorLoopTest, NoDeviceToGovernIsUnavailableBeforeAnyRound) {
  std::vector<std::unique_ptr<SensorSource>> sources;
  sources.push_back(std::make_unique<NamedNvml>());  // NVML loaded, no GPU
  auto loop = GovernorLoop::create(GovernorSettings{}, {sources[0].get()});
  ASSERT_THAT(loop, IsOk());
  GovernorLoopOptions options;
  options.interval = std::chrono::milliseconds(1);
  options.duration = std::chrono::seconds(1);
  const core::StopFlag stop;
  EXPECT_THAT(loop->run(sources, options, stop),
              StatusIs(Errc::kUnavailable, HasSubstr("no device to govern")));
}

TEST(GovernorLoopTest, NoDeviceErrorStartsWithItsMarker) {
  std::vector<std::unique_ptr<SensorSource>> sources;
  sources.push_back(std::make_unique<NamedNvml>());
  auto loop = GovernorLoop::create(GovernorSettings{}, {sources[0].get()});
  ASSERT_THAT(loop, IsOk());
  GovernorLoopOptions options;
  options.interval = std::chrono::milliseconds(1);
  options.duration = std::chrono::seconds(1);
  const auto ran = loop->run(sources, options, core::StopFlag{});
  ASSERT_FALSE(ran);
  EXPECT_TRUE(ran.error().message.starts_with(kNoDeviceToGovern)) << ran.error().message;
}

TEST(GovernorLoopTest, ACapNoDeviceTakesIsRefusedNamingTheModeBeforeAnyRound) {
  SimulatedClock clock(1'700'000'000'000'000'000);
  std::vector<std::unique_ptr<SensorSource>> sources;
  sources.push_back(
      std::make_unique<SimulatedSource>(2, SimulatedScenario::kCompute, clock.clock()));
  GovernorSettings settings;
  ASSERT_THAT(parse_governor_mode("cap:5000", settings.options), IsOk());
  std::vector<Action> logged;
  auto loop = GovernorLoop::create(settings, {sources[0].get()},
                                   [&](const Action& a) { logged.push_back(a); });
  ASSERT_THAT(loop, IsOk());
  GovernorLoopOptions options;
  options.interval = std::chrono::seconds(1);
  options.duration = std::chrono::seconds(5);
  options.simulated_clock = &clock;
  EXPECT_THAT(loop->run(sources, options, core::StopFlag{}),
              StatusIs(Errc::kInvalidArgument, HasSubstr("mode: cap:5000 is above every device")));
  EXPECT_TRUE(logged.empty()) << "refused before the first action";
}

TEST(GovernorLoopTest, RunsOnSimulatedTimeAndRestoresTheLimitsItSet) {
  SimulatedClock clock(1'700'000'000'000'000'000);
  std::vector<std::unique_ptr<SensorSource>> sources;
  sources.push_back(
      std::make_unique<SimulatedSource>(2, SimulatedScenario::kCompute, clock.clock()));
  GovernorSettings settings;
  ASSERT_THAT(parse_governor_mode("cap:300", settings.options), IsOk());
  settings.allow_control = true;
  std::vector<Action> logged;
  auto loop = GovernorLoop::create(settings, {sources[0].get()},
                                   [&logged](const Action& a) { logged.push_back(a); });
  ASSERT_THAT(loop, IsOk());
  EXPECT_FALSE(loop->uses_state_file());  // simulated devices keep no state file

  GovernorLoopOptions options;
  options.interval = std::chrono::seconds(1);
  options.duration = std::chrono::seconds(10);
  options.simulated_clock = &clock;
  const core::StopFlag stop;
  const auto report = loop->run(sources, options, stop);
  ASSERT_THAT(report, IsOk());
  EXPECT_EQ(report->rounds, 10U);
  EXPECT_DOUBLE_EQ(report->duration_seconds, 10);
  EXPECT_TRUE(report->simulated_time);
  EXPECT_EQ(report->stopped_by, core::kStoppedByDuration);
  EXPECT_TRUE(report->read_errors.empty());
  EXPECT_EQ(report->actions.size(), logged.size());
  int capped = 0;
  int restored = 0;
  for (const Action& a : report->actions) {
    EXPECT_TRUE(a.applied) << a.reason;
    capped += a.kind == ActionKind::kSetPowerLimit && a.value == 300 ? 1 : 0;
    restored += a.kind == ActionKind::kRestore ? 1 : 0;
  }
  EXPECT_EQ(capped, 2);
  EXPECT_EQ(restored, 2);
  EXPECT_EQ(report->status.mode, "cap:300");
  EXPECT_TRUE(report->status.allow_control);
  EXPECT_EQ(report->status.devices.size(), 2U);

  const auto j = to_json(*report);
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) {
    keys.push_back(key);
  }
  EXPECT_THAT(keys, ElementsAre("schema", "mode", "allow_control", "simulated_time",
                                "duration_seconds", "rounds", "stopped_by", "status", "actions"));
  EXPECT_EQ(j["schema"], "acco.power-run/1");
  EXPECT_EQ(j["rounds"], 10);
  EXPECT_EQ(j["status"], to_json(report->status));
  EXPECT_EQ(j["actions"].size(), report->actions.size());
  EXPECT_EQ(j["actions"][0], to_json(report->actions[0]));
}

TEST(GovernorLoopTest, AStopRequestEndsARealTimeRunWithItsReason) {
  std::vector<std::unique_ptr<SensorSource>> sources;
  sources.push_back(std::make_unique<SimulatedSource>(1, SimulatedScenario::kIdle));
  auto loop = GovernorLoop::create({}, {sources[0].get()});
  ASSERT_THAT(loop, IsOk());
  core::StopFlag stop;
  stop.request("SIGTERM");
  GovernorLoopOptions options;
  options.interval = std::chrono::milliseconds(100);
  const auto report = loop->run(sources, options, stop);
  ASSERT_THAT(report, IsOk());
  EXPECT_EQ(report->stopped_by, "SIGTERM");
  EXPECT_EQ(report->rounds, 1U);
  EXPECT_FALSE(report->simulated_time);
  EXPECT_FALSE(report->status.allow_control);
}

std::filesystem::path scratch_file(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("acco-power-status-" + std::to_string(::getpid()) + "-" + name);
}

TEST(PowerStatusTest, ReadsEveryDeviceAndSaysNothingWasLeftChanged) {
  std::vector<std::unique_ptr<SensorSource>> sources;
  sources.push_back(std::make_unique<SimulatedSource>(2, SimulatedScenario::kPowerCapped));
  const auto status = read_power_status(sources, scratch_file("absent.json"), "off");
  ASSERT_EQ(status.samples.size(), 2U);
  EXPECT_TRUE(status.read_errors.empty());
  ASSERT_THAT(status.unrestored, IsOk());
  EXPECT_TRUE(status.unrestored->empty());
  EXPECT_EQ(status_state(status.samples[0]), "normal");
  const auto j = to_json(status);
  EXPECT_EQ(j["schema"], "acco.power-status/1");
  EXPECT_EQ(j["nvml"], "off");
  EXPECT_EQ(j["devices"].size(), 2U);
  EXPECT_EQ(j["devices"][0]["state"], "normal");
  EXPECT_TRUE(j["devices"][0]["throttle_reasons"].is_array());
  EXPECT_EQ(j["unrestored"], nlohmann::ordered_json::array());
  EXPECT_FALSE(j.contains("state_file_error"));
}

TEST(PowerStatusTest, AStateFileThatIsNotOneLeavesWhatWasChangedUnknown) {
  const auto path = scratch_file("bad.json");
  std::ofstream(path) << "not json";
  std::vector<std::unique_ptr<SensorSource>> sources;
  const auto status = read_power_status(sources, path, "off");
  std::filesystem::remove(path);
  EXPECT_THAT(status.unrestored, StatusIs(Errc::kInvalidArgument));
  const auto j = to_json(status);
  EXPECT_TRUE(j["unrestored"].is_null());
  EXPECT_THAT(j["state_file_error"].get<std::string>(), HasSubstr("bad.json"));
}

TEST(PowerStatusTest, ClockEventReasonsAreNamedInBitOrder) {
  DeviceSample s;
  s.clock_event_reasons = clock_event::kSwThermalSlowdown | clock_event::kSwPowerCap;
  EXPECT_THAT(clock_event_reasons(s), ElementsAre("sw_power_cap", "sw_thermal"));
  s.lost = true;
  EXPECT_EQ(status_state(s), "lost");
}

}  // namespace
}  // namespace acco::power
