// A disk that fails under the checkpoint writer and the reader (syscall_faults.hpp): every
// failure is an error naming the file, the target stays as it was (or, once renamed, whole), no
// temporary file is left, and the writer works again once the disk does.
#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/device/host_backend.hpp"
#include "acco/io/reader.hpp"
#include "acco/io/writer.hpp"
#include "acco/testing/files.hpp"

#include "io_test_support.hpp"
#include "syscall_faults.hpp"

namespace acco::io {
namespace {

using ::acco::testing::slurp;
using io::testing::Call;
using io::testing::DiskDir;
using io::testing::ScopedSyscallFault;
using io::testing::SyscallFault;
using ::testing::HasSubstr;

struct FaultCase {
  const char* name;
  SyscallFault fault;
  IoEngine engine = IoEngine::kPread;
  FsyncPolicy fsync = FsyncPolicy::kFile;
  const char* message = "";
  bool renamed = false;  // the fault comes after the rename: the target is the new file
};

std::ostream& operator<<(std::ostream& out, const FaultCase& c) {
  return out << c.name;
}

SyscallFault fault(Call call, int error = EIO, int succeed_first = 0) {
  SyscallFault f;
  f.call = call;
  f.error = error;
  f.succeed_first = succeed_first;
  return f;
}

std::vector<FaultCase> fault_cases() {
  SyscallFault short_then_full = fault(Call::kPwrite, ENOSPC, 2);
  short_then_full.short_first = true;
  SyscallFault directory = fault(Call::kFsync);
  directory.directories = true;
  return {
      {"FirstWriteEio", fault(Call::kPwrite), IoEngine::kPread, FsyncPolicy::kFile,
       "write at offset 0 failed: Input/output error"},
      {"FourthWriteEio", fault(Call::kPwrite, EIO, 3), IoEngine::kPread, FsyncPolicy::kFile,
       "write at offset 196608 failed: Input/output error"},
      {"ShortWriteThenFull", short_then_full, IoEngine::kPread, FsyncPolicy::kFile,
       "no space left on the device writing at offset 163840"},
      {"QuotaExceeded", fault(Call::kPwrite, EDQUOT, 1), IoEngine::kPread, FsyncPolicy::kFile,
       "no space left on the device writing at offset 65536"},
      {"TruncateEio", fault(Call::kFtruncate), IoEngine::kAuto, FsyncPolicy::kFile,
       "ftruncate: Input/output error"},
      {"FsyncEioPread", fault(Call::kFsync), IoEngine::kPread, FsyncPolicy::kFile,
       "fsync: Input/output error"},
      {"FsyncEioRing", fault(Call::kFsync), IoEngine::kAuto, FsyncPolicy::kFile,
       "fsync: Input/output error"},
      {"CloseEioWithoutFsync", fault(Call::kClose), IoEngine::kAuto, FsyncPolicy::kNone,
       "close: Input/output error"},
      {"DirectoryFsyncEio", directory, IoEngine::kAuto, FsyncPolicy::kFileAndDir,
       "written, but fsync of", true},
  };
}

class WriterFaultTest : public ::testing::TestWithParam<FaultCase> {
 protected:
  void SetUp() override {
    auto backend = device::make_host_backend({});
    ASSERT_TRUE(backend.has_value());
    backend_ = std::move(*backend);
  }
  DiskDir dir_;
  std::unique_ptr<device::Backend> backend_;
};

TEST_P(WriterFaultTest, TheTargetIsWholeOrAsItWasAndNothingIsLeft) {
  const FaultCase& c = GetParam();
  const std::filesystem::path dir = std::filesystem::canonical(dir_.path());
  const std::string target = (dir / "ckpt").string();
  { std::ofstream(target) << "old"; }
  WriterOptions o;
  o.block_bytes = 64 << 10;
  o.depth = 4;
  o.direct = false;  // buffered: offsets as written, on any file system
  o.engine = c.engine;
  o.fsync = c.fsync;
  auto writer = Writer::create(*backend_->devices().front(), o);
  ASSERT_TRUE(writer.has_value()) << writer.error().message;
  const std::string data = io::testing::pattern_string(1 << 20, 3);
  {
    SyscallFault fault = c.fault;
    fault.under = dir.string();
    const ScopedSyscallFault armed(fault);
    auto stats = (*writer)->write(target, data.data(), data.size());
    ASSERT_GT(armed.hits(), 0) << "the fault never fired";
    ASSERT_FALSE(stats.has_value());
    EXPECT_EQ(stats.error().code, Errc::kCannotWrite);
    EXPECT_THAT(stats.error().message, HasSubstr(target + ": "));
    EXPECT_THAT(stats.error().message, HasSubstr(c.message));
  }
  EXPECT_EQ(slurp(target) == data, c.renamed) << "the target is neither whole nor as it was";
  if (!c.renamed) {
    EXPECT_EQ(slurp(target), "old");
  }
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    left.push_back(e.path().filename().string());
  }
  EXPECT_EQ(left, std::vector<std::string>{"ckpt"});
  // The disk works again: so does the writer.
  auto again = (*writer)->write(target, data.data(), data.size());
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(slurp(target), data);
}

INSTANTIATE_TEST_SUITE_P(Storage, WriterFaultTest, ::testing::ValuesIn(fault_cases()),
                         [](const auto& test) { return std::string(test.param.name); });

class ReaderFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto backend = device::make_host_backend({});
    ASSERT_TRUE(backend.has_value());
    backend_ = std::move(*backend);
  }
  std::unique_ptr<Reader> make(int threads) {
    ReaderOptions o;
    o.engine = IoEngine::kPread;
    o.block_bytes = 64 << 10;
    o.depth = 2;
    o.threads = threads;
    auto r = Reader::create(*backend_->devices().front(), o);
    EXPECT_TRUE(r.has_value()) << r.error().message;
    return r ? std::move(*r) : nullptr;
  }
  DiskDir dir_;
  std::unique_ptr<device::Backend> backend_;
};

