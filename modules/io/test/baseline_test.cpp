#include "acco/io/baseline.hpp"

#include <algorithm>
#include <filesystem>
#include <vector>

#include <gtest/gtest.h>

#include "io_test_support.hpp"

namespace acco::io {
namespace {

namespace fs = std::filesystem;
using testing::DiskDir;

TEST(FillTestFile, WritesPseudoRandomDataOnceAndLeavesNoTemporary) {
  const DiskDir dir;
  const std::string path = (dir.path() / "data").string();
  auto created = fill_test_file(path, (std::uint64_t{3} << 20) + 123);
  ASSERT_TRUE(created) << created.error().message;
  EXPECT_TRUE(*created);
  EXPECT_EQ(fs::file_size(path), (std::uint64_t{3} << 20) + 123);
  EXPECT_FALSE(fs::exists(path + ".acco-tmp"));
  std::vector<char> data((std::size_t{3} << 20) + 123);
  ASSERT_TRUE(read_buffered(path, data.data(), data.size()));
  // Not zeros, and the 1 MiB chunks differ from each other.
  EXPECT_NE(std::count(data.begin(), data.end(), 0), static_cast<long>(data.size()));
  EXPECT_FALSE(std::equal(data.begin(), data.begin() + (1 << 20), data.begin() + (1 << 20)));

  auto again = fill_test_file(path, std::uint64_t{1} << 20);  // large enough already
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again);
  EXPECT_EQ(fs::file_size(path), (std::uint64_t{3} << 20) + 123);
}

TEST(FillTestFile, GrowsASmallerFile) {
  const DiskDir dir;
  const std::string path = testing::write_pattern(dir.path() / "small", 4096);
  auto created = fill_test_file(path, 8192);
  ASSERT_TRUE(created);
  EXPECT_TRUE(*created);
  EXPECT_EQ(fs::file_size(path), 8192U);
}

TEST(FillTestFile, NamesTheFileItCannotWrite) {
  const DiskDir dir;
  const std::string path = (dir.path() / "missing-dir" / "data").string();
  auto created = fill_test_file(path, 4096);
  ASSERT_FALSE(created);
  EXPECT_EQ(created.error().code, Errc::kCannotWrite);
  EXPECT_NE(created.error().message.find(path), std::string::npos) << created.error().message;
}

TEST(ReadBuffered, ReadsThePrefixOfTheFile) {
  const DiskDir dir;
  const std::string path = testing::write_pattern(dir.path() / "p", 100000, 7);
  std::vector<unsigned char> data(65536);
  ASSERT_TRUE(read_buffered(path, data.data(), data.size()));
  for (std::size_t i = 0; i < data.size(); ++i) {
    ASSERT_EQ(data[i], testing::pattern_byte(i, 7)) << i;
  }
}

TEST(ReadBuffered, ShortFileNamesTheFileAndOffset) {
  const DiskDir dir;
  const std::string path = testing::write_pattern(dir.path() / "short", 5000);
  std::vector<char> data(8192);
  auto s = read_buffered(path, data.data(), data.size());
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, Errc::kDeviceError);
  EXPECT_NE(s.error().message.find(path + ": offset 5000"), std::string::npos) << s.error().message;
}

TEST(ReadBuffered, MissingFileIsNotFound) {
  const DiskDir dir;
  std::vector<char> data(16);
  auto s = read_buffered((dir.path() / "nope").string(), data.data(), data.size());
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, Errc::kNotFound);
}

// A directory named as the test file: refused before anything is written (it used to write the
// data beside it and fail the rename with "Success" as the reason).
TEST(FillTestFile, ADirectoryIsRefusedAndNothingIsWritten) {
  const DiskDir dir;
  const auto path = dir.path() / "d";
  fs::create_directories(path);
  auto created = fill_test_file(path.string(), 8192);
  ASSERT_FALSE(created.has_value());
  EXPECT_EQ(created.error().code, Errc::kCannotWrite);
  EXPECT_NE(created.error().message.find("is not a regular file"), std::string::npos);
  EXPECT_FALSE(fs::exists(path.string() + ".acco-tmp"));
}

}  // namespace
}  // namespace acco::io
