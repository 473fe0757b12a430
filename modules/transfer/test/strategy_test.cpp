#include "acco/transfer/strategy.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "acco/testing/matchers.hpp"

namespace acco::transfer {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using device::MemoryKind;

constexpr DeviceTraits kMapped{true};
constexpr DeviceTraits kUnmapped{false};

Profile profile() {
  Profile p;
  p.queues = 3;
  p.split_above_bytes = 1 << 20;
  p.zero_copy_below_bytes = 16 << 10;
  p.register_after_uses = 4;
  return p;
}

CopyPlan plan(MemoryKind dst, MemoryKind src, std::size_t bytes, DeviceTraits traits = kUnmapped,
              int uses = 1) {
  return plan_copy({dst, src, bytes, uses}, profile(), traits);
}

TEST(PlanCopyTest, ZeroBytesIsNone) {
  EXPECT_EQ(plan(MemoryKind::kDevice, MemoryKind::kPageable, 0).strategy, Strategy::kNone);
}

TEST(PlanCopyTest, HostToHostIsAHostCopy) {
  EXPECT_EQ(plan(MemoryKind::kPinned, MemoryKind::kPageable, 1 << 20).strategy,
            Strategy::kHostCopy);
}

TEST(PlanCopyTest, DmaCapableHostMemoryGoesDirectOnOneQueue) {
  for (MemoryKind host : {MemoryKind::kPinned, MemoryKind::kRegistered, MemoryKind::kMapped}) {
    EXPECT_EQ(plan(MemoryKind::kDevice, host, 1 << 20), (CopyPlan{Strategy::kDirect, false, 1}));
    EXPECT_EQ(plan(host, MemoryKind::kDevice, 1 << 20), (CopyPlan{Strategy::kDirect, false, 1}));
  }
}

TEST(PlanCopyTest, CopiesAboveTheSplitSizeUseEveryQueue) {
  EXPECT_EQ(plan(MemoryKind::kDevice, MemoryKind::kPinned, (1 << 20) + 1).queues, 3);
  EXPECT_EQ(plan(MemoryKind::kDevice, MemoryKind::kDevice, 8 << 20),
            (CopyPlan{Strategy::kDirect, false, 3}));
}

TEST(PlanCopyTest, PageableMemoryIsPipelinedInBothDirections) {
  EXPECT_EQ(plan(MemoryKind::kDevice, MemoryKind::kPageable, 1 << 20).strategy,
            Strategy::kPipelined);
  EXPECT_EQ(plan(MemoryKind::kPageable, MemoryKind::kDevice, 1 << 20).strategy,
            Strategy::kPipelined);
}

TEST(PlanCopyTest, SmallCopiesAreZeroCopyWhenDeviceMemoryIsMapped) {
  EXPECT_EQ(plan(MemoryKind::kDevice, MemoryKind::kPageable, 4096, kMapped).strategy,
            Strategy::kZeroCopy);
  EXPECT_EQ(plan(MemoryKind::kPinned, MemoryKind::kDevice, (16 << 10) - 1, kMapped).strategy,
            Strategy::kZeroCopy);
  EXPECT_EQ(plan(MemoryKind::kDevice, MemoryKind::kPageable, 16 << 10, kMapped).strategy,
            Strategy::kPipelined);
}

TEST(PlanCopyTest, NoZeroCopyWithoutAHostMappingOfDeviceMemory) {
  EXPECT_EQ(plan(MemoryKind::kDevice, MemoryKind::kPageable, 4096, kUnmapped).strategy,
            Strategy::kPipelined);
}

TEST(PlanCopyTest, APageableBufferIsRegisteredOnItsKthUse) {
  EXPECT_EQ(plan(MemoryKind::kDevice, MemoryKind::kPageable, 1 << 20, kUnmapped, 3),
            (CopyPlan{Strategy::kPipelined, false, 1}));
  EXPECT_EQ(plan(MemoryKind::kDevice, MemoryKind::kPageable, 1 << 20, kUnmapped, 4),
            (CopyPlan{Strategy::kDirect, true, 1}));
}

TEST(PlanCopyTest, RegistrationIsOffWhenTheThresholdIsZero) {
  Profile p = profile();
  p.register_after_uses = 0;
  EXPECT_EQ(
      plan_copy({MemoryKind::kDevice, MemoryKind::kPageable, 1 << 20, 1000}, p, kUnmapped).strategy,
      Strategy::kPipelined);
}

TEST(PlanCopyTest, UnstagedPageableMemoryGoesDirectInBothDirections) {
  Profile p = profile();
  p.stage_pageable = false;
  EXPECT_EQ(plan_copy({MemoryKind::kDevice, MemoryKind::kPageable, 1 << 20, 1}, p, kUnmapped),
            (CopyPlan{Strategy::kDirect, false, 1}));
  EXPECT_EQ(plan_copy({MemoryKind::kPageable, MemoryKind::kDevice, 2 << 20, 1}, p, kUnmapped),
            (CopyPlan{Strategy::kDirect, false, 3}));
  // Registration, when asked for, still comes first; small mapped copies stay zero-copy.
  EXPECT_EQ(plan_copy({MemoryKind::kDevice, MemoryKind::kPageable, 1 << 20, 4}, p, kUnmapped),
            (CopyPlan{Strategy::kDirect, true, 1}));
  EXPECT_EQ(plan_copy({MemoryKind::kDevice, MemoryKind::kPageable, 4096, 1}, p, kMapped).strategy,
            Strategy::kZeroCopy);
}

TEST(PlanCopyTest, DirectionFollowsTheDeviceEnds) {
  EXPECT_EQ(direction_of(MemoryKind::kDevice, MemoryKind::kMapped), Direction::kHostToDevice);
  EXPECT_EQ(direction_of(MemoryKind::kPageable, MemoryKind::kDevice), Direction::kDeviceToHost);
  EXPECT_EQ(direction_of(MemoryKind::kDevice, MemoryKind::kDevice), Direction::kDeviceToDevice);
  EXPECT_EQ(direction_of(MemoryKind::kPinned, MemoryKind::kPageable), Direction::kHostToHost);
}

TEST(StrategyTest, NamesRoundTrip) {
  for (Strategy s : {Strategy::kNone, Strategy::kHostCopy, Strategy::kDirect, Strategy::kPipelined,
                     Strategy::kBatched, Strategy::kZeroCopy}) {
    const auto back = strategy_from_string(to_string(s));
    ASSERT_THAT(back, IsOk());
    EXPECT_EQ(*back, s);
  }
}

TEST(StrategyTest, UnknownNameListsTheKnownOnes) {
  const auto s = strategy_from_string("teleport");
  ASSERT_THAT(s, StatusIs(Errc::kInvalidArgument, ::testing::HasSubstr("pipelined")));
}

TEST(CopyRecordTest, JsonNamesStrategyDirectionAndKinds) {
  CopyRecord r;
  r.strategy = Strategy::kPipelined;
  r.direction = Direction::kDeviceToHost;
  r.src_kind = MemoryKind::kDevice;
  r.bytes = 42;
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j.at("strategy"), "pipelined");
  EXPECT_EQ(j.at("direction"), "device-to-host");
  EXPECT_EQ(j.at("src_kind"), device::to_string(MemoryKind::kDevice));
  EXPECT_EQ(j.at("bytes"), 42);
}

}  // namespace
}  // namespace acco::transfer
