#include "acco/core/sysfs_reader.hpp"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace acco::core {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

FsRecord::Answer file(std::string content) {
  return {.ok = true,
          .value = std::move(content),
          .entries = {},
          .error = Errc::kNotFound,
          .error_message = {}};
}

FsRecord::Answer failed(Errc code, std::string message) {
  return {
      .ok = false, .value = {}, .entries = {}, .error = code, .error_message = std::move(message)};
}

ReplayFs machine() {
  FsRecord r;
  r.files["/sys/a/speed"] = file("16.0 GT/s PCIe\n");
  r.files["/sys/a/numa_node"] = file("1\n");
  r.files["/sys/a/class"] = file("0x030200\n");
  r.files["/sys/a/empty"] = file("");
  r.files["/sys/a/garbage"] = file("fast\n");
  r.files["/sys/a/secret"] = failed(Errc::kUnavailable, "/sys/a/secret: permission denied");
  r.files["/sys/a/broken"] = failed(Errc::kInvalidArgument, "/sys/a/broken: is a directory");
  r.files["/sys/net/rx_bytes"] = file("123456789012\n");
  r.files["/sys/net/tx_bytes"] = file("-1\n");
  r.dirs["/sys/a"] = {.ok = true,
                      .value = {},
                      .entries = {"class", "speed"},
                      .error = Errc::kNotFound,
                      .error_message = {}};
  r.links["/sys/a/driver"] = file("../../../bus/pci/drivers/nvidia");
  r.exists["/sys/a/speed"] = true;
  return ReplayFs(std::move(r));
}

TEST(SysfsReaderTest, AnAbsentFileIsOnlyAbsent) {
  const auto fs = machine();
  std::vector<FileIssue> issues;
  SysfsReader in(fs, issues);
  EXPECT_FALSE(in.read("/sys/a/missing"));
  EXPECT_FALSE(in.text("/sys/a/missing"));
  EXPECT_FALSE(in.counter("/sys/a/missing"));
  EXPECT_THAT(in.list("/sys/missing"), IsEmpty());
  EXPECT_EQ(in.link_name("/sys/a/missing"), "");
  EXPECT_THAT(issues, IsEmpty());
}

TEST(SysfsReaderTest, ReadsTextIntegersCountersListsAndLinks) {
  const auto fs = machine();
  std::vector<FileIssue> issues;
  SysfsReader in(fs, issues);
  EXPECT_EQ(in.read("/sys/a/speed"), "16.0 GT/s PCIe\n");
  EXPECT_EQ(in.text("/sys/a/speed"), "16.0 GT/s PCIe");
  EXPECT_EQ(in.integer("/sys/a/numa_node"), 1);
  EXPECT_EQ(in.integer("/sys/a/class", 16), 0x030200);
  EXPECT_EQ(in.counter("/sys/net/rx_bytes"), 123456789012U);
  EXPECT_THAT(in.list("/sys/a"), ElementsAre("class", "speed"));
  EXPECT_EQ(in.link_name("/sys/a/driver"), "nvidia");
  EXPECT_TRUE(in.exists("/sys/a/speed"));
  EXPECT_THAT(issues, IsEmpty());
}

TEST(SysfsReaderTest, AnUnreadableFileIsAnIssueWithTheFsMessageUnlessOnlyRootMayReadIt) {
  const auto fs = machine();
  std::vector<FileIssue> issues;
  SysfsReader in(fs, issues);
  EXPECT_FALSE(in.read_if_permitted("/sys/a/secret"));
  EXPECT_THAT(issues, IsEmpty());
  EXPECT_FALSE(in.read_if_permitted("/sys/a/broken"));
  EXPECT_FALSE(in.read("/sys/a/secret"));
  EXPECT_THAT(issues, ElementsAre(FileIssue{"/sys/a/broken", "/sys/a/broken: is a directory"},
                                  FileIssue{"/sys/a/secret", "/sys/a/secret: permission denied"}));
}

TEST(SysfsReaderTest, AnEmptyAttributeIsAnIssueButAnEmptyFileReadsAsEmpty) {
  const auto fs = machine();
  std::vector<FileIssue> issues;
  SysfsReader in(fs, issues);
  EXPECT_EQ(in.read("/sys/a/empty"), "");
  EXPECT_THAT(issues, IsEmpty());
  EXPECT_FALSE(in.read_attribute("/sys/a/empty"));
  EXPECT_FALSE(in.text("/sys/a/empty"));
  EXPECT_THAT(issues, ElementsAre(FileIssue{"/sys/a/empty", "the file is empty"},
                                  FileIssue{"/sys/a/empty", "the file is empty"}));
}

TEST(SysfsReaderTest, WhatDoesNotParseIsAnIssueNamingWhatWasExpected) {
  const auto fs = machine();
  std::vector<FileIssue> issues;
  SysfsReader in(fs, issues);
  EXPECT_FALSE(in.integer("/sys/a/garbage"));
  EXPECT_FALSE(in.counter("/sys/net/tx_bytes"));
  in.malformed("/sys/x", "a port number 1-255", std::string(70, 'z') + "\nsecond line");
  ASSERT_EQ(issues.size(), 3U);
  EXPECT_EQ(issues[0].path, "/sys/a/garbage");
  EXPECT_THAT(issues[0].problem, ::testing::HasSubstr("fast"));
  EXPECT_EQ(issues[1], (FileIssue{"/sys/net/tx_bytes",
                                  "/sys/net/tx_bytes: expected an unsigned integer, got '-1'"}));
  EXPECT_EQ(issues[2].problem,
            "/sys/x: expected a port number 1-255, got '" + std::string(60, 'z') + "...'");
}

TEST(ParseU64Test, OnlyAWholeUnsignedDecimalNumber) {
  EXPECT_EQ(parse_u64(" 42\n"), 42U);
  EXPECT_EQ(parse_u64("18446744073709551615"), 18446744073709551615U);
  EXPECT_FALSE(parse_u64(""));
  EXPECT_FALSE(parse_u64("-1"));
  EXPECT_FALSE(parse_u64("+1"));
  EXPECT_FALSE(parse_u64("0x10"));
  EXPECT_FALSE(parse_u64("12 kB"));
  EXPECT_FALSE(parse_u64("18446744073709551616"));
}

}  // namespace
}  // namespace acco::core
