#include "acco/io/writer.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acco/device/host_backend.hpp"
#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"

#include "io_test_support.hpp"

namespace acco::io {
namespace {

using ::acco::testing::slurp;
using io::testing::DiskDir;
using io::testing::pattern_byte;
using ::testing::HasSubstr;

// `bytes` of a pattern, as the bytes slurp() reads back.
std::string pattern(std::size_t bytes, unsigned seed) {
  std::string v(bytes, '\0');
  for (std::size_t i = 0; i < bytes; ++i) {
    v[i] = static_cast<char>(pattern_byte(i, seed));
  }
  return v;
}

std::vector<std::string> names(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    out.push_back(e.path().filename().string());
  }
  return out;
}

class WriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto backend = device::make_host_backend({});
    ASSERT_TRUE(backend.has_value());
    backend_ = std::move(*backend);
    device_ = backend_->devices().front();
  }
  DiskDir dir_;
  std::unique_ptr<device::Backend> backend_;
  device::Device* device_ = nullptr;
};

TEST_F(WriterTest, WritesHostMemoryOfAnUnalignedSizeWithEveryEngine) {
  for (const IoEngine engine : {IoEngine::kAuto, IoEngine::kPread}) {
    WriterOptions o;
    o.engine = engine;
    o.block_bytes = 256 << 10;
    o.depth = 4;
    auto writer = Writer::create(*device_, o);
    ASSERT_TRUE(writer.has_value()) << writer.error().message;
    const auto data = pattern((3 << 20) + 123, 5);
    const auto path = dir_.path() / "checkpoint.bin";
    auto stats = (*writer)->write(path.string(), data.data(), data.size());
    ASSERT_TRUE(stats.has_value()) << stats.error().message;
    EXPECT_EQ(stats->bytes, data.size());
    EXPECT_EQ(stats->engine, engine == IoEngine::kPread ? "pwrite" : "io_uring");
    EXPECT_EQ(stats->fsync, "file+dir");
    EXPECT_EQ(slurp(path), data);
    EXPECT_EQ(names(dir_.path()), std::vector<std::string>{"checkpoint.bin"});
  }
}

TEST_F(WriterTest, WritesDeviceMemoryThroughTheEngineAndReplacesTheTarget) {
  auto engine = transfer::Engine::create(*device_);
  ASSERT_TRUE(engine.has_value());
  WriterOptions o;
  o.block_bytes = 512 << 10;
  o.fsync = FsyncPolicy::kFile;
  auto writer = Writer::create(*device_, o, engine->get());
  ASSERT_TRUE(writer.has_value()) << writer.error().message;
  const auto data = pattern((2 << 20) + 4097, 6);
  auto buffer = device_->allocate(data.size());
  ASSERT_TRUE(buffer.has_value());
  ASSERT_TRUE(device_->copy((*buffer)->data(), data.data(), data.size()).has_value());
  const auto path = dir_.path() / "model.ckpt";
  std::ofstream(path) << "the old checkpoint";
  auto stats = (*writer)->write_from_device(path.string(), (*buffer)->data(), data.size());
  ASSERT_TRUE(stats.has_value()) << stats.error().message;
  EXPECT_EQ(slurp(path), data);
  EXPECT_EQ(names(dir_.path()), std::vector<std::string>{"model.ckpt"});
}

TEST_F(WriterTest, AMissingDirectoryIsNotFoundAndNothingIsLeft) {
  auto writer = Writer::create(*device_, {});
  ASSERT_TRUE(writer.has_value());
  const std::vector<unsigned char> data(100, 1);
  auto stats = (*writer)->write((dir_.path() / "no" / "file").string(), data.data(), data.size());
  ASSERT_FALSE(stats.has_value());
  EXPECT_EQ(stats.error().code, Errc::kNotFound);
  EXPECT_THAT(stats.error().message, HasSubstr("no such directory"));
  EXPECT_TRUE(names(dir_.path()).empty());
}

TEST_F(WriterTest, WithoutAnEngineDeviceWritesAreRefused) {
  auto writer = Writer::create(*device_, {});
  ASSERT_TRUE(writer.has_value());
  const std::vector<unsigned char> data(100, 1);
  auto stats = (*writer)->write_from_device((dir_.path() / "f").string(), data.data(), 100);
  ASSERT_FALSE(stats.has_value());
  EXPECT_EQ(stats.error().code, Errc::kInvalidArgument);
}

TEST(WriterOptionsTest, PolicyNamesAndRanges) {
  EXPECT_EQ(*parse_fsync_policy("none"), FsyncPolicy::kNone);
  EXPECT_EQ(*parse_fsync_policy("file"), FsyncPolicy::kFile);
  EXPECT_EQ(*parse_fsync_policy("file+dir"), FsyncPolicy::kFileAndDir);
  auto bad = parse_fsync_policy("always");
  ASSERT_FALSE(bad.has_value());
  EXPECT_THAT(bad.error().message, HasSubstr("expected none, file or file+dir"));
  WriterOptions o;
  o.depth = 0;
  EXPECT_FALSE(validate(o).has_value());
}

// ENOSPC on a 1 MiB tmpfs in a private mount namespace (a child process: the mount must not
// leak). The old target must survive and no temporary file stay behind.
int write_to_full_disk(const std::string& dir) {
  if (::unshare(CLONE_NEWNS) != 0 ||
      ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      ::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=1m") != 0) {
    return 77;  // the sandbox refuses mount namespaces
  }
  { std::ofstream(dir + "/ckpt") << "old"; }
  auto backend = device::make_host_backend({});
  if (!backend) {
    return 3;
  }
  WriterOptions o;
  o.block_bytes = 64 << 10;
  auto writer = Writer::create(*(*backend)->devices().front(), o);
  if (!writer) {
    return 4;
  }
  const std::vector<unsigned char> data(4 << 20, 7);
  auto stats = (*writer)->write(dir + "/ckpt", data.data(), data.size());
  if (stats || stats.error().code != Errc::kCannotWrite ||
      stats.error().message.find("no space left") == std::string::npos ||
      stats.error().message.find(dir + "/ckpt") == std::string::npos) {
    std::fprintf(stderr, "expected a no-space error, got %s\n",
                 stats ? "success" : stats.error().message.c_str());
    return 5;
  }
  if (slurp(dir + "/ckpt") != "old" || names(dir) != std::vector<std::string>{"ckpt"}) {
    return 6;
  }
  return 0;
}

TEST(WriterFullDiskTest, NoSpaceLeavesTheOldFileAndNoTemporary) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  DiskDir dir;
  const std::string d = dir.path().string();
  // Whether the sandbox allows a mount namespace decides between a run and a skip.
  const int code = [&] {
    const pid_t pid = ::fork();
    if (pid == 0) {
      std::_Exit(write_to_full_disk(d));
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
  }();
  if (code == 77) {
    GTEST_SKIP() << "no mount namespace here: ENOSPC not exercised";
  }
  EXPECT_EQ(code, 0);
}

}  // namespace
}  // namespace acco::io
