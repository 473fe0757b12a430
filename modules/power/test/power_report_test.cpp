#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/power/report.hpp"
#include "acco/report/document.hpp"

namespace acco::power {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  for (const char c : text) {
    if (c == '\n') {
      lines.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  if (!line.empty()) {
    lines.push_back(line);
  }
  return lines;
}

DeviceSample hot_gpu() {
  DeviceSample s;
  s.device = "0";
  s.uuid = "GPU-0";
  s.model = "NVIDIA H100";
  s.temperature_gpu_celsius = 85;
  s.threshold_gpu_max_celsius = 87;
  s.power_watts = 612.4;
  s.power_limit_enforced_watts = 500;
  s.power_limit_default_watts = 700;
  s.power_limit_min_watts = 200;
  s.power_limit_max_watts = 700;
  s.clock_event_reasons = clock_event::kSwPowerCap;
  return s;
}

PowerStatus status_with(Result<std::vector<SavedDevice>> unrestored) {
  PowerStatus status;
  status.nvml = "on";
  status.samples = {hot_gpu()};
  status.unrestored = std::move(unrestored);
  return status;
}

TEST(PowerReportTest, StatusNamesTheDevicesAndTabulatesEach) {
  const auto text = report::render_text(status_report(status_with(std::vector<SavedDevice>{})));
  const auto lines = lines_of(text);
  ASSERT_EQ(lines.size(), 3U) << text;
  EXPECT_EQ(lines[0], "acco power status: 1 device(s) (NVML on)");
  EXPECT_THAT(lines[1], ::testing::StartsWith("  DEVICE MODEL       STATE TEMP POWER LIMIT"));
  EXPECT_THAT(lines[2], HasSubstr("85 C"));
  EXPECT_THAT(lines[2], HasSubstr("612 W"));
  EXPECT_THAT(lines[2], HasSubstr("sw_power_cap"));
  EXPECT_THAT(text, Not(HasSubstr("did not restore")));
}

TEST(PowerReportTest, StatusSaysWhichLimitsAPreviousGovernorLeftChanged) {
  const std::vector<SavedDevice> left = {
      {.uuid = "GPU-0", .device = "0", .original_limit_watts = 700, .set_limit_watts = 450},
      {.uuid = "GPU-1", .device = "1", .original_limit_watts = 350, .set_limit_watts = 300}};
  const auto lines = lines_of(report::render_text(status_report(status_with(left))));
  ASSERT_EQ(lines.size(), 5U);
  EXPECT_THAT(lines[3], HasSubstr("GPU-0 was set to 450 W by a governor that did not restore it "
                                  "(original 700 W); the next acco power run --allow-control "
                                  "restores it"));
  EXPECT_THAT(lines[4], HasSubstr("GPU-1 was set to 300 W"));
  EXPECT_THAT(lines[4], HasSubstr("(original 350 W)"));
}

TEST(PowerReportTest, StatusWithAnUnreadableStateFileClaimsNothingUnrestored) {
  const auto text = report::render_text(
      status_report(status_with(fail(Errc::kInvalidArgument, "state.json: not JSON"))));
  EXPECT_EQ(lines_of(text).size(), 3U) << text;
  EXPECT_THAT(text, Not(HasSubstr("did not restore")));
}

TEST(PowerReportTest, StatusWithoutDevicesIsItsFirstLineAlone) {
  PowerStatus status;
  status.nvml = "unavailable (libnvidia-ml.so.1: not found)";
  status.unrestored = std::vector<SavedDevice>{};
  EXPECT_EQ(report::render_text(status_report(status)),
            "acco power status: 0 device(s) (NVML unavailable (libnvidia-ml.so.1: not found))\n");
}

GovernorReport run_report(bool allow_control) {
  GovernorReport r;
  r.rounds = 60;
  r.duration_seconds = 59;
  r.stopped_by = "SIGTERM";
  r.status.mode = "thermal";
  r.status.allow_control = allow_control;
  r.status.devices = {
      {.device = "0",
       .uuid = "GPU-0",
       .state = GovernorState::kHot,
       .limit_watts = 450,
       .weight = 0.5},
      {.device = "1", .uuid = "GPU-1", .state = GovernorState::kNormal},
      {.device = "2", .uuid = "GPU-2", .lost = true},
      {.device = "3", .uuid = "GPU-3", .energy_cap_watts = 410},
  };
  r.status.hands_off = {{"GPU-1", "limit changed by someone else"}};
  Action applied;
  applied.applied = true;
  r.actions = {applied, Action{}, Action{}};
  return r;
}

TEST(PowerReportTest, GovernorRunCountsRoundsActionsAndWhatWasApplied) {
  const auto lines = lines_of(report::render_text(governor_report(run_report(true))));
  ASSERT_EQ(lines.size(), 6U);
  EXPECT_EQ(
      lines[0],
      "acco power run: 60 round(s) over 59.00 s (stopped by SIGTERM); 3 action(s), 1 applied");
}

TEST(PowerReportTest, GovernorDryRunSaysHowToApply) {
  const auto lines = lines_of(report::render_text(governor_report(run_report(false))));
  ASSERT_FALSE(lines.empty());
  EXPECT_THAT(lines[0], ::testing::EndsWith("1 applied (dry-run: give --allow-control to apply)"));
}

TEST(PowerReportTest, GovernorRowsGiveStateLimitWeightAndWhy) {
  const auto lines = lines_of(report::render_text(governor_report(run_report(true))));
  ASSERT_EQ(lines.size(), 6U);
  EXPECT_EQ(lines[1], "  DEVICE STATE  LIMIT    WEIGHT NOTE");
  EXPECT_EQ(lines[2], "  0      hot    450 W    0.50");
  EXPECT_EQ(lines[3], "  1      normal as found 1.00   left alone: limit changed by someone else");
  EXPECT_EQ(lines[4], "  2      normal as found 1.00   lost");
  EXPECT_EQ(lines[5], "  3      normal as found 1.00   energy cap 410 W");
}

}  // namespace
}  // namespace acco::power
