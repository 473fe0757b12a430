#include "acco/power/simulated_device.hpp"

#include <cmath>
#include <cstdint>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"

namespace acco::power {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::HasSubstr;

SimulatedLoad busy(double activity = 0.8) {
  return {.utilization = 1, .activity = activity};
}

TEST(SimulatedDeviceTest, IdleDeviceStaysAtItsIdleSteadyState) {
  SimulatedDevice d(0);
  d.advance(600);
  const auto s = d.sample(1);
  EXPECT_NEAR(*s.temperature_gpu_celsius, 30, 1);  // 25 + 75 W x 0.07 K/W
  EXPECT_NEAR(*s.power_watts, 75, 0.1);
  EXPECT_EQ(*s.sm_clock_hertz, 345e6);
  EXPECT_EQ(*s.clock_event_reasons, clock_event::kGpuIdle);
  EXPECT_EQ(*s.utilization_ratio, 0);
}

TEST(SimulatedDeviceTest, LoadStepJumpsFastThenCreepsWithTheHeatsink) {
  SimulatedDevice d(0);
  const double start = d.junction_celsius();
  d.set_load(busy());  // 75 + 0.8 x 625 = 575 W
  d.advance(3);
  const double after_jump = d.junction_celsius();
  // The junction rises by about (575 - 75) W x 0.02 K/W = 10 K within seconds.
  EXPECT_GT(after_jump - start, 8);
  EXPECT_LT(after_jump - start, 13);
  d.advance(1200);
  // Then the heatsink (tau about 80 s) carries it to 25 + 575 x 0.07 = 65 C.
  EXPECT_NEAR(d.junction_celsius(), 65.25, 1);
  EXPECT_NEAR(d.power_watts(), 575, 0.5);
  EXPECT_EQ(d.speed_ratio(), 1);
  EXPECT_EQ(*d.sample(1).clock_event_reasons, 0U);
}

TEST(SimulatedDeviceTest, PowerLimitLowersTheClockUntilPowerHoldsIt) {
  SimulatedDevice d(0);
  ASSERT_THAT(d.set_power_limit(300), IsOk());
  d.set_load(busy(1.0));
  d.advance(10);
  const auto s = d.sample(1);
  EXPECT_NEAR(*s.power_watts, 300, 0.5);
  EXPECT_EQ(*s.power_limit_enforced_watts, 300);
  EXPECT_TRUE((*s.clock_event_reasons & clock_event::kSwPowerCap) != 0);
  EXPECT_NEAR(s.throttle_seconds.at("power"), 10, 0.11);
  // (300 - 75) / 625 = (f / f_max)^2.5
  EXPECT_NEAR(d.speed_ratio(), std::pow(225.0 / 625.0, 1 / 2.5), 1e-3);
}

TEST(SimulatedDeviceTest, PowerLimitOutsideTheRangeIsRejectedAndKept) {
  SimulatedDevice d(0);
  EXPECT_THAT(d.set_power_limit(150), StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(d.set_power_limit(800), StatusIs(Errc::kInvalidArgument));
  const auto status = d.set_power_limit(std::nan(""));
  ASSERT_FALSE(status.has_value());
  EXPECT_THAT(status.error().message, HasSubstr("outside [200, 700] W"));
  EXPECT_EQ(d.enforced_limit_watts(), 700);
  ASSERT_THAT(d.set_power_limit(400), IsOk());
  d.reset_power_limit();
  EXPECT_EQ(d.enforced_limit_watts(), 700);
}

TEST(SimulatedDeviceTest, FailedFanBringsSwThermalSlowdownAndHoldsBelowShutdown) {
  SimulatedDevice d(0);
  d.set_cooling_factor(4);
  d.set_temperatures(82, 80);
  d.set_load(busy(1.0));
  bool sw_thermal = false;
  double lowest_clock = 2e9;
  for (int i = 0; i < 600; ++i) {
    d.advance(1);
    const auto s = d.sample(i);
    ASSERT_FALSE(s.lost) << "at " << i << " s";
    sw_thermal = sw_thermal || (*s.clock_event_reasons & clock_event::kSwThermalSlowdown) != 0;
    lowest_clock = std::min(lowest_clock, *s.sm_clock_hertz);
    EXPECT_LT(*s.temperature_gpu_celsius, 92);
  }
  EXPECT_TRUE(sw_thermal);
  EXPECT_LT(lowest_clock, 0.9 * 1980e6);
  EXPECT_GT(d.sample(0).throttle_seconds.at("sw_thermal"), 0);
}

TEST(SimulatedDeviceTest, NoAirflowEndsInHwSlowdownThenThermalShutdown) {
  SimulatedDevice d(0);
  d.set_cooling_factor(60);
  d.set_load(busy(1.0));
  bool hw_thermal = false;
  for (int i = 0; i < 7200 && !d.lost(); ++i) {
    d.advance(1);
    const auto s = d.sample(i);
    hw_thermal =
        hw_thermal || (!s.lost && (*s.clock_event_reasons & clock_event::kHwThermalSlowdown) != 0);
  }
  EXPECT_TRUE(hw_thermal);
  ASSERT_TRUE(d.lost());
  const auto s = d.sample(7);
  EXPECT_TRUE(s.lost);
  EXPECT_FALSE(s.temperature_gpu_celsius.has_value());  // a lost device reports nothing
  EXPECT_EQ(d.speed_ratio(), 0);
}

TEST(SimulatedDeviceTest, PowerIsReportedAsAOneSecondMovingAverage) {
  SimulatedDevice d(0);
  d.advance(5);
  d.set_load(busy());
  d.advance(0.5);
  const double reported = *d.sample(1).power_watts;
  EXPECT_GT(reported, 100);
  EXPECT_LT(reported, 500);  // the instantaneous 575 W shows only after a full second
  d.advance(1);
  EXPECT_NEAR(*d.sample(1).power_watts, 575, 0.5);
}

TEST(SimulatedDeviceTest, EnergyIsTheIntegralOfPower) {
  SimulatedDevice d(0);
  d.advance(100);
  EXPECT_NEAR(*d.sample(1).energy_joules, 7500, 1);
  d.set_load(busy());
  d.advance(10);
  EXPECT_NEAR(*d.sample(1).energy_joules, 7500 + 5750, 1);
}

TEST(SimulatedDeviceTest, PcieTrafficIsCappedAtTheLinkPeak) {
  SimulatedDevice d(0);
  d.set_load(
      {.utilization = 0.2, .pcie_rx_bytes_per_second = 100e9, .pcie_tx_bytes_per_second = 1e9});
  d.advance(1);
  const auto s = d.sample(1);
  EXPECT_EQ(*s.pcie_rx_bytes_per_second, 53.6e9);
  EXPECT_EQ(*s.pcie_tx_bytes_per_second, 1e9);
}

TEST(SimulatedDeviceTest, UnsupportedSeriesAreOmitted) {
  SimulatedModel model;
  model.memory_temperature_supported = false;
  SimulatedDevice d(3, model);
  const auto s = d.sample(1);
  EXPECT_FALSE(s.temperature_memory_celsius.has_value());
  EXPECT_TRUE(s.nvlinks.empty());
  EXPECT_EQ(s.device, "3");
  EXPECT_EQ(s.source, "simulated");
  EXPECT_THAT(s.uuid, ::testing::StartsWith("SIM-"));
}

TEST(SimulatedSourceTest, EachReadAdvancesByTheClockAndFollowsTheCycle) {
  std::int64_t now = 1'000'000'000;
  SimulatedSource source(2, SimulatedScenario::kCycle, [&] { return now; });
  auto first = source.read();
  ASSERT_THAT(first, IsOk());
  ASSERT_EQ(first->size(), 2U);
  EXPECT_EQ((*first)[0].time_unix_nanos, now);
  now += 20'000'000'000;  // 20 s: device 0 idles (phase 0), device 1 computes (phase 1)
  auto second = source.read();
  ASSERT_THAT(second, IsOk());
  EXPECT_EQ(*(*second)[0].utilization_ratio, 0);
  EXPECT_EQ(*(*second)[1].utilization_ratio, 1);
  EXPECT_NEAR(*(*second)[0].energy_joules, 20 * 75, 1);
  EXPECT_GT(*(*second)[1].energy_joules, 20 * 500);
}

TEST(SimulatedSourceTest, ScenariosSetUpTheirDevices) {
  std::int64_t now = 1;
  SimulatedSource capped(1, SimulatedScenario::kPowerCapped, [&] { return now; });
  ASSERT_THAT(capped.read(), IsOk());
  now += 30'000'000'000;
  const auto s = capped.read();
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(*(*s)[0].power_limit_enforced_watts, 300);
  EXPECT_TRUE((*(*s)[0].clock_event_reasons & clock_event::kSwPowerCap) != 0);
  EXPECT_THAT(capped.with_device(1, [](SimulatedDevice&) {}), StatusIs(Errc::kInvalidArgument));
}

TEST(SimulatedSourceTest, UnknownScenarioNamesTheChoices) {
  EXPECT_THAT(parse_simulated_scenario("thermal-throttle"), IsOk());
  const auto bad = parse_simulated_scenario("hot");
  ASSERT_FALSE(bad.has_value());
  EXPECT_THAT(bad.error().message, HasSubstr("unknown scenario 'hot' (expected cycle, idle"));
}

}  // namespace
}  // namespace acco::power
