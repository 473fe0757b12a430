#include "acco/core/fs.hpp"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace acco::core {
namespace {

namespace stdfs = std::filesystem;

class FsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = stdfs::temp_directory_path() /
            ("acco_fs_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
             "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    stdfs::remove_all(root_);
    stdfs::create_directories(root_ / "sys/devices/pci0000:00/0000:00:01.0");
    stdfs::create_directories(root_ / "sys/bus/pci/devices");
    std::ofstream(root_ / "sys/devices/pci0000:00/0000:00:01.0/class") << "0x030200\n";
    std::ofstream(root_ / "sys/devices/pci0000:00/0000:00:01.0/config")
        << std::string("\x10\xde\x00\xff", 4);
    stdfs::create_directory_symlink("../../../devices/pci0000:00/0000:00:01.0",
                                    root_ / "sys/bus/pci/devices/0000:00:01.0");
    stdfs::create_symlink("/sys/devices/pci0000:00", root_ / "sys/absolute");
    stdfs::create_symlink("missing", root_ / "sys/dangling");
  }
  void TearDown() override { stdfs::remove_all(root_); }
  stdfs::path root_;
};

TEST_F(FsTest, ReadsFilesUnderTheSysroot) {
  auto fs = make_disk_fs(root_.string()).value();
  EXPECT_EQ(fs->read_file("/sys/bus/pci/devices/0000:00:01.0/class").value(), "0x030200\n");
}

TEST_F(FsTest, MissingFileIsNotFound) {
  auto fs = make_disk_fs(root_.string()).value();
  EXPECT_EQ(fs->read_file("/sys/nothing").error().code, Errc::kNotFound);
}

TEST_F(FsTest, DirectoryReadAsFileIsAnError) {
  auto fs = make_disk_fs(root_.string()).value();
  EXPECT_FALSE(fs->read_file("/sys/devices").has_value());
}

TEST_F(FsTest, ListsDirectoriesSorted) {
  auto fs = make_disk_fs(root_.string()).value();
  EXPECT_EQ(fs->list_dir("/sys").value(),
            (std::vector<std::string>{"absolute", "bus", "dangling", "devices"}));
}

TEST_F(FsTest, RealPathResolvesRelativeLinksInsideTheSysroot) {
  auto fs = make_disk_fs(root_.string()).value();
  EXPECT_EQ(fs->real_path("/sys/bus/pci/devices/0000:00:01.0").value(),
            "/sys/devices/pci0000:00/0000:00:01.0");
}

TEST_F(FsTest, RealPathKeepsAbsoluteLinksInsideTheSysroot) {
  auto fs = make_disk_fs(root_.string()).value();
  EXPECT_EQ(fs->real_path("/sys/absolute/0000:00:01.0").value(),
            "/sys/devices/pci0000:00/0000:00:01.0");
}

TEST_F(FsTest, DanglingLinkIsNotFound) {
  auto fs = make_disk_fs(root_.string()).value();
  EXPECT_EQ(fs->real_path("/sys/dangling").error().code, Errc::kNotFound);
  EXPECT_EQ(fs->read_link("/sys/dangling").value(), "missing");
}

TEST_F(FsTest, MissingSysrootIsNotFound) {
  auto fs = make_disk_fs((root_ / "nope").string());
  ASSERT_FALSE(fs.has_value());
  EXPECT_EQ(fs.error().code, Errc::kNotFound);
  EXPECT_NE(fs.error().message.find("nope"), std::string::npos);
}

TEST_F(FsTest, RecordingReplaysEveryAnswerExactlyThroughJson) {
  auto disk = make_disk_fs(root_.string()).value();
  RecordingFs recording(*disk);
  const std::string dev = "/sys/bus/pci/devices/0000:00:01.0";
  ASSERT_TRUE(recording.read_file(dev + "/class").has_value());
  ASSERT_TRUE(recording.read_file(dev + "/config").has_value());
  ASSERT_FALSE(recording.read_file("/sys/none").has_value());
  ASSERT_TRUE(recording.list_dir("/sys").has_value());
  ASSERT_TRUE(recording.real_path(dev).has_value());
  ASSERT_TRUE(recording.read_link("/sys/dangling").has_value());
  ASSERT_TRUE(recording.exists("/sys"));

  const auto json = to_json(recording.record());
  auto restored = fs_record_from_json(nlohmann::json::parse(json.dump()));
  ASSERT_TRUE(restored.has_value()) << restored.error().message;
  EXPECT_EQ(*restored, recording.record());

  ReplayFs replay(*restored);
  EXPECT_EQ(replay.read_file(dev + "/class").value(), "0x030200\n");
  EXPECT_EQ(replay.read_file(dev + "/config").value(), std::string("\x10\xde\x00\xff", 4));
  EXPECT_EQ(replay.read_file("/sys/none").error().code, Errc::kNotFound);
  EXPECT_EQ(replay.real_path(dev).value(), "/sys/devices/pci0000:00/0000:00:01.0");
  EXPECT_TRUE(replay.exists("/sys"));
  EXPECT_FALSE(replay.exists("/proc"));
  EXPECT_EQ(replay.read_file("/sys/unrecorded").error().code, Errc::kNotFound);
}

TEST(FsRecordTest, MalformedRecordIsInvalidArgument) {
  const auto bad = nlohmann::json::parse(R"({"files": {"/a": {"ok": "yes"}}})");
  auto r = fs_record_from_json(bad);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
  EXPECT_NE(r.error().message.find("/a"), std::string::npos);
  EXPECT_FALSE(fs_record_from_json(nlohmann::json::parse(R"({"files": []})")).has_value());
  EXPECT_FALSE(
      fs_record_from_json(nlohmann::json::parse(R"({"files": {"/b": {"ok": true, "hex": "zz"}}})"))
          .has_value());
}

}  // namespace
}  // namespace acco::core
