#include <chrono>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/device/host_backend.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::device {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using std::chrono::nanoseconds;
using ::testing::HasSubstr;
using ::testing::Not;

double lanes(double per_lane, int width) {
  return per_lane * width;
}

TEST(ParseLinkTest, Pcie4x16IsSixteenLanesOf128b130bAt16GTPerSecond) {
  const Result<EmulatedLink> link = parse_link("pcie4x16");
  ASSERT_THAT(link, IsOk());
  EXPECT_EQ(link->name, "pcie4x16");
  EXPECT_DOUBLE_EQ(link->bytes_per_second, lanes(16.0e9 * 128 / 130 / 8, 16));
  EXPECT_EQ(link->latency, kDefaultLinkLatency);
}

TEST(ParseLinkTest, ARateWithoutALatencyGetsADmaLikeDefaultAndZeroIsKept) {
  EXPECT_EQ(kDefaultLinkLatency, nanoseconds(2000));
  EXPECT_EQ(parse_link("25GB/s")->latency, kDefaultLinkLatency);
  EXPECT_EQ(parse_link("25GB/s,0us")->latency, nanoseconds(0));
  EXPECT_EQ(parse_link("25GB/s,0us")->name, "25GB/s,0us");
}

TEST(ParseLinkTest, EveryGenerationUsesItsEncodedLaneRate) {
  EXPECT_DOUBLE_EQ(parse_link("pcie1x1")->bytes_per_second, 0.25e9);
  EXPECT_DOUBLE_EQ(parse_link("pcie2x4")->bytes_per_second, lanes(0.5e9, 4));
  EXPECT_DOUBLE_EQ(parse_link("pcie3x8")->bytes_per_second, lanes(8.0e9 * 128 / 130 / 8, 8));
  EXPECT_DOUBLE_EQ(parse_link("pcie5x2")->bytes_per_second, lanes(32.0e9 * 128 / 130 / 8, 2));
  EXPECT_DOUBLE_EQ(parse_link("pcie6x16")->bytes_per_second, lanes(64.0e9 * 242 / 256 / 8, 16));
}

TEST(ParseLinkTest, UnlimitedHasNoBandwidthLimitAndNoLatency) {
  const Result<EmulatedLink> link = parse_link("unlimited");
  ASSERT_THAT(link, IsOk());
  EXPECT_EQ(*link, (EmulatedLink{"unlimited", 0, nanoseconds(0)}));
}

TEST(ParseLinkTest, ExplicitRatesTakeDecimalUnits) {
  EXPECT_DOUBLE_EQ(parse_link("25GB/s")->bytes_per_second, 25e9);
  EXPECT_DOUBLE_EQ(parse_link("800MB/s")->bytes_per_second, 800e6);
  EXPECT_DOUBLE_EQ(parse_link("1.5kB/s")->bytes_per_second, 1500);
  EXPECT_DOUBLE_EQ(parse_link("2048B/s")->bytes_per_second, 2048);
  EXPECT_FALSE(parse_link("512B/s"));  // below 1 kB/s: a copy would take hours
  EXPECT_FALSE(parse_link("1e-30GB/s"));
  EXPECT_FALSE(parse_link("20000GB/s"));
  EXPECT_EQ(parse_link("25GB/s")->name, "25GB/s");
}

TEST(ParseLinkTest, ALatencyFollowsAfterAComma) {
  const Result<EmulatedLink> link = parse_link("25GB/s,2us");
  ASSERT_THAT(link, IsOk());
  EXPECT_EQ(*link, (EmulatedLink{"25GB/s,2us", 25e9, nanoseconds(2000)}));
  EXPECT_EQ(parse_link("800MB/s,500ns")->latency, nanoseconds(500));
  EXPECT_EQ(parse_link("1GB/s, 1.5ms")->latency, nanoseconds(1'500'000));
  EXPECT_EQ(parse_link("pcie5x16,1us")->latency, nanoseconds(1000));
}

TEST(ParseLinkTest, BadSpecsAreInvalidArgumentsNamingTheAcceptedForms) {
  for (const std::string spec :
       {"",          "fast",        "pcie",           "pcie7x16",    "pcie0x16",
        "pcie4x3",   "pcie4x32",    "pcie4x",         "pciex16",     "pcie4x16x",
        "25",        "25GB",        "25 GB/s",        "-1GB/s",      "0GB/s",
        "infGB/s",   "nanGB/s",     "25gb/s",         "25GB/s,",     "25GB/s,2",
        "25GB/s,2s", "25GB/s,-2us", "25GB/s,2us,3us", "25GB/s,1e9ms"}) {
    const Result<EmulatedLink> link = parse_link(spec);
    ASSERT_THAT(link, StatusIs(Errc::kInvalidArgument)) << spec;
    EXPECT_THAT(link.error().message, HasSubstr("pcie<gen>x<width>"));
    EXPECT_THAT(link.error().message, Not(HasSubstr("\n")));
  }
}

}  // namespace
}  // namespace acco::device
