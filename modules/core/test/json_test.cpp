#include "acco/core/json.hpp"

#include <filesystem>

#include <gtest/gtest.h>

namespace acco::core {
namespace {

TEST(JsonTest, ParseErrorNamesTheInputAndPosition) {
  auto r = parse_json("{\"a\": }", "snap.json");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
  EXPECT_NE(r.error().message.find("snap.json"), std::string::npos);
  EXPECT_NE(r.error().message.find("line 1"), std::string::npos);
}

TEST(JsonTest, AtomicWriteReplacesContentAndLeavesNoTemporary) {
  const auto dir = std::filesystem::temp_directory_path() / "acco_json_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto path = (dir / "out.json").string();
  ASSERT_TRUE(write_file_atomic(path, "first").has_value());
  ASSERT_TRUE(write_file_atomic(path, "second").has_value());
  EXPECT_EQ(read_text_file(path).value(), "second");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);
  std::filesystem::remove_all(dir);
}

TEST(JsonTest, AtomicWriteIntoMissingDirectoryFailsCleanly) {
  auto r = write_file_atomic("/nonexistent-acco-dir/out.json", "x");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, Errc::kNotFound);
}

TEST(JsonTest, ErrcNamesRoundTrip) {
  EXPECT_EQ(errc_from_string(to_string(Errc::kUnavailable)).value(), Errc::kUnavailable);
  EXPECT_FALSE(errc_from_string("bogus").has_value());
}

}  // namespace
}  // namespace acco::core
