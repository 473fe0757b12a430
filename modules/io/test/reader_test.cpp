#include "acco/io/reader.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "acco/device/host_backend.hpp"
#include "acco/testing/matchers.hpp"

#include "io_test_support.hpp"

namespace acco::io {
namespace {

using io::testing::DiskDir;
using io::testing::pattern_byte;
using io::testing::write_pattern;
using ::testing::HasSubstr;

class ReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto backend = device::make_host_backend({});
    ASSERT_TRUE(backend.has_value());
    backend_ = std::move(*backend);
    device_ = backend_->devices().front();
  }

  std::unique_ptr<Reader> make(ReaderOptions o, transfer::Engine* engine = nullptr) {
    auto r = Reader::create(*device_, o, engine);
    EXPECT_TRUE(r.has_value()) << r.error().message;
    return r ? std::move(*r) : nullptr;
  }

  static void expect_pattern(const std::vector<unsigned char>& got, std::uint64_t file_offset,
                             unsigned seed = 0, std::size_t at = 0, std::size_t bytes = 0) {
    const std::size_t n = bytes == 0 ? got.size() - at : bytes;
    for (std::size_t i = 0; i < n; ++i) {
      if (got[at + i] != pattern_byte(file_offset + i, seed)) {
        ADD_FAILURE() << "byte " << at + i << " (file offset " << file_offset + i << ") differs";
        return;
      }
    }
  }

  DiskDir dir_;
  std::unique_ptr<device::Backend> backend_;
  device::Device* device_ = nullptr;
};

TEST_F(ReaderTest, ReadsAWholeFileWithIoUringAndODirect) {
  const auto path = write_pattern(dir_.path() / "a", (5 << 20) + 12345);
  ReaderOptions o;
  o.block_bytes = 1 << 20;
  o.depth = 4;
  auto reader = make(o);
  ASSERT_NE(reader, nullptr);
  std::vector<unsigned char> out((5 << 20) + 12345);
  auto stats = reader->read(out.data(), out.size(), {{path, 0, std::nullopt}});
  ASSERT_TRUE(stats.has_value()) << stats.error().message;
  expect_pattern(out, 0);
  EXPECT_EQ(stats->bytes, out.size());
  EXPECT_GE(stats->reads, 6U);
  // This machine permits io_uring and its disk takes O_DIRECT; elsewhere the notes say why not.
  if (stats->engine == "io_uring") {
    EXPECT_TRUE(stats->registered_files);
  } else {
    EXPECT_THAT(stats->notes, ::testing::Contains(HasSubstr("io_uring")));
  }
  if (!stats->direct) {
    EXPECT_THAT(stats->notes, ::testing::Contains(HasSubstr("O_DIRECT")));
  }
  const auto j = to_json(*stats);
  EXPECT_EQ(j["bytes"], out.size());
  EXPECT_EQ(j["block_bytes"], 1 << 20);
}

TEST_F(ReaderTest, PreadGivesTheSameBytes) {
  const auto path = write_pattern(dir_.path() / "a", 3 << 20, 7);
  ReaderOptions o;
  o.engine = IoEngine::kPread;
  o.block_bytes = 256 << 10;
  o.depth = 2;
  auto reader = make(o);
  ASSERT_NE(reader, nullptr);
  std::vector<unsigned char> out(3 << 20);
  auto stats = reader->read(out.data(), out.size(), {{path, 0, std::nullopt}});
  ASSERT_TRUE(stats.has_value()) << stats.error().message;
  EXPECT_EQ(stats->engine, "pread");
  EXPECT_FALSE(stats->fixed_buffers);
  expect_pattern(out, 0, 7);
}

TEST_F(ReaderTest, SeveralThreadsAndUnalignedRangesOfSeveralFiles) {
  const auto a = write_pattern(dir_.path() / "a", 1 << 20, 1);
  const auto b = write_pattern(dir_.path() / "b", 777777, 2);
  for (const IoEngine engine : {IoEngine::kAuto, IoEngine::kPread}) {
    ReaderOptions o;
    o.engine = engine;
    o.block_bytes = 64 << 10;
    o.depth = 3;
    o.threads = 3;
    auto reader = make(o);
    ASSERT_NE(reader, nullptr);
    std::vector<unsigned char> out(1000 + 300000 + 5);
    auto stats = reader->read(out.data(), out.size(),
                              {{a, 4095, 1000}, {b, 123457, 300000}, {a, (1 << 20) - 5, 5}});
    ASSERT_TRUE(stats.has_value()) << stats.error().message;
    EXPECT_EQ(stats->bytes, out.size());
    EXPECT_EQ(stats->threads, 3);
    expect_pattern(out, 4095, 1, 0, 1000);
    expect_pattern(out, 123457, 2, 1000, 300000);
    expect_pattern(out, (1 << 20) - 5, 1, 301000, 5);
  }
}

