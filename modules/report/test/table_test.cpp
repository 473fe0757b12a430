#include "acco/report/table.hpp"

#include <gtest/gtest.h>

namespace acco::report {
namespace {

TEST(TableTest, ColumnsAreAsWideAsTheirWidestCellAndTheLastIsNotPadded) {
  const auto table = plain_table({{"GPU0", "X", "NV18"}, {"NIC10", "PIX", "x"}});
  EXPECT_EQ(render_table(table),
            "  GPU0   X    NV18\n"
            "  NIC10  PIX  x\n");
}

TEST(TableTest, IndentAndGapAreTheStyles) {
  const auto table = plain_table({{"a", "bb", "c"}, {"ddd", "e", "f"}}, TableStyle::layout(0, 1));
  EXPECT_EQ(render_table(table),
            "a   bb c\n"
            "ddd e  f\n");
}

TEST(TableTest, AHeaderLineComesFromTheColumnsAndRightAlignedColumnsArePaddedOnTheLeft) {
  Table table{.columns = {{"case", Align::kLeft}, {"GB/s", Align::kRight}, {"note", Align::kLeft}},
              .rows = {{"h2d", "25.1", "ok"}, {"d2d_peer", "312.0", "x"}},
              .style = TableStyle::layout(0, 2)};
  EXPECT_EQ(render_table(table),
            "case       GB/s  note\n"
            "h2d        25.1  ok\n"
            "d2d_peer  312.0  x\n");
}

TEST(TableTest, AShortRowEndsInFreeTextThatDoesNotWidenItsColumn) {
  Table table{
      .columns = {{"case"}, {"device"}, {"median"}},
      .rows = {{"h2d", "GPU0", "25 GB/s"}, {"d2d_peer", "waived: one GPU, no peer to copy to"}},
      .style = TableStyle::layout(0, 2)};
  EXPECT_EQ(render_table(table),
            "case      device  median\n"
            "h2d       GPU0    25 GB/s\n"
            "d2d_peer  waived: one GPU, no peer to copy to\n");
}

TEST(TableTest, NoLineEndsInBlanksWhenItsLastCellsAreEmpty) {
  const auto table = plain_table({{"alpha", "", ""}, {"b", "c", "d"}});
  EXPECT_EQ(render_table(table),
            "  alpha\n"
            "  b      c  d\n");
}

TEST(TableTest, StylesAreOnlyAppliedInColourAndNeverCountInTheWidth) {
  Table table{.columns = {{"ID"}, {"STATE"}},
              .rows = {{"0", Cell("hot", "\x1b[31m")}, {"12", "ok"}},
              .style = {.indent = 0, .gap = 2, .colour = true, .header_style = "\x1b[1m"}};
  EXPECT_EQ(render_table(table),
            "\x1b[1mID\x1b[0m  \x1b[1mSTATE\x1b[0m\n"
            "0   \x1b[31mhot\x1b[0m\n"
            "12  ok\n");
  table.style.colour = false;
  EXPECT_EQ(render_table(table),
            "ID  STATE\n"
            "0   hot\n"
            "12  ok\n");
}

TEST(TableTest, AnEmptyTableRendersNothing) {
  EXPECT_EQ(render_table(Table{}), "");
}

}  // namespace
}  // namespace acco::report
