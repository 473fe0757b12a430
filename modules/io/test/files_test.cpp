#include "files.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"

#include "io_test_support.hpp"

namespace acco::io::detail {
namespace {

using acco::testing::StatusIs;
using io::testing::DiskDir;
using io::testing::write_pattern;
using ::testing::HasSubstr;

TEST(PlanTest, AnAlignedRangeIsCutIntoWholeBlocks) {
  DiskDir dir;
  const auto path = write_pattern(dir.path() / "a", 3 << 20);
  auto plan = make_plan({{path, 0, std::nullopt}}, 1 << 20, true);
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  ASSERT_EQ(plan->blocks.size(), 3U);
  EXPECT_EQ(plan->bytes, 3U << 20);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(plan->blocks[i].file_offset, i << 20);
    EXPECT_EQ(plan->blocks[i].length, 1U << 20);
    EXPECT_EQ(plan->blocks[i].skip, 0U);
    EXPECT_EQ(plan->blocks[i].useful, 1U << 20);
    EXPECT_EQ(plan->blocks[i].dst_offset, i << 20);
  }
}

TEST(PlanTest, AnUnalignedHeadAndTailAreReadWholeAndTrimmed) {
  DiskDir dir;
  const auto path = write_pattern(dir.path() / "a", 100000);
  auto plan = make_plan({{path, 5000, 20000}}, 16384, true);
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  ASSERT_FALSE(plan->blocks.empty());
  const Block& first = plan->blocks.front();
  if (plan->files[0].direct()) {
    const std::uint64_t al = plan->files[0].alignment().offset;
    EXPECT_EQ(first.file_offset % al, 0U);
    EXPECT_EQ(first.file_offset + first.skip, 5000U);
    for (const Block& b : plan->blocks) {
      EXPECT_EQ(b.length % al, 0U);
    }
  } else {
    EXPECT_EQ(first.file_offset, 5000U);
  }
  std::uint64_t useful = 0;
  for (const Block& b : plan->blocks) {
    EXPECT_EQ(b.dst_offset, useful);
    useful += b.useful;
  }
  EXPECT_EQ(useful, 20000U);
  EXPECT_EQ(plan->bytes, 20000U);
}

TEST(PlanTest, RangesOfSeveralFilesFollowEachOtherAndAPathIsOpenedOnce) {
  DiskDir dir;
  const auto a = write_pattern(dir.path() / "a", 8192);
  const auto b = write_pattern(dir.path() / "b", 4096);
  auto plan = make_plan({{a, 0, 4096}, {b, 0, std::nullopt}, {a, 4096, std::nullopt}}, 4096, true);
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  EXPECT_EQ(plan->files.size(), 2U);
  ASSERT_EQ(plan->blocks.size(), 3U);
  EXPECT_EQ(plan->blocks[1].file, 1);
  EXPECT_EQ(plan->blocks[2].dst_offset, 8192U);
  EXPECT_EQ(plan->bytes, 12288U);
}

TEST(PlanTest, ARangePastTheEndNamesTheFileAndOffset) {
  DiskDir dir;
  const auto path = write_pattern(dir.path() / "a", 4096);
  auto plan = make_plan({{path, 4000, 200}}, 4096, true);
  ASSERT_FALSE(plan.has_value());
  EXPECT_EQ(plan.error().code, Errc::kInvalidArgument);
  EXPECT_THAT(plan.error().message, HasSubstr(path));
  EXPECT_THAT(plan.error().message, HasSubstr("offset 4000"));
}

TEST(PlanTest, AMissingFileIsNotFound) {
  DiskDir dir;
  auto plan = make_plan({{(dir.path() / "nope").string(), 0, std::nullopt}}, 4096, true);
  ASSERT_FALSE(plan.has_value());
  EXPECT_EQ(plan.error().code, Errc::kNotFound);
  EXPECT_THAT(plan.error().message, HasSubstr("nope: no such file"));
}

TEST(PlanTest, ADirectoryIsNotARegularFile) {
  DiskDir dir;
  auto plan = make_plan({{dir.path().string(), 0, std::nullopt}}, 4096, false);
  ASSERT_FALSE(plan.has_value());
  EXPECT_EQ(plan.error().code, Errc::kInvalidArgument);
}

TEST(PlanTest, AnEmptyRangeHasNoBlocks) {
  DiskDir dir;
  const auto path = write_pattern(dir.path() / "a", 4096);
  auto plan = make_plan({{path, 4096, std::nullopt}}, 4096, true);
  ASSERT_TRUE(plan.has_value());
  EXPECT_TRUE(plan->blocks.empty());
  EXPECT_EQ(plan->bytes, 0U);
}

TEST(AlignmentTest, ADiskFileReportsItsDirectIoAlignment) {
  DiskDir dir;
  const auto path = write_pattern(dir.path() / "a", 4096);
  auto f = OpenFile::open(path, true);
  ASSERT_TRUE(f.has_value()) << f.error().message;
  EXPECT_GE(f->alignment().offset, 1U);
  EXPECT_LE(f->alignment().offset, 65536U);
  EXPECT_THAT(f->alignment().source, ::testing::AnyOf("statx", "logical_block_size", "default"));
}

}  // namespace
}  // namespace acco::io::detail
