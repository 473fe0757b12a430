#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "acco/sched/policy.hpp"

#include "device_views.hpp"

namespace acco::sched {
namespace {

using test_views::device;

TEST(PolicyObjectTest, EachKindHasItsOwnObjectAndTraits) {
  for (PolicyKind kind : all_policies()) {
    const std::unique_ptr<Policy> p = make_policy(kind);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->kind(), kind);
    EXPECT_EQ(p->shared_queue(), kind == PolicyKind::kEager) << to_string(kind);
    EXPECT_EQ(p->steals(), kind == PolicyKind::kWorkStealing) << to_string(kind);
    EXPECT_EQ(p->plans_graphs(), kind == PolicyKind::kHeft) << to_string(kind);
  }
}

TEST(PolicyObjectTest, PlacesWhereTheirPureSelectionDoesWhenNoRuleApplies) {
  SystemView view{10, {device(10, 2.0), device(11, 0.1), device(10.5, 0.2)}, 0};
  view.devices[0].queued = 3;
  for (PolicyKind kind : {PolicyKind::kLeastLoaded, PolicyKind::kDmda, PolicyKind::kHeft,
                          PolicyKind::kWorkStealing}) {
    SystemView v = view;
    std::string why;
    EXPECT_EQ(make_policy(kind)->place(v, {}, -1, &why), select_device(kind, view, {}).device)
        << to_string(kind);
    EXPECT_TRUE(why.empty()) << to_string(kind);
  }
  SystemView v = view;
  EXPECT_EQ(make_policy(PolicyKind::kEager)->place(v, {}, -1, nullptr), -1);
}

TEST(PolicyObjectTest, RoundRobinKeepsItsTurnAndLeavesItInTheView) {
  const std::unique_ptr<Policy> p = make_policy(PolicyKind::kRoundRobin);
  SystemView view{0, {device(0, 1.0), device(0, 1.0), device(0, 1.0)}, 0};
  EXPECT_EQ(p->place(view, {}, -1, nullptr), 0);
  EXPECT_EQ(p->place(view, {}, -1, nullptr), 1);
  view.devices[2].eligible = false;
  EXPECT_EQ(p->place(view, {}, -1, nullptr), 0);
  // The view says whose turn it was, so the reason can be formatted from it later.
  EXPECT_EQ(view.round_robin_next, 2u);
  EXPECT_EQ(select_device(PolicyKind::kRoundRobin, view, {}).device, 0);
  EXPECT_EQ(p->place(view, {}, -1, nullptr), 1);
}

TEST(PolicyObjectTest, WorkStealingKeepsAReleasedTaskOnItsProducerWithinTwentyPercent) {
  const std::unique_ptr<Policy> p = make_policy(PolicyKind::kWorkStealing);
  // dev1 ends at 1.0 s; dev0, the producer, at 1.15 s: within 20 %.
  SystemView view{0, {device(0.15, 1.0), device(0, 1.0)}, 0};
  std::string why;
  EXPECT_EQ(p->place(view, {}, 0, &why), 0);
  EXPECT_EQ(why, "ws: dev0 produced its input and ends within 20 % of the best");
  EXPECT_EQ(p->place(view, {}, 0, nullptr), 0);
  // At 1.3 s it is not: dmda's choice stands and no reason of its own is given.
  view.devices[0].available_at = 0.3;
  why.clear();
  EXPECT_EQ(p->place(view, {}, 0, &why), 1);
  EXPECT_TRUE(why.empty());
  // A producer that cannot run it, or no producer, leaves dmda's choice.
  view.devices[0].available_at = 0.15;
  view.devices[0].eligible = false;
  EXPECT_EQ(p->place(view, {}, 0, nullptr), 1);
  view.devices[0].eligible = true;
  EXPECT_EQ(p->place(view, {}, -1, nullptr), 1);
}

}  // namespace
}  // namespace acco::sched
