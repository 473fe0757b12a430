#include "acco/core/units.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"

namespace acco::units {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::Not;

TEST(UnitsTest, FormatsRatesWithDecimalPrefixes) {
  EXPECT_EQ(format_rate(31.5e9), "31.5 GB/s");
  EXPECT_EQ(format_rate(3.938e9), "3.94 GB/s");
  EXPECT_EQ(format_rate(500), "500 B/s");
}

TEST(UnitsTest, FormatsBytesWithBinaryPrefixes) {
  EXPECT_EQ(format_bytes(80ULL << 30), "80.0 GiB");
  EXPECT_EQ(format_bytes(4096), "4.00 KiB");
}

TEST(UnitsTest, FormatsBitRates) {
  EXPECT_EQ(format_bit_rate(400e9), "400.0 Gb/s");
}

TEST(UnitsTest, FormatsPercentages) {
  EXPECT_EQ(format_percent(0.83), "83%");
  EXPECT_EQ(format_percent(0.0834, 1), "8.3%");
  EXPECT_EQ(format_percent(1.5), "150%");
}

TEST(UnitsTest, ParsesIntegersStrictly) {
  EXPECT_EQ(parse_int(" 16\n").value(), 16);
  EXPECT_EQ(parse_int("-1").value(), -1);
  EXPECT_EQ(parse_int("0x10de", 16).value(), 0x10de);
  EXPECT_EQ(parse_int("0x030200", 0).value(), 0x030200);
  EXPECT_THAT(parse_int("16x"), Not(IsOk()));
  EXPECT_THAT(parse_int(""), Not(IsOk()));
  EXPECT_THAT(parse_int("fast"), StatusIs(Errc::kInvalidArgument));
}

TEST(UnitsTest, ParsesByteSizesWithBinaryAndDecimalPrefixes) {
  EXPECT_EQ(parse_bytes("4096").value(), 4096U);
  EXPECT_EQ(parse_bytes("64KiB").value(), 64U << 10);
  EXPECT_EQ(parse_bytes("256MiB").value(), 256U << 20);
  EXPECT_EQ(parse_bytes("1GiB").value(), 1ULL << 30);
  EXPECT_EQ(parse_bytes("2GB").value(), 2000000000ULL);
  EXPECT_THAT(parse_bytes("lots"), Not(IsOk()));
  EXPECT_THAT(parse_bytes("12 parsecs"), Not(IsOk()));
  EXPECT_THAT(parse_bytes(""), Not(IsOk()));
}

TEST(UnitsTest, ParsesCpuLists) {
  EXPECT_EQ(parse_cpulist("0-3,8,10-11\n").value(), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_TRUE(parse_cpulist("").value().empty());
  EXPECT_THAT(parse_cpulist("3-1"), Not(IsOk()));
  EXPECT_THAT(parse_cpulist("a-b"), Not(IsOk()));
}

TEST(UnitsTest, CpuListWithTrailingNulAndNewlineParses) {
  using namespace std::string_view_literals;
  EXPECT_EQ(parse_cpulist("0-31\n\0"sv).value().size(), 32U);
  EXPECT_EQ(parse_cpulist(" 0-1 \0\0"sv).value(), (std::vector<int>{0, 1}));
}

TEST(UnitsTest, ParseErrorsQuoteTheTextEscaped) {
  using namespace std::string_view_literals;
  const auto r = parse_cpulist("0-x\n\0junk"sv);
  ASSERT_THAT(r, StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(r.error().message, ::testing::HasSubstr("'0-x\\n\\0junk'"));
  EXPECT_EQ(r.error().message.find('\0'), std::string::npos);
  EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
  EXPECT_THAT(parse_int("1\x01"sv).error().message, ::testing::HasSubstr("'1\\x01'"));
}

TEST(UnitsTest, ParsesCpuMasksMostSignificantWordFirst) {
  EXPECT_EQ(parse_cpumask("00000000,0000ffff\n").value().size(), 16U);
  EXPECT_EQ(parse_cpumask("3").value(), (std::vector<int>{0, 1}));
  EXPECT_EQ(parse_cpumask("1,00000001").value(), (std::vector<int>{0, 32}));
  EXPECT_EQ(parse_cpumask("ff,00000000,00000000").value().front(), 64);
  EXPECT_TRUE(parse_cpumask("00000000").value().empty());
  EXPECT_TRUE(parse_cpumask("").value().empty());
  EXPECT_THAT(parse_cpumask("0-3"), StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(parse_cpumask("123456789"), StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(parse_cpumask("ff,,ff"), StatusIs(Errc::kInvalidArgument));
}

TEST(UnitsTest, ExcerptEscapesAndCutsLongTextSayingHowLongItWas) {
  using namespace std::string_view_literals;
  EXPECT_EQ(excerpt("short"), "short");
  EXPECT_EQ(excerpt(std::string(80, 'a')), std::string(80, 'a'));
  EXPECT_EQ(excerpt(std::string(81, 'a')), std::string(80, 'a') + "... (81 bytes)");
  // Never inside an escape: \xff (4 characters) does not fit after 78.
  EXPECT_EQ(excerpt(std::string(78, 'a') + "\xff", 80), std::string(78, 'a') + "... (79 bytes)");
  EXPECT_EQ(excerpt("\x01\x02"sv, 4), "\\x01... (2 bytes)");
  const std::string binary(4500, '\xd6');
  const std::string quoted = excerpt(binary);
  EXPECT_LE(quoted.size(), 80U + std::string("... (4500 bytes)").size());
  EXPECT_TRUE(
      std::all_of(quoted.begin(), quoted.end(), [](char c) { return c >= 0x20 && c < 0x7f; }));
}

TEST(UnitsTest, EscapeShowsControlBytesAndQuoteDropsTheAttributeNewline) {
  using namespace std::string_view_literals;
  EXPECT_EQ(escape("4: ACTIVE"), "4: ACTIVE");
  EXPECT_EQ(escape("a\\b\t\r\xff"sv), "a\\\\b\\t\\r\\xff");
  EXPECT_EQ(quote_attribute("0-31\n"), "0-31");
  EXPECT_EQ(quote_attribute("0-31\n\0"sv), "0-31\\n\\0");
  EXPECT_EQ(quote_attribute(""), "");
}

TEST(UnitsTest, CpuListRoundTripsInCompressedForm) {
  EXPECT_EQ(format_cpulist({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(format_cpulist({}), "");
}

TEST(UnitsTest, SplitKeepsEmptyFields) {
  EXPECT_EQ(split("a,,b", ','), (std::vector<std::string>{"a", "", "b"}));
}

TEST(UnitsTest, DurationsTakeTheirUnit) {
  EXPECT_EQ(parse_duration("250ms").value(), 0.25);
  EXPECT_EQ(parse_duration("1s").value(), 1);
  EXPECT_EQ(parse_duration(" 1.5s ").value(), 1.5);
  EXPECT_EQ(parse_duration("2m").value(), 120);
  EXPECT_EQ(parse_duration("1h").value(), 3600);
  EXPECT_EQ(parse_duration("7d").value(), 7 * 86400);
  EXPECT_EQ(parse_duration("30").value(), 30);
  for (const char* bad : {"", "s", "-1s", "1x", "1.2.3s", "fast"}) {
    const auto r = parse_duration(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_THAT(r.error().message, ::testing::HasSubstr("as a duration (expected e.g. 500ms"));
  }
}

}  // namespace
}  // namespace acco::units
