#include "acco/core/json.hpp"

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"

namespace acco::core {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(JsonTest, ParseErrorNamesTheInputAndPosition) {
  auto r = parse_json("{\"a\": }", "snap.json");
  EXPECT_THAT(r,
              StatusIs(Errc::kInvalidArgument, AllOf(HasSubstr("snap.json"), HasSubstr("line 1"))));
}

TEST(JsonTest, AtomicWriteReplacesContentAndLeavesNoTemporary) {
  const auto dir = std::filesystem::temp_directory_path() / "acco_json_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto path = (dir / "out.json").string();
  ASSERT_THAT(write_file_atomic(path, "first"), IsOk());
  ASSERT_THAT(write_file_atomic(path, "second"), IsOk());
  EXPECT_EQ(read_text_file(path).value(), "second");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);
  std::filesystem::remove_all(dir);
}

TEST(JsonTest, AtomicWriteIntoMissingDirectoryFailsCleanly) {
  auto r = write_file_atomic("/nonexistent-acco-dir/out.json", "x");
  EXPECT_THAT(r, StatusIs(Errc::kNotFound));
}

TEST(JsonTest, ErrcNamesRoundTrip) {
  EXPECT_EQ(errc_from_string(to_string(Errc::kUnavailable)).value(), Errc::kUnavailable);
  EXPECT_THAT(errc_from_string("bogus"), Not(IsOk()));
}

}  // namespace
}  // namespace acco::core
