#include "copy_cost.hpp"

#include <chrono>

#include <gtest/gtest.h>

namespace acco::sched::detail {
namespace {

using std::chrono::nanoseconds;

TEST(CopyCostModelTest, AnUnknownLinkIsAssumedToRunAtTheDefaultRate) {
  const CopyCostModel model(0, 0);
  EXPECT_DOUBLE_EQ(model.link_rate(), kDefaultLinkBytesPerSecond);
  EXPECT_DOUBLE_EQ(model.seconds(24'000'000'000), 1.0);
}

TEST(CopyCostModelTest, ACopyCostsTheLatencyPlusBytesOverTheLinkRate) {
  const CopyCostModel model(1e9, 10e-6);
  EXPECT_DOUBLE_EQ(model.fixed_s(), 10e-6);
  EXPECT_DOUBLE_EQ(model.seconds(1'000'000), 10e-6 + 1e-3);
}

TEST(CopyCostModelTest, TheLearnedExtraWaitsForThreeSamplesThenTakesTheirMedian) {
  CopyCostModel model(1e9, 10e-6);
  // 1 MB modelled at 1 ms + 10 us; each copy took 100, 300 and then 200 us more than that.
  const auto took = [](double extra_s) {
    return nanoseconds(static_cast<std::int64_t>((1e-3 + 10e-6 + extra_s) * 1e9));
  };
  model.note(1, 1'000'000, took(100e-6));
  model.note(1, 1'000'000, took(300e-6));
  EXPECT_DOUBLE_EQ(model.fixed_s(), 10e-6);  // two samples: the link's figures alone
  model.note(1, 1'000'000, took(200e-6));
  EXPECT_NEAR(model.fixed_s(), 10e-6 + 200e-6, 1e-8);
}

TEST(CopyCostModelTest, CopiesIssuedTogetherMakeOneSampleSharedBetweenThem) {
  CopyCostModel model(1e9, 0);
  // Two copies of 1 MB in all, 1 ms modelled, took 1.4 ms: 200 us more per copy.
  for (int i = 0; i < 3; ++i) {
    model.note(2, 1'000'000, nanoseconds(1'400'000));
  }
  EXPECT_NEAR(model.fixed_s(), 200e-6, 1e-9);
}

TEST(CopyCostModelTest, ACopyFasterThanModelledAddsNothingAndNoCopiesAreIgnored) {
  CopyCostModel model(1e9, 0);
  for (int i = 0; i < 3; ++i) {
    model.note(1, 1'000'000, nanoseconds(500'000));
  }
  EXPECT_DOUBLE_EQ(model.fixed_s(), 0);
  model.note(0, 0, nanoseconds(1'000'000'000));
  EXPECT_DOUBLE_EQ(model.fixed_s(), 0);
}

TEST(CopyCostModelTest, OnlyTheLastSamplesCount) {
  CopyCostModel model(1e9, 0);
  for (std::size_t i = 0; i < CopyCostModel::kSamples; ++i) {
    model.note(1, 0, nanoseconds(1'000'000));  // 1 ms extra
  }
  for (std::size_t i = 0; i < CopyCostModel::kSamples; ++i) {
    model.note(1, 0, nanoseconds(2'000));  // 2 us extra
  }
  EXPECT_NEAR(model.fixed_s(), 2e-6, 1e-12);
}

}  // namespace
}  // namespace acco::sched::detail