TEST_F(ReaderTest, BufferedWhenAskedAndTheReaderIsReusable) {
  const auto path = write_pattern(dir_.path() / "a", 100000, 3);
  ReaderOptions o;
  o.direct = false;
  o.block_bytes = 16384;
  auto reader = make(o);
  ASSERT_NE(reader, nullptr);
  for (int round = 0; round < 3; ++round) {
    std::vector<unsigned char> out(50000);
    auto stats = reader->read(out.data(), out.size(), {{path, 33333, 50000}});
    ASSERT_TRUE(stats.has_value()) << stats.error().message;
    EXPECT_FALSE(stats->direct);
    expect_pattern(out, 33333, 3);
  }
}

TEST_F(ReaderTest, ReadsToDeviceMemoryThroughTheEngine) {
  const std::uint64_t bytes = (4 << 20) + 100;
  const auto path = write_pattern(dir_.path() / "a", bytes, 9);
  auto engine = transfer::Engine::create(*device_);
  ASSERT_TRUE(engine.has_value());
  ReaderOptions o;
  o.block_bytes = 512 << 10;
  o.depth = 4;
  o.threads = 2;
  auto reader = make(o, engine->get());
  ASSERT_NE(reader, nullptr);
  auto buffer = device_->allocate(bytes);
  ASSERT_TRUE(buffer.has_value());
  auto stats = reader->read_to_device((*buffer)->data(), bytes, {{path, 0, std::nullopt}});
  ASSERT_TRUE(stats.has_value()) << stats.error().message;
  std::vector<unsigned char> back(bytes);
  ASSERT_TRUE(device_->copy(back.data(), (*buffer)->data(), bytes).has_value());
  expect_pattern(back, 0, 9);

  // The same in the background.
  std::vector<unsigned char> zero(bytes, 0);
  ASSERT_TRUE(device_->copy((*buffer)->data(), zero.data(), bytes).has_value());
  ReadEvent event = reader->read_to((*buffer)->data(), path, 100, bytes - 100);
  auto done = event.wait();
  ASSERT_TRUE(done.has_value()) << done.error().message;
  EXPECT_TRUE(event.ready());
  EXPECT_EQ(done->bytes, bytes - 100);
  ASSERT_TRUE(device_->copy(back.data(), (*buffer)->data(), bytes - 100).has_value());
  back.resize(bytes - 100);
  expect_pattern(back, 100, 9);
}

TEST_F(ReaderTest, ToDeviceWithoutAnEngineIsRefused) {
  const auto path = write_pattern(dir_.path() / "a", 4096);
  auto reader = make({});
  ASSERT_NE(reader, nullptr);
  std::vector<unsigned char> out(4096);
  auto stats = reader->read_to_device(out.data(), out.size(), {{path, 0, std::nullopt}});
  ASSERT_FALSE(stats.has_value());
  EXPECT_EQ(stats.error().code, Errc::kInvalidArgument);
}

TEST_F(ReaderTest, ErrorsNameTheFileAndTheReaderGoesOn) {
  const auto path = write_pattern(dir_.path() / "a", 10000);
  auto reader = make({});
  ASSERT_NE(reader, nullptr);
  std::vector<unsigned char> out(10000);
  auto small = reader->read(out.data(), 100, {{path, 0, std::nullopt}});
  ASSERT_FALSE(small.has_value());
  EXPECT_THAT(small.error().message, HasSubstr("destination holds 100"));
  auto missing = reader->read(out.data(), out.size(), {{path + ".nope", 0, std::nullopt}});
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, Errc::kNotFound);
  auto past = reader->read(out.data(), out.size(), {{path, 9000, 2000}});
  ASSERT_FALSE(past.has_value());
  EXPECT_THAT(past.error().message, HasSubstr("offset 9000"));
  auto good = reader->read(out.data(), out.size(), {{path, 0, std::nullopt}});
  ASSERT_TRUE(good.has_value()) << good.error().message;
  expect_pattern(out, 0);
}

