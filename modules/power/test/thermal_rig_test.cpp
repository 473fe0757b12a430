#include "acco/power/thermal_rig.hpp"

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace acco::power {
namespace {

ThermalRigOptions rig_options(int devices, double time_scale = 60) {
  ThermalRigOptions o;
  o.devices = devices;
  o.time_scale = time_scale;
  return o;
}

TEST(ThermalRigTest, BadOptionsAreRejected) {
  EXPECT_EQ(ThermalRig::create(rig_options(0)).error().message,
            "thermal rig: 0 devices: expected at least 1");
  EXPECT_EQ(ThermalRig::create(rig_options(1, 0.5)).error().message,
            "thermal rig: time scale 0.5: expected >= 1");
}

TEST(ThermalRigTest, AKernelMakesItsDeviceBusyAndWarmerThanAnIdleOne) {
  auto rig = ThermalRig::create(rig_options(2, 100));
  ASSERT_TRUE(rig.has_value());
  (void)(*rig)->read();
  ASSERT_TRUE((*rig)->run_kernel(0, 0.2));
  auto samples = (*rig)->read();
  ASSERT_TRUE(samples.has_value());
  const auto totals = (*rig)->totals();
  EXPECT_GT(totals[0].busy_seconds, 10) << "0.2 s of wall time at 100x";
  EXPECT_EQ(totals[1].busy_seconds, 0);
  EXPECT_GT(*samples->at(0).temperature_gpu_celsius, *samples->at(1).temperature_gpu_celsius);
  EXPECT_GT(samples->at(0).time_unix_nanos, 0);
}

TEST(ThermalRigTest, ALowerClockMakesTheSameKernelTakeLonger) {
  auto rig = ThermalRig::create(rig_options(1, 10));
  ASSERT_TRUE(rig.has_value());
  const auto timed = [&] {
    const auto begin = std::chrono::steady_clock::now();
    EXPECT_TRUE((*rig)->run_kernel(0, 0.05));
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  };
  const double fast = timed();
  ASSERT_TRUE((*rig)->with_device(0, [](SimulatedDevice& d) { d.lock_sm_clock(990e6); }));
  (void)(*rig)->read();
  const double slow = timed();
  EXPECT_GT(slow, 1.6 * fast) << fast << " s at full clock, " << slow << " s at half";
}

TEST(ThermalRigTest, TheActuatorSetsLimitsByTheUuidTheSamplesCarry) {
  auto rig = ThermalRig::create(rig_options(2));
  ASSERT_TRUE(rig.has_value());
  auto actuator = (*rig)->actuator();
  auto samples = (*rig)->read();
  ASSERT_TRUE(samples.has_value());
  ASSERT_TRUE(actuator->set_power_limit(samples->at(1).uuid, 350).has_value());
  EXPECT_EQ((*rig)->read()->at(1).power_limit_enforced_watts, 350);
  const auto out_of_range = actuator->set_power_limit(samples->at(1).uuid, 100);
  ASSERT_FALSE(out_of_range.has_value());
  EXPECT_EQ(out_of_range.error().code, Errc::kInvalidArgument);
  EXPECT_EQ(actuator->set_power_limit("GPU-nope", 300).error().code, Errc::kNotFound);
  EXPECT_EQ(actuator->lock_sm_clocks(samples->at(0).uuid, 0, 0).error().code,
            Errc::kInvalidArgument);
}

TEST(ThermalRigTest, TicksArriveInSimulatedTime) {
  auto rig = ThermalRig::create(rig_options(1, 60));
  ASSERT_TRUE(rig.has_value());
  std::atomic<int> ticks{0};
  std::atomic<double> last{0};
  (*rig)->start_ticks(1, [&](const std::vector<DeviceSample>& samples, double now) {
    EXPECT_EQ(samples.size(), 1U);
    last = now;
    ++ticks;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  (*rig)->stop_ticks();
  EXPECT_GE(ticks.load(), 5) << "about 18 ticks of 1 simulated second in 0.3 s at 60x";
  EXPECT_GT(last.load(), 5.0);
}

TEST(ThermalRigTest, AKernelOnALostDeviceFails) {
  auto rig = ThermalRig::create(rig_options(1, 1000));
  ASSERT_TRUE(rig.has_value());
  ASSERT_TRUE((*rig)->with_device(0, [](SimulatedDevice& d) {
    d.set_cooling_factor(20);
    d.set_temperatures(91.9, 91);
    d.set_load({.utilization = 1});
    d.advance(5);
  }));
  EXPECT_FALSE((*rig)->run_kernel(0, 0.01));
}

}  // namespace
}  // namespace acco::power
