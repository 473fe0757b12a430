#include "acco/core/fs.hpp"

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::core {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

namespace stdfs = std::filesystem;

class FsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = scratch_.path();
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
  acco::testing::TempDir scratch_;
  stdfs::path root_;
};

TEST_F(FsTest, ReadsFilesUnderTheSysroot) {
  auto fs = make_disk_fs(root_.string()).value();
  EXPECT_EQ(fs->read_file("/sys/bus/pci/devices/0000:00:01.0/class").value(), "0x030200\n");
}

TEST_F(FsTest, MissingFileIsNotFound) {
  auto fs = make_disk_fs(root_.string()).value();
  EXPECT_THAT(fs->read_file("/sys/nothing"), StatusIs(Errc::kNotFound));
}

TEST_F(FsTest, DirectoryReadAsFileIsAnError) {
  auto fs = make_disk_fs(root_.string()).value();
  EXPECT_THAT(fs->read_file("/sys/devices"), Not(IsOk()));
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
  EXPECT_THAT(fs->real_path("/sys/dangling"), StatusIs(Errc::kNotFound));
  EXPECT_EQ(fs->read_link("/sys/dangling").value(), "missing");
}

TEST_F(FsTest, MissingSysrootIsNotFound) {
  auto fs = make_disk_fs((root_ / "nope").string());
  EXPECT_THAT(fs, StatusIs(Errc::kNotFound, HasSubstr("nope")));
}

TEST_F(FsTest, RecordingReplaysEveryAnswerExactlyThroughJson) {
  auto disk = make_disk_fs(root_.string()).value();
  RecordingFs recording(*disk);
  const std::string dev = "/sys/bus/pci/devices/0000:00:01.0";
  ASSERT_THAT(recording.read_file(dev + "/class"), IsOk());
  ASSERT_THAT(recording.read_file(dev + "/config"), IsOk());
  ASSERT_THAT(recording.read_file("/sys/none"), Not(IsOk()));
  ASSERT_THAT(recording.list_dir("/sys"), IsOk());
  ASSERT_THAT(recording.real_path(dev), IsOk());
  ASSERT_THAT(recording.read_link("/sys/dangling"), IsOk());
  ASSERT_TRUE(recording.exists("/sys"));

  const auto json = to_json(recording.record());
  auto restored = fs_record_from_json(nlohmann::json::parse(json.dump()));
  ASSERT_THAT(restored, IsOk());
  EXPECT_EQ(*restored, recording.record());

  ReplayFs replay(*restored);
  EXPECT_EQ(replay.read_file(dev + "/class").value(), "0x030200\n");
  EXPECT_EQ(replay.read_file(dev + "/config").value(), std::string("\x10\xde\x00\xff", 4));
  EXPECT_THAT(replay.read_file("/sys/none"), StatusIs(Errc::kNotFound));
  EXPECT_EQ(replay.real_path(dev).value(), "/sys/devices/pci0000:00/0000:00:01.0");
  EXPECT_TRUE(replay.exists("/sys"));
  EXPECT_FALSE(replay.exists("/proc"));
  EXPECT_THAT(replay.read_file("/sys/unrecorded"), StatusIs(Errc::kNotFound));
}

TEST(FsRecordTest, MalformedRecordIsInvalidArgument) {
  const auto bad = nlohmann::json::parse(R"({"files": {"/a": {"ok": "yes"}}})");
  auto r = fs_record_from_json(bad);
  EXPECT_THAT(r, StatusIs(Errc::kInvalidArgument, HasSubstr("/a")));
  EXPECT_THAT(fs_record_from_json(nlohmann::json::parse(R"({"files": []})")), Not(IsOk()));
  EXPECT_THAT(
      fs_record_from_json(nlohmann::json::parse(R"({"files": {"/b": {"ok": true, "hex": "zz"}}})")),
      Not(IsOk()));
}

// The record's messages, pinned word for word on malformed documents: the JsonReader wording,
// with the path of the field at fault.
TEST(FsRecordTest, MalformedRecordsAreNamedWordForWord) {
  const auto message_of = [](const char* text) {
    const auto r = fs_record_from_json(nlohmann::json::parse(text));
    EXPECT_THAT(r, StatusIs(Errc::kInvalidArgument)) << text;
    return r.has_value() ? std::string() : r.error().message;
  };
  const std::string prefix = "file system record: ";
  EXPECT_EQ(message_of("[]"), prefix + "expected an object");
  EXPECT_EQ(message_of(R"({"files": []})"), prefix + "'files': expected an object, got []");
  EXPECT_EQ(message_of(R"({"dirs": 3})"), prefix + "'dirs': expected an object, got 3");
  EXPECT_EQ(message_of(R"({"links": {"/l": 3}})"),
            prefix + "'links' /l: expected an object with a boolean 'ok'");
  EXPECT_EQ(message_of(R"({"real_paths": {"/r": {"ok": "yes"}}})"),
            prefix + "'real_paths' /r.ok: expected true or false, got \"yes\"");
  EXPECT_EQ(message_of(R"({"files": {"/e": {"ok": false, "error": 5}}})"),
            prefix + "'files' /e.error: expected a string, got 5");
  EXPECT_EQ(message_of(R"({"files": {"/e": {"ok": false, "error": "bogus"}}})"),
            prefix + "'files' /e.error: unknown error code 'bogus'");
  EXPECT_EQ(message_of(R"({"files": {"/e": {"ok": false, "message": []}}})"),
            prefix + "'files' /e.message: expected a string, got []");
  EXPECT_EQ(message_of(R"({"dirs": {"/d": {"ok": true, "entries": {}}}})"),
            prefix + "'dirs' /d.entries: expected an array, got {}");
  EXPECT_EQ(message_of(R"({"dirs": {"/d": {"ok": true, "entries": ["a", 1]}}})"),
            prefix + "'dirs' /d.entries[1]: expected a string");
  EXPECT_EQ(message_of(R"({"files": {"/h": {"ok": true, "hex": 1}}})"),
            prefix + "'files' /h.hex: expected a string, got 1");
  EXPECT_EQ(message_of(R"({"files": {"/h": {"ok": true, "hex": "abc"}}})"),
            prefix + "'files' /h.hex: odd number of hex digits");
  EXPECT_EQ(message_of(R"({"files": {"/h": {"ok": true, "hex": "zz"}}})"),
            prefix + "'files' /h.hex: bad hex digit 'z'");
  EXPECT_EQ(message_of(R"({"files": {"/v": {"ok": true, "value": true}}})"),
            prefix + "'files' /v.value: expected a string, got true");
  EXPECT_EQ(message_of(R"({"exists": []})"), prefix + "'exists': expected an object, got []");
  EXPECT_EQ(message_of(R"({"exists": {"/x": "yes"}})"),
            prefix + "'exists' /x: expected true or false, got \"yes\"");
  // Every map may be left out or null: an empty record.
  EXPECT_THAT(fs_record_from_json(nlohmann::json::parse(R"({"dirs": null})")), IsOk());
  EXPECT_THAT(fs_record_from_json(nlohmann::json::object()), IsOk());
}

}  // namespace
}  // namespace acco::core
