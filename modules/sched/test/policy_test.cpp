#include "acco/sched/policy.hpp"

#include <gtest/gtest.h>

#include "device_views.hpp"

namespace acco::sched {
namespace {

using test_views::device;

TEST(PolicyTest, NamesRoundTripAndUnknownNamesAreRejected) {
  for (PolicyKind kind : all_policies()) {
    auto parsed = policy_from_string(to_string(kind));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, kind);
  }
  auto bad = policy_from_string("fastest");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, Errc::kInvalidArgument);
  EXPECT_NE(bad.error().message.find("fastest"), std::string::npos);
  EXPECT_NE(bad.error().message.find("dmda"), std::string::npos);
}

TEST(PolicyTest, EagerUsesTheSharedQueue) {
  SystemView view{0, {device(0, 1.0)}, 0};
  EXPECT_EQ(select_device(PolicyKind::kEager, view, {}).device, -1);
}

TEST(PolicyTest, RoundRobinTakesTheNextEligibleDevice) {
  SystemView view{0, {device(0, 1.0), device(0, 1.0), device(0, 1.0)}, 1};
  view.devices[1].eligible = false;
  EXPECT_EQ(select_device(PolicyKind::kRoundRobin, view, {}).device, 2);
  view.round_robin_next = 2;
  view.devices[2].eligible = false;
  EXPECT_EQ(select_device(PolicyKind::kRoundRobin, view, {}).device, 0);
}

TEST(PolicyTest, LeastLoadedCountsQueuedTasksPerUnitOfWeightAndSpeed) {
  SystemView view{0, {device(0, 1.0), device(0, 1.0)}, 0};
  view.devices[0].queued = 2;
  view.devices[1].queued = 3;
  EXPECT_EQ(select_device(PolicyKind::kLeastLoaded, view, {}).device, 0);
  view.devices[1].relative_speed = 2;  // 1.5 per unit of speed
  EXPECT_EQ(select_device(PolicyKind::kLeastLoaded, view, {}).device, 1);
  view.devices[1].weight = 0.5;  // 3 per unit again
  EXPECT_EQ(select_device(PolicyKind::kLeastLoaded, view, {}).device, 0);
}

TEST(PolicyTest, DmdaPicksTheEarliestExpectedEnd) {
  // dev0 is free now but slow; dev1 is busy for 1 s but runs the task in 0.1 s.
  SystemView view{10, {device(10, 2.0), device(11, 0.1)}, 0};
  const Decision d = select_device(PolicyKind::kDmda, view, {});
  EXPECT_EQ(d.device, 1);
  EXPECT_DOUBLE_EQ(d.expected_end, 11.1);
  EXPECT_NE(d.reason.find("dmda: dev1"), std::string::npos);
  EXPECT_NE(d.reason.find("next best dev0"), std::string::npos);
}

TEST(PolicyTest, DmdaCountsTransfersInTheStartAndThePenalty) {
  // Same run time; dev0 must fetch 0.5 s of data, dev1 has it but is busy for 0.3 s.
  SystemView view{0, {device(0, 1.0, 0.5), device(0.3, 1.0, 0)}, 0};
  EXPECT_EQ(select_device(PolicyKind::kDmda, view, {}).device, 1);
  // With less to fetch dev0 ends first; the transfer penalty (beta = 1) still favours dev1.
  view.devices[0].transfer = 0.2;
  EXPECT_EQ(select_device(PolicyKind::kDmda, view, {1, 0}).device, 0);
  EXPECT_EQ(select_device(PolicyKind::kDmda, view, {1, 1}).device, 1);
}

TEST(PolicyTest, DmdaStretchesPredictionsOfAWeightedDevice) {
  SystemView view{0, {device(0, 1.0), device(0, 1.5)}, 0};
  EXPECT_EQ(select_device(PolicyKind::kDmda, view, {}).device, 0);
  view.devices[0].weight = 0.5;  // throttled: 2 s there
  const Decision d = select_device(PolicyKind::kDmda, view, {});
  EXPECT_EQ(d.device, 1);
  EXPECT_DOUBLE_EQ(d.predicted, 1.5);
}

TEST(PolicyTest, DmdaNeverPicksAnIneligibleDevice) {
  SystemView view{0, {device(0, 0.001), device(5, 1.0)}, 0};
  view.devices[0].eligible = false;  // drained
  EXPECT_EQ(select_device(PolicyKind::kDmda, view, {}).device, 1);
  view.devices[1].eligible = false;
  EXPECT_EQ(select_device(PolicyKind::kDmda, view, {}).device, -1);
}

TEST(PolicyTest, DmdaWithoutAnyModelFallsBackToTheLightestQueue) {
  SystemView view{0, {device(0, std::nullopt), device(0, std::nullopt)}, 0};
  view.devices[0].queued = 4;
  view.devices[1].queued = 1;
  const Decision d = select_device(PolicyKind::kDmda, view, {});
  EXPECT_EQ(d.device, 1);
  EXPECT_NE(d.reason.find("no model there yet"), std::string::npos);
}

TEST(PolicyTest, DmdaSendsATaskWhereNoModelKnowsItSoTheModelCalibrates) {
  SystemView view{0, {device(0, 0.001), device(0, std::nullopt), device(0, std::nullopt)}, 0};
  view.devices[1].queued = 3;
  const Decision d = select_device(PolicyKind::kDmda, view, {});
  EXPECT_EQ(d.device, 2);
  EXPECT_NE(d.reason.find("calibrating"), std::string::npos);
}

TEST(PolicyTest, AStealPaysOnlyWhenTheThiefFinishesFirstTransfersIncluded) {
  DeviceView victim = device(5, 1.0);
  DeviceView thief = device(0, 2.0, 1.0);
  EXPECT_TRUE(steal_pays(victim, thief, 0));  // 3 s < 5 s
  thief.transfer = 4;
  EXPECT_FALSE(steal_pays(victim, thief, 0));  // 6 s > 5 s
  thief.eligible = false;
  EXPECT_FALSE(steal_pays(victim, device(0, 0.1), 10));  // victim already free at 5 < 10
  DeviceView unknown = device(0, std::nullopt);
  DeviceView queue = device(0, std::nullopt);
  queue.queued = 1;
  EXPECT_FALSE(steal_pays(queue, unknown, 0));
  queue.queued = 2;
  EXPECT_TRUE(steal_pays(queue, unknown, 0));
}

}  // namespace
}  // namespace acco::sched