// A file cut short while it is read (another process truncating it) is an error saying so, not
// a buffer with stale bytes at its end.
TEST_F(ReaderFaultTest, AFileTruncatedWhileReadIsNamedAsSuch) {
  const std::filesystem::path dir = std::filesystem::canonical(dir_.path());
  for (const int threads : {1, 3}) {
    const auto path = io::testing::write_pattern(dir / "data", 1 << 20);
    auto reader = make(threads);
    ASSERT_NE(reader, nullptr);
    std::vector<unsigned char> out(1 << 20);
    SyscallFault truncation = fault(Call::kPread, 0, 4);
    truncation.under = dir.string();
    truncation.truncate_to = 100000;
    const ScopedSyscallFault armed(truncation);
    auto stats = reader->read(out.data(), out.size(), {{path, 0, std::nullopt}});
    ASSERT_EQ(armed.hits(), 1);
    ASSERT_FALSE(stats.has_value()) << threads << " threads";
    EXPECT_EQ(stats.error().code, Errc::kDeviceError);
    EXPECT_THAT(stats.error().message,
                HasSubstr(path + ": truncated while being read (now 100000 bytes, was 1048576)"));
  }
}

TEST_F(ReaderFaultTest, AReadErrorNamesTheFileAndOffsetAndTheReaderGoesOn) {
  const std::filesystem::path dir = std::filesystem::canonical(dir_.path());
  const auto path = io::testing::write_pattern(dir / "data", 1 << 20);
  auto reader = make(1);
  ASSERT_NE(reader, nullptr);
  std::vector<unsigned char> out(1 << 20);
  {
    SyscallFault eio = fault(Call::kPread, EIO, 2);
    eio.under = dir.string();
    const ScopedSyscallFault armed(eio);
    auto stats = reader->read(out.data(), out.size(), {{path, 0, std::nullopt}});
    ASSERT_GT(armed.hits(), 0);
    ASSERT_FALSE(stats.has_value());
    EXPECT_THAT(stats.error().message,
                HasSubstr(path + ": read at offset 131072 failed: Input/output error"));
  }
  auto good = reader->read(out.data(), out.size(), {{path, 0, std::nullopt}});
  ASSERT_TRUE(good.has_value()) << good.error().message;
}

}  // namespace
}  // namespace acco::io