TEST_F(ReaderTest, DiscardDeliversNothingButCountsTheBytes) {
  const auto path = write_pattern(dir_.path() / "a", 2 << 20);
  auto reader = make({});
  ASSERT_NE(reader, nullptr);
  auto stats = reader->read_discard({{path, 0, std::nullopt}});
  ASSERT_TRUE(stats.has_value()) << stats.error().message;
  EXPECT_EQ(stats->bytes, 2U << 20);
}

TEST(ReaderOptionsTest, OutOfRangeOptionsAreNamed) {
  const auto message = [](ReaderOptions o) {
    auto s = validate(o);
    return s ? std::string() : s.error().message;
  };
  ReaderOptions o;
  o.block_bytes = 1000;
  EXPECT_THAT(message(o), HasSubstr("block size 1000"));
  o = {};
  o.depth = 0;
  EXPECT_THAT(message(o), HasSubstr("depth 0"));
  o.depth = 257;
  EXPECT_THAT(message(o), HasSubstr("depth 257"));
  o = {};
  o.threads = 0;
  EXPECT_THAT(message(o), HasSubstr("threads 0"));
  o = {};
  o.block_bytes = 16 << 20;
  o.depth = 256;
  EXPECT_THAT(message(o), HasSubstr("pinned staging"));
  EXPECT_EQ(message({}), "");
}

TEST(ReaderOptionsTest, EngineNames) {
  EXPECT_EQ(*parse_io_engine("io_uring"), IoEngine::kIoUring);
  EXPECT_EQ(*parse_io_engine("pread"), IoEngine::kPread);
  EXPECT_EQ(*parse_io_engine("auto"), IoEngine::kAuto);
  auto bad = parse_io_engine("aio");
  ASSERT_FALSE(bad.has_value());
  EXPECT_THAT(bad.error().message, HasSubstr("expected auto, io_uring or pread"));
}

// io_uring_setup refused as a seccomp filter (a container runtime's default profile) does: auto
// falls back to pread and says so, io_uring alone is unavailable. In a child process: a filter
// cannot be removed.
void refuse_io_uring() {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])), filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    std::fprintf(stderr, "cannot install the seccomp filter\n");
    std::_Exit(2);
  }
}

int read_without_io_uring(const std::string& path) {
  refuse_io_uring();
  auto backend = device::make_host_backend({});
  if (!backend) {
    return 3;
  }
  device::Device& device = *(*backend)->devices().front();
  ReaderOptions only;
  only.engine = IoEngine::kIoUring;
  auto refused = Reader::create(device, only);
  if (refused || refused.error().code != Errc::kUnavailable ||
      refused.error().message.find("io_uring not permitted") == std::string::npos) {
    std::fprintf(stderr, "io_uring alone was not refused as unavailable\n");
    return 4;
  }
  auto reader = Reader::create(device, {});
  if (!reader) {
    std::fprintf(stderr, "%s\n", reader.error().message.c_str());
    return 5;
  }
  std::vector<unsigned char> out(65536);
  auto stats = (*reader)->read(out.data(), out.size(), {{path, 0, std::nullopt}});
  if (!stats || stats->engine != "pread" || stats->notes.empty() ||
      stats->notes.front().find("io_uring not permitted") == std::string::npos) {
    std::fprintf(stderr, "auto did not fall back to pread with a note\n");
    return 6;
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] != pattern_byte(i, 4)) {
      return 7;
    }
  }
  return 0;
}

TEST(ReaderFallbackTest, WhereIoUringIsRefusedAutoFallsBackToPread) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the suite has threads running
  DiskDir dir;
  const auto path = write_pattern(dir.path() / "a", 65536, 4);
  // The threadsafe style runs this body again in the child, with a directory of its own that
  // _Exit would leave behind: the child removes it first.
  EXPECT_EXIT(
      {
        const int code = read_without_io_uring(path);
        std::error_code ignored;
        std::filesystem::remove_all(dir.path(), ignored);
        std::_Exit(code);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(ProbeTest, ADiskDirectoryIsProbedAndAMissingOneIsNotFound) {
  DiskDir dir;
  auto probe = probe_direct_io(dir.path().string());
  ASSERT_TRUE(probe.has_value()) << probe.error().message;
  EXPECT_EQ(probe->path, dir.path().string());
  if (probe->o_direct) {
    EXPECT_GT(probe->offset_alignment, 0U);
  } else {
    EXPECT_FALSE(probe->o_direct_error.empty());
  }
  if (!probe->io_uring) {
    EXPECT_FALSE(probe->io_uring_error.empty());
  }
  auto missing = probe_direct_io((dir.path() / "nope").string());
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, Errc::kNotFound);
}

}  // namespace
}  // namespace acco::io
