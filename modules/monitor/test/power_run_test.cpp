#include "acco/monitor/power_run.hpp"

#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace acco::monitor {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(PowerRunTest, SimulatedDevicesOnSimulatedTimeRunTheirDurationAndSayWhatTheyDo) {
  PowerRunOptions options;
  options.sources.simulate = 2;
  options.sources.nvml_mode = "off";
  options.sources.scenario = power::SimulatedScenario::kThermalThrottle;
  options.interval = 1000ms;
  options.duration = 120s;
  options.fast = true;
  std::vector<std::string> started;
  std::vector<std::string> actions;
  const core::StopFlag stop;
  const auto report =
      run_power(options, stop,
                {.started = [&](const std::string& line) { started.push_back(line); },
                 .action = [&](const std::string& line) { actions.push_back(line); }});
  ASSERT_TRUE(report.has_value()) << report.error().message;
  EXPECT_TRUE(report->simulated_time);
  EXPECT_EQ(report->stopped_by, core::kStoppedByDuration);
  EXPECT_GE(report->rounds, 100U);
  ASSERT_EQ(started.size(), 1U);
  EXPECT_EQ(started[0],
            "acco power run: mode thermal, dry-run (--allow-control applies), every 1.00 s on "
            "simulated time (NVML off)");
  EXPECT_EQ(actions.size(), report->actions.size());
}

TEST(PowerRunTest, NoDeviceToGovernSaysWhereItLookedAndHowToSimulate) {
  const auto root = std::filesystem::path(::testing::TempDir()) / "acco-power-run-empty";
  std::filesystem::create_directories(root);
  PowerRunOptions options;
  options.sysroot = root.string();
  options.sources.nvml_mode = "off";
  options.duration = 1s;
  const core::StopFlag stop;
  const auto report = run_power(options, stop);
  ASSERT_FALSE(report.has_value());
  EXPECT_THAT(report.error().message, StartsWith(std::string(power::kNoDeviceToGovern)));
  EXPECT_THAT(report.error().message,
              HasSubstr("(NVML off; --simulate N governs simulated devices)"));
}

TEST(PowerRunTest, StatusReadsTheGovernedDevicesAndAMissingStateFileAsNothingLeft) {
  const auto root = std::filesystem::path(::testing::TempDir()) / "acco-power-status-empty";
  std::filesystem::create_directories(root);  // no RAPL zones: the simulated devices alone
  SourceOptions sources;
  sources.simulate = 3;
  sources.nvml_mode = "off";
  const auto status = read_power_status(
      root.string(), sources,
      (std::filesystem::path(::testing::TempDir()) / "no-such-state.json").string());
  ASSERT_TRUE(status.has_value()) << status.error().message;
  EXPECT_EQ(status->nvml, "off");
  EXPECT_EQ(status->samples.size(), 3U);
  ASSERT_TRUE(status->unrestored.has_value());
  EXPECT_TRUE(status->unrestored->empty());
}

}  // namespace
}  // namespace acco::monitor

namespace acco::monitor {
namespace {

TEST(PowerRunCheckTest, FastNeedsSimulatedDevicesAndAShortEnoughDuration) {
  PowerRunOptions o;
  EXPECT_TRUE(check_power_run(o).has_value());  // not fast: nothing to check
  o.fast = true;
  const auto none = check_power_run(o);
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().code, Errc::kInvalidArgument);
  EXPECT_EQ(none.error().message,
            "--fast runs simulated devices on simulated time: give --simulate N and --duration D");
  o.sources.simulate = 2;
  o.duration = std::chrono::hours(24 * 365);
  o.interval = std::chrono::milliseconds(100);
  EXPECT_FALSE(check_power_run(o).has_value());
  o.duration = std::chrono::minutes(10);
  EXPECT_TRUE(check_power_run(o).has_value());
}

}  // namespace
}  // namespace acco::monitor
