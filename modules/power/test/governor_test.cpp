#include "acco/power/governor.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "acco/power/simulated_device.hpp"

namespace acco::power {
namespace {

// An H100-class sample: thresholds 87/89/92, limits [200, 700], default 700.
DeviceSample gpu(double celsius, double utilization = 1, double limit = 700) {
  DeviceSample s;
  s.device = "0";
  s.uuid = "GPU-0";
  s.source = "test";
  s.temperature_gpu_celsius = celsius;
  s.threshold_gpu_max_celsius = 87;
  s.threshold_slowdown_celsius = 89;
  s.threshold_shutdown_celsius = 92;
  s.power_watts = 75 + 625 * utilization;
  s.power_limit_requested_watts = limit;
  s.power_limit_enforced_watts = limit;
  s.power_limit_default_watts = 700;
  s.power_limit_min_watts = 200;
  s.power_limit_max_watts = 700;
  s.utilization_ratio = utilization;
  s.sm_clock_hertz = 1980e6;
  s.sm_clock_max_hertz = 1980e6;
  s.clock_event_reasons = 0;
  return s;
}

GovernorOptions no_following() {
  GovernorOptions o;
  o.load_following = false;
  return o;
}

std::vector<Action> of_kind(const std::vector<Action>& actions, ActionKind kind) {
  std::vector<Action> out;
  std::copy_if(actions.begin(), actions.end(), std::back_inserter(out),
               [kind](const Action& a) { return a.kind == kind; });
  return out;
}

GovernorState state_of(const Governor& g) {
  return g.devices().at(0).state;
}

TEST(GovernorTest, ACoolDeviceAtTheDefaultLimitNeedsNoAction) {
  Governor g(no_following());
  for (int t = 0; t < 10; ++t) {
    EXPECT_TRUE(g.step({gpu(60)}, t).empty()) << t;
  }
  EXPECT_EQ(state_of(g), GovernorState::kNormal);
}

TEST(GovernorTest, WarmNeedsThreeSamplesAtTMaxMinusTen) {
  Governor g(no_following());
  (void)g.step({gpu(77)}, 0);
  (void)g.step({gpu(77)}, 1);
  EXPECT_EQ(state_of(g), GovernorState::kNormal);
  const auto actions = g.step({gpu(77)}, 2);
  EXPECT_EQ(state_of(g), GovernorState::kWarm);
  const auto logs = of_kind(actions, ActionKind::kLog);
  ASSERT_EQ(logs.size(), 1U);
  EXPECT_EQ(logs[0].reason, "normal -> warm: T 77 C >= 77 C (T_max 87 - 10) for 3 samples");
}

TEST(GovernorTest, ASampleBelowTheWarmThresholdRestartsTheCount) {
  Governor g(no_following());
  (void)g.step({gpu(77)}, 0);
  (void)g.step({gpu(77)}, 1);
  (void)g.step({gpu(76)}, 2);
  (void)g.step({gpu(77)}, 3);
  (void)g.step({gpu(77)}, 4);
  EXPECT_EQ(state_of(g), GovernorState::kNormal);
  (void)g.step({gpu(77)}, 5);
  EXPECT_EQ(state_of(g), GovernorState::kWarm);
}

TEST(GovernorTest, WarmLowersTheLimitAboveTheTargetAndNeverBelowTheMinimum) {
  Governor g(no_following());
  for (int t = 0; t < 3; ++t) {
    (void)g.step({gpu(80)}, t);
  }
  ASSERT_EQ(state_of(g), GovernorState::kWarm);
  double last = 700;
  // 2 K above the 80 C target: -80 W at once, then the integral adds -1 W per second.
  for (int t = 3; t < 700; ++t) {
    const auto actions = g.step({gpu(82, 1, last)}, t);
    for (const Action& a : of_kind(actions, ActionKind::kSetPowerLimit)) {
      EXPECT_LE(a.value, last);
      EXPECT_GE(a.value, 200);
      EXPECT_LE(last - a.value, 35.0 + 1e-9) << "slew limit";
      last = a.value;
    }
  }
  EXPECT_DOUBLE_EQ(last, 200);
}

TEST(GovernorTest, TheIntegralDoesNotWindUpWhileTheLimitIsAtItsMaximum) {
  Governor g(no_following());
  for (int t = 0; t < 3; ++t) {
    (void)g.step({gpu(78, 0.2)}, t);
  }
  ASSERT_EQ(state_of(g), GovernorState::kWarm);
  // Long below target (e > 0) at the maximum: no integral builds up...
  for (int t = 3; t < 25; ++t) {
    (void)g.step({gpu(76, 0.2)}, t);
  }
  // ...so the first sample above target cuts the limit at once.
  const auto actions = g.step({gpu(82, 0.2)}, 25);
  const auto limits = of_kind(actions, ActionKind::kSetPowerLimit);
  ASSERT_EQ(limits.size(), 1U);
  EXPECT_LT(limits[0].value, 700);
}

TEST(GovernorTest, WarmReturnsToNormalOnlyAfterThirtySecondsAtTMaxMinusFifteen) {
  Governor g(no_following());
  for (int t = 0; t < 3; ++t) {
    (void)g.step({gpu(80)}, t);
  }
  (void)g.step({gpu(85 - 3)}, 3);
  for (int t = 4; t < 33; ++t) {
    (void)g.step({gpu(72)}, t);
  }
  EXPECT_EQ(state_of(g), GovernorState::kWarm);
  (void)g.step({gpu(73)}, 33);  // above the exit threshold: the dwell starts again
  for (int t = 34; t < 63; ++t) {
    (void)g.step({gpu(72)}, t);
  }
  EXPECT_EQ(state_of(g), GovernorState::kWarm);
  (void)g.step({gpu(72)}, 64);
  EXPECT_EQ(state_of(g), GovernorState::kNormal);
  EXPECT_EQ(g.devices().at(0).limit_watts, 700) << "cool again: the default limit";
}

TEST(GovernorTest, ADeviceLeavingHotForNormalGetsItsDefaultLimitBack) {
  Governor g(no_following());
  (void)g.step({gpu(83)}, 0);  // hot: 200 W
  double limit = 200;
  for (int t = 1; t < 200 && state_of(g) != GovernorState::kNormal; ++t) {
    for (const Action& a : of_kind(g.step({gpu(60, 1, limit)}, t), ActionKind::kSetPowerLimit)) {
      limit = a.value;
    }
  }
  EXPECT_EQ(state_of(g), GovernorState::kNormal);
  EXPECT_DOUBLE_EQ(limit, 700);
}

TEST(GovernorTest, HotSetsTheMinimumLimitAndStopsNewWork) {
  Governor g(no_following());
  const auto actions = g.step({gpu(83)}, 0);
  EXPECT_EQ(state_of(g), GovernorState::kHot);
  const auto limits = of_kind(actions, ActionKind::kSetPowerLimit);
  ASSERT_EQ(limits.size(), 1U);
  EXPECT_DOUBLE_EQ(limits[0].value, 200);
  const auto stop = of_kind(actions, ActionKind::kNoNewWork);
  ASSERT_EQ(stop.size(), 1U);
  EXPECT_DOUBLE_EQ(stop[0].value, 1);
  EXPECT_EQ(of_kind(actions, ActionKind::kSetWeight).at(0).value, 0.25);
}

TEST(GovernorTest, SwThermalSlowdownMakesADeviceHotWhateverItsTemperature) {
  Governor g(no_following());
  DeviceSample s = gpu(70);
  s.clock_event_reasons = clock_event::kSwThermalSlowdown;
  (void)g.step({s}, 0);
  EXPECT_EQ(state_of(g), GovernorState::kHot);
}

TEST(GovernorTest, DrainingEvacuatesLocksClocksAndReturnsAfterTwoMinutesCool) {
  Governor g(no_following());
  const auto in = g.step({gpu(87)}, 0);
  EXPECT_EQ(state_of(g), GovernorState::kDraining);
  EXPECT_EQ(of_kind(in, ActionKind::kDrain).at(0).value, 1);
  EXPECT_EQ(of_kind(in, ActionKind::kLockClocks).at(0).value, 990e6);
  for (int t = 1; t < 120; ++t) {
    (void)g.step({gpu(72, 0, 200)}, t);
  }
  EXPECT_EQ(state_of(g), GovernorState::kDraining);
  const auto out = g.step({gpu(72, 0, 200)}, 121);
  EXPECT_EQ(state_of(g), GovernorState::kWarm);
  EXPECT_EQ(of_kind(out, ActionKind::kDrain).at(0).value, 0);
  EXPECT_EQ(of_kind(out, ActionKind::kUnlockClocks).size(), 1U);
  EXPECT_EQ(of_kind(out, ActionKind::kNoNewWork).at(0).value, 0);
}

TEST(GovernorTest, AHotDeviceStillRisingAfterEightySecondsAtTheMinimumDrains) {
  Governor g(no_following());
  (void)g.step({gpu(83)}, 0);
  for (int t = 1; t < 81; ++t) {
    (void)g.step({gpu(83, 1, 200)}, t);
  }
  EXPECT_EQ(state_of(g), GovernorState::kHot) << "not rising";
  (void)g.step({gpu(84, 1, 200)}, 82);
  EXPECT_EQ(state_of(g), GovernorState::kDraining);
}

TEST(GovernorTest, TemperatureAroundAThresholdDoesNotOscillate) {
  Governor g(no_following());
  int transitions = 0;
  for (int t = 0; t < 600; ++t) {
    const double celsius = 77 + ((t / 2) % 2 == 0 ? 0.0 : -3.0);  // 77, 77, 74, 74, ...
    for (const Action& a : g.step({gpu(celsius)}, t)) {
      transitions += a.kind == ActionKind::kLog ? 1 : 0;
    }
  }
  EXPECT_EQ(transitions, 0) << "never three samples in a row at 77";
  for (int t = 600; t < 1200; ++t) {
    const double celsius = t % 40 < 20 ? 78.0 : 73.0;  // in and out of the band every 20 s
    for (const Action& a : g.step({gpu(celsius)}, t)) {
      transitions += a.kind == ActionKind::kLog ? 1 : 0;
    }
  }
  EXPECT_EQ(transitions, 1) << "warm once, and 20 s cool never meets the 30 s dwell";
}

TEST(GovernorTest, DecisionsComeAtMostOncePerPeriod) {
  GovernorOptions o = no_following();
  o.period_seconds = 1;
  Governor g(o);
  EXPECT_FALSE(g.step({gpu(83)}, 0).empty());
  EXPECT_TRUE(g.step({gpu(60)}, 0.5).empty());
}

TEST(GovernorTest, WeightFallsWithHeadroomBeforeTheDeviceIsWarm) {
  Governor g(no_following());
  EXPECT_TRUE(of_kind(g.step({gpu(66)}, 0), ActionKind::kSetWeight).empty());
  const auto w = of_kind(g.step({gpu(72)}, 1), ActionKind::kSetWeight);
  ASSERT_EQ(w.size(), 1U);
  // 72 C: 5 of the 16 K from 67 C to the hot threshold 83 C.
  EXPECT_NEAR(w[0].value, 1 - 0.75 * 5.0 / 16.0, 0.01);
  EXPECT_EQ(state_of(g), GovernorState::kNormal);
}

TEST(GovernorTest, CapModeHoldsTheCapClampedToTheDeviceRange) {
  GovernorOptions o;
  ASSERT_TRUE(parse_governor_mode("cap:150", o).has_value());
  Governor g(o);
  const auto limits = of_kind(g.step({gpu(50)}, 0), ActionKind::kSetPowerLimit);
  ASSERT_EQ(limits.size(), 1U);
  EXPECT_DOUBLE_EQ(limits[0].value, 200);
}

TEST(GovernorTest, LoadFollowingLowersTheCapOfALightlyLoadedDevice) {
  Governor g;  // thermal mode, load following on
  double limit = 700;
  for (int t = 0; t < 60; ++t) {
    for (const Action& a : of_kind(g.step({gpu(50, 0.3, limit)}, t), ActionKind::kSetPowerLimit)) {
      limit = a.value;
    }
  }
  // 0.6 x 700 + 0.4 x 700 x 0.3 = 504 W, within the 35 W dead band.
  EXPECT_NEAR(limit, 504, 35);
}

TEST(GovernorTest, ALostDeviceIsDrainedOnce) {
  Governor g;
  DeviceSample s;
  s.device = "0";
  s.uuid = "GPU-0";
  s.lost = true;
  const auto first = g.step({s}, 0);
  EXPECT_EQ(of_kind(first, ActionKind::kDrain).size(), 1U);
  EXPECT_TRUE(g.step({s}, 1).empty());
  EXPECT_TRUE(g.devices().at(0).lost);
}

TEST(GovernorTest, ADeviceWithoutThresholdsIsLoggedOnceAndOnlyCapped) {
  GovernorOptions o;
  ASSERT_TRUE(parse_governor_mode("cap:400", o).has_value());
  Governor g(o);
  DeviceSample s = gpu(95);
  s.threshold_gpu_max_celsius.reset();
  const auto actions = g.step({s}, 0);
  EXPECT_EQ(of_kind(actions, ActionKind::kLog).size(), 1U);
  EXPECT_EQ(of_kind(actions, ActionKind::kSetPowerLimit).at(0).value, 400);
  EXPECT_EQ(state_of(g), GovernorState::kNormal);
}

TEST(GovernorTest, FinishRestoresWhatItChangedAndReleasesTheScheduler) {
  Governor g(no_following());
  (void)g.step({gpu(83)}, 0);
  const auto actions = g.finish(1);
  EXPECT_EQ(of_kind(actions, ActionKind::kRestore).size(), 1U);
  EXPECT_EQ(of_kind(actions, ActionKind::kNoNewWork).at(0).value, 0);
  EXPECT_EQ(of_kind(actions, ActionKind::kSetWeight).at(0).value, 1);
  EXPECT_TRUE(g.finish(2).empty());
}

TEST(GovernorTest, ParseModeNamesTheFormsOnBadInput) {
  GovernorOptions o;
  for (const char* bad : {"", "cool", "cap:", "cap:-5", "cap:12x", "cap:nan"}) {
    const auto s = parse_governor_mode(bad, o);
    ASSERT_FALSE(s.has_value()) << bad;
    EXPECT_EQ(s.error().message, std::string("governor mode '") + bad +
                                     "': expected thermal, energy or cap:W (watts > 0)");
  }
  ASSERT_TRUE(parse_governor_mode("cap:300.5", o).has_value());
  EXPECT_EQ(mode_string(o), "cap:300.5");
}

// The energy sweep on a simulated device at 30 % load: the energy per unit of work falls with
// the cap while the device keeps up, so a lower cap than the default is chosen.
TEST(GovernorTest, EnergyModeChoosesALowerCapForALightLoadOnASimulatedDevice) {
  GovernorOptions o;
  ASSERT_TRUE(parse_governor_mode("energy", o).has_value());
  Governor g(o);
  SimulatedDevice d(0);
  double chosen = 0;
  for (int t = 0; t < 400; ++t) {
    d.set_load({.utilization = 0.3 / std::max(0.05, d.running_speed_ratio())});
    d.advance(1);
    for (const Action& a : g.step({d.sample(static_cast<std::int64_t>(t) * 1000000000)}, t)) {
      if (a.kind == ActionKind::kSetPowerLimit) {
        ASSERT_TRUE(d.set_power_limit(a.value).has_value());
      }
    }
    if (g.devices().at(0).energy_cap_watts) {
      chosen = *g.devices().at(0).energy_cap_watts;
      break;
    }
  }
  EXPECT_GT(chosen, 0) << "the sweep ends within 400 s";
  EXPECT_LT(chosen, 700);
}

TEST(CheckCapTest, ACapNoDeviceCanTakeIsRefusedWithTheRange) {
  GovernorOptions options;
  ASSERT_TRUE(parse_governor_mode("cap:5000", options));
  DeviceSample a;
  a.power_limit_min_watts = 100;
  a.power_limit_max_watts = 700;
  DeviceSample b;
  b.power_limit_min_watts = 150;
  b.power_limit_max_watts = 300;
  const auto above = check_cap(options, {a, b});
  ASSERT_FALSE(above);
  EXPECT_EQ(above.error().code, Errc::kInvalidArgument);
  EXPECT_EQ(above.error().message,
            "cap:5000 is above every device's maximum power limit (the devices accept 100 W to "
            "700 W)");
  options.cap_watts = 50;
  const auto below = check_cap(options, {a, b});
  ASSERT_FALSE(below);
  EXPECT_NE(below.error().message.find("below every device's minimum"), std::string::npos);
  options.cap_watts = 500;  // within a's range; b clamps it to 300 W
  EXPECT_TRUE(check_cap(options, {a, b}));
  options.cap_watts = 5000;
  EXPECT_TRUE(check_cap(options, {DeviceSample{}})) << "no range known: nothing to judge";
  options.mode = GovernorMode::kThermal;
  EXPECT_TRUE(check_cap(options, {a}));
}

}  // namespace
}  // namespace acco::power
