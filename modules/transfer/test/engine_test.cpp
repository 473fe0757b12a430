#include "acco/transfer/engine.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"

#include "test_device.hpp"

namespace acco::transfer {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using device::MemoryKind;
using testing::CountingDevice;
using ::testing::HasSubstr;
using testing::make_backend;
using testing::pattern;

constexpr std::size_t kGuard = 64;  // bytes around every copy that must stay untouched
constexpr std::byte kFill{0xEE};

// A copy much larger than the pool. 64 MiB, except under ThreadSanitizer, where every byte moved
// costs ~50x and fourteen such cases alone took a minute of CPU: 8 MiB still exceeds the test
// pools, so those copies still stream through reused slots.
#if defined(__SANITIZE_THREAD__)
constexpr std::size_t kHugeBytes = std::size_t{8} << 20;
#else
constexpr std::size_t kHugeBytes = std::size_t{64} << 20;
#endif

// Small slots and a low split size, so 1 MiB + 7 already splits and 64 MiB streams through a pool
// ten times smaller; two host copy threads so their hand-offs run under TSan.
Profile small_profile() {
  Profile p;
  p.chunk_bytes = 2 << 20;
  p.slots = 3;
  p.queues = 2;
  p.host_copy_threads = 2;
  p.split_above_bytes = 1 << 20;
  p.zero_copy_below_bytes = 0;
  p.batch_below_bytes = std::size_t{1} << 30;
  return p;
}

std::unique_ptr<Engine> make_engine(device::Device& device, const Profile& profile) {
  auto engine = Engine::create(device, profile);
  ACCO_CHECK(engine.has_value());
  return std::move(*engine);
}

// Host memory of one kind filled with kFill, with room for guard bytes and an offset on both
// sides.
class HostMemory {
 public:
  HostMemory(device::Device& device, MemoryKind kind, std::size_t bytes) {
    const std::size_t total = bytes + 3 * kGuard;
    if (kind == MemoryKind::kPageable || kind == MemoryKind::kRegistered) {
      pageable_ = std::make_unique<std::byte[]>(total);
      data_ = pageable_.get();
      if (kind == MemoryKind::kRegistered) {
        auto registration = device.register_host(data_, total);
        ACCO_CHECK(registration.has_value());
        registration_ = std::move(*registration);
      }
    } else {
      auto buffer = device.allocate_host(total, kind);
      ACCO_CHECK(buffer.has_value());
      buffer_ = std::move(*buffer);
      data_ = static_cast<std::byte*>(buffer_->data());
    }
    std::memset(data_, static_cast<int>(kFill), total);
  }
  [[nodiscard]] std::byte* data() const { return data_; }
  [[nodiscard]] std::span<const std::byte> view(std::size_t bytes) const { return {data_, bytes}; }

 private:
  std::unique_ptr<std::byte[]> pageable_;
  std::unique_ptr<device::Buffer> buffer_;
  std::unique_ptr<device::Registration> registration_;
  std::byte* data_ = nullptr;
};

// Device memory filled with kFill. Set up and checked in place when the host can reach it (the
// host backend), through the device's plain copy otherwise: every pass over 64 MiB counts under
// ThreadSanitizer.
class DeviceMemory {
 public:
  DeviceMemory(device::Device& device, std::size_t bytes)
      : device_(device), total_(bytes + 2 * kGuard) {
    auto buffer = device.allocate(total_);
    ACCO_CHECK(buffer.has_value());
    buffer_ = std::move(*buffer);
    if (buffer_->host_accessible()) {
      std::memset(data(), static_cast<int>(kFill), total_);
    } else {
      const std::vector<std::byte> fill(total_, kFill);
      ACCO_CHECK(device.copy(data(), fill.data(), total_).has_value());
    }
  }
  [[nodiscard]] std::byte* data() const { return static_cast<std::byte*>(buffer_->data()); }
  void write(std::size_t offset, const std::vector<std::byte>& bytes) {
    if (bytes.empty()) {
      return;
    }
    if (buffer_->host_accessible()) {
      std::memcpy(data() + offset, bytes.data(), bytes.size());
    } else {
      ACCO_CHECK(device_.copy(data() + offset, bytes.data(), bytes.size()).has_value());
    }
  }
  // The whole allocation, guards included.
  [[nodiscard]] std::span<const std::byte> read_all() {
    if (buffer_->host_accessible()) {
      return {data(), total_};
    }
    copy_.resize(total_);
    ACCO_CHECK(device_.copy(copy_.data(), data(), total_).has_value());
    return copy_;
  }

 private:
  device::Device& device_;
  std::size_t total_;
  std::unique_ptr<device::Buffer> buffer_;
  std::vector<std::byte> copy_;
};

// The bytes [offset, offset + expected.size()) hold `expected`; the rest of `all` holds kFill.
void expect_exactly(std::span<const std::byte> all, std::size_t offset,
                    const std::vector<std::byte>& expected) {
  ASSERT_LE(offset + expected.size(), all.size());
  ASSERT_TRUE(expected.empty() ||
              std::memcmp(all.data() + offset, expected.data(), expected.size()) == 0)
      << "payload differs";
  const auto is_fill = [](std::byte b) { return b == kFill; };
  EXPECT_TRUE(std::all_of(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(offset), is_fill))
      << "a byte before the copy was written";
  EXPECT_TRUE(std::all_of(all.begin() + static_cast<std::ptrdiff_t>(offset + expected.size()),
                          all.end(), is_fill))
      << "a byte after the copy was written";
}

// How a data test moves its bytes.
enum class Way {
  kPipelined,  // pageable, strategy forced
  kDirectPinned,
  kDirectRegistered,  // registered by the caller
  kDirectMapped,
  kZeroCopy,      // pageable, strategy forced
  kBatched,       // pageable, cut into 64 KiB items
  kAutoRegister,  // pageable; the engine registers it on first use
};

const char* name_of(Way way) {
  switch (way) {
    case Way::kPipelined:
      return "Pipelined";
    case Way::kDirectPinned:
      return "DirectPinned";
    case Way::kDirectRegistered:
      return "DirectRegistered";
    case Way::kDirectMapped:
      return "DirectMapped";
    case Way::kZeroCopy:
      return "ZeroCopy";
    case Way::kBatched:
      return "Batched";
    case Way::kAutoRegister:
      return "AutoRegister";
  }
  return "?";
}

MemoryKind host_kind(Way way) {
  switch (way) {
    case Way::kDirectPinned:
      return MemoryKind::kPinned;
    case Way::kDirectRegistered:
      return MemoryKind::kRegistered;
    case Way::kDirectMapped:
      return MemoryKind::kMapped;
    default:
      return MemoryKind::kPageable;
  }
}

Strategy expected_strategy(Way way, std::size_t bytes) {
  if (bytes == 0) {
    return Strategy::kNone;
  }
  switch (way) {
    case Way::kPipelined:
      return Strategy::kPipelined;
    case Way::kZeroCopy:
      return Strategy::kZeroCopy;
    case Way::kBatched:
      return Strategy::kBatched;
    default:
      return Strategy::kDirect;
  }
}

struct DataCase {
  Way way;
  bool to_device;
  std::size_t bytes;
  std::size_t host_offset;    // misalignment of the host end
  std::size_t device_offset;  // misalignment of the device end
};

std::string case_name(const ::testing::TestParamInfo<DataCase>& info) {
  const DataCase& c = info.param;
  return std::string(name_of(c.way)) + (c.to_device ? "ToDevice" : "ToHost") +
         std::to_string(c.bytes) + "Bytes" +
         (c.host_offset + c.device_offset > 0 ? "Misaligned" : "Aligned");
}

std::vector<DataCase> data_cases() {
  std::vector<DataCase> cases;
  for (Way way : {Way::kPipelined, Way::kDirectPinned, Way::kDirectRegistered, Way::kDirectMapped,
                  Way::kZeroCopy, Way::kBatched, Way::kAutoRegister}) {
    for (bool to_device : {true, false}) {
      for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{4095},
                                std::size_t{4096}, (std::size_t{1} << 20) + 7}) {
        cases.push_back({way, to_device, bytes, 0, 0});
        cases.push_back({way, to_device, bytes, 3, 5});
      }
      cases.push_back({way, to_device, kHugeBytes, 7, 1});
    }
  }
  return cases;
}

class EngineDataTest : public ::testing::TestWithParam<DataCase> {};

TEST_P(EngineDataTest, MovesTheBytesIntactAndTouchesNothingElse) {
  const DataCase c = GetParam();
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  Profile profile = small_profile();
  if (c.way == Way::kAutoRegister) {
    profile.register_after_uses = 1;
  }
  auto engine = make_engine(device, profile);
  HostMemory host(device, host_kind(c.way), c.bytes);
  DeviceMemory on_device(device, c.bytes);
  std::byte* host_end = host.data() + kGuard + c.host_offset;
  std::byte* device_end = on_device.data() + kGuard + c.device_offset;
  const std::vector<std::byte> payload = pattern(c.bytes, c.bytes + c.host_offset);
  if (c.to_device) {
    std::copy(payload.begin(), payload.end(), host_end);
  } else {
    on_device.write(kGuard + c.device_offset, payload);
  }
  void* dst = c.to_device ? static_cast<void*>(device_end) : host_end;
  const void* src = c.to_device ? static_cast<const void*>(host_end) : device_end;

  Result<Transfer> transfer;
  if (c.way == Way::kBatched) {
    Batch batch = engine->batch();
    constexpr std::size_t kItem = 64 << 10;
    for (std::size_t offset = 0; offset < c.bytes; offset += kItem) {
      const std::size_t n = std::min(kItem, c.bytes - offset);
      ASSERT_THAT(batch.add(static_cast<std::byte*>(dst) + offset,
                            static_cast<const std::byte*>(src) + offset, n),
                  IsOk());
    }
    transfer = batch.submit();
  } else {
    CopyOptions options;
    if (c.way == Way::kPipelined) {
      options.strategy = Strategy::kPipelined;
    } else if (c.way == Way::kZeroCopy) {
      options.strategy = Strategy::kZeroCopy;
    }
    transfer = engine->copy(dst, src, c.bytes, options);
  }
  ASSERT_THAT(transfer, IsOk());
  const auto record = transfer->wait();
  ASSERT_THAT(record, IsOk());
  EXPECT_EQ(record->strategy, expected_strategy(c.way, c.bytes));
  EXPECT_EQ(record->bytes, c.bytes);
  if (c.way == Way::kAutoRegister && c.bytes > 0) {
    EXPECT_TRUE(record->registered);
  }

  // Both ends hold the payload and nothing around either end changed.
  expect_exactly(host.view(c.bytes + 2 * kGuard + c.host_offset), kGuard + c.host_offset, payload);
  expect_exactly(on_device.read_all(), kGuard + c.device_offset, payload);
}

INSTANTIATE_TEST_SUITE_P(EveryStrategyBothWays, EngineDataTest, ::testing::ValuesIn(data_cases()),
                         case_name);

TEST(EngineTest, HostToHostCopiesOnTheHost) {
  auto backend = make_backend();
  auto engine = make_engine(*backend->devices().front(), small_profile());
  const auto src = pattern((3 << 20) + 1, 9);
  std::vector<std::byte> dst(src.size());
  auto transfer = engine->copy(dst.data(), src.data(), src.size());
  ASSERT_THAT(transfer, IsOk());
  EXPECT_EQ(transfer->record().strategy, Strategy::kHostCopy);
  EXPECT_EQ(transfer->record().host_threads, 2);
  EXPECT_TRUE(transfer->ready());
  EXPECT_EQ(dst, src);
}

TEST(EngineTest, DeviceToDeviceIsDirect) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  auto engine = make_engine(device, small_profile());
  DeviceMemory a(device, 3 << 20);
  DeviceMemory b(device, 3 << 20);
  const auto payload = pattern(3 << 20, 4);
  a.write(kGuard, payload);
  auto transfer = engine->copy(b.data() + kGuard, a.data() + kGuard, payload.size());
  ASSERT_THAT(transfer, IsOk());
  ASSERT_THAT(transfer->wait(), IsOk());
  EXPECT_EQ(transfer->record().strategy, Strategy::kDirect);
  EXPECT_EQ(transfer->record().queues, 2);  // above split_above_bytes
  expect_exactly(b.read_all(), kGuard, payload);
}

TEST(EngineTest, TheStrategyChosenIsTheOneTheProfilePredicts) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  Profile profile = small_profile();
  profile.zero_copy_below_bytes = 8 << 10;
  auto engine = make_engine(device, profile);
  ASSERT_TRUE(engine->info().traits.device_memory_host_accessible);
  HostMemory pageable(device, MemoryKind::kPageable, 4 << 20);
  HostMemory pinned(device, MemoryKind::kPinned, 4 << 20);
  DeviceMemory on_device(device, 4 << 20);
  struct Shape {
    std::byte* host;
    bool to_device;
    std::size_t bytes;
  };
  for (const Shape& s : {Shape{pageable.data(), true, 100}, Shape{pageable.data(), true, 1 << 20},
                         Shape{pageable.data(), false, 4 << 20}, Shape{pinned.data(), true, 4096},
                         Shape{pinned.data(), false, 1 << 20}, Shape{pinned.data(), true, 4 << 20},
                         Shape{pageable.data(), false, 0}}) {
    void* dst = s.to_device ? static_cast<void*>(on_device.data()) : s.host;
    const void* src = s.to_device ? static_cast<const void*>(s.host) : on_device.data();
    const CopyShape shape{device.kind_of(dst), device.kind_of(src), s.bytes, 0};
    const CopyPlan predicted = plan_copy(shape, profile, engine->info().traits);
    auto transfer = engine->copy(dst, src, s.bytes);
    ASSERT_THAT(transfer, IsOk());
    ASSERT_THAT(transfer->wait(), IsOk());
    EXPECT_EQ(transfer->record().strategy, predicted.strategy) << s.bytes;
    if (predicted.strategy == Strategy::kDirect) {
      EXPECT_EQ(transfer->record().queues, predicted.queues) << s.bytes;
    }
  }
}

TEST(EngineTest, RecordSaysHowAPipelinedCopyRan) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  auto engine = make_engine(device, small_profile());
  std::vector<std::byte> host((5 << 20) + 1);
  DeviceMemory on_device(device, host.size());
  auto transfer = engine->copy(on_device.data(), host.data(), host.size());
  ASSERT_THAT(transfer, IsOk());
  const auto record = transfer->wait();
  ASSERT_THAT(record, IsOk());
  EXPECT_EQ(record->strategy, Strategy::kPipelined);
  EXPECT_EQ(record->direction, Direction::kHostToDevice);
  EXPECT_EQ(record->src_kind, MemoryKind::kPageable);
  EXPECT_EQ(record->dst_kind, MemoryKind::kDevice);
  EXPECT_EQ(record->chunk_bytes, 2U << 20);
  EXPECT_EQ(record->chunks, 3U);
  EXPECT_EQ(record->slots, 3);
  EXPECT_EQ(record->queues, 1);  // the slots overlap host copies with DMA, not extra queues
  EXPECT_EQ(record->host_threads, 2);
  EXPECT_EQ(record->items, 1U);
}

TEST(EngineTest, AHugeCopyStreamsThroughAPoolMuchSmallerThanIt) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  Profile profile = small_profile();
  profile.chunk_bytes = 256 << 10;
  profile.slots = 2;
  auto engine = make_engine(device, profile);
  const std::size_t bytes = kHugeBytes;
  const auto payload = pattern(bytes, 77);
  DeviceMemory on_device(device, bytes);
  auto up = engine->copy(on_device.data() + kGuard, payload.data(), bytes);
  ASSERT_THAT(up, IsOk());
  ASSERT_THAT(up->wait(), IsOk());
  EXPECT_EQ(up->record().chunks, bytes / (256 << 10));
  EXPECT_EQ(up->record().slots, 2);
  std::vector<std::byte> back(bytes);
  auto down = engine->copy(back.data(), on_device.data() + kGuard, bytes);
  ASSERT_THAT(down, IsOk());
  ASSERT_THAT(down->wait(), IsOk());
  EXPECT_TRUE(back == payload);
}

TEST(EngineTest, ThePoolIsReusedSoPinningStaysConstantOverManyCopies) {
  auto backend = make_backend();
  CountingDevice device(*backend->devices().front());
  auto engine = make_engine(device, small_profile());
  const int pins_after_start = device.pins();
  const int allocations_after_start = device.allocations;
  const auto payload = pattern((2 << 20) + 3, 5);
  std::vector<std::byte> back(payload.size());
  DeviceMemory on_device(*backend->devices().front(), payload.size());
  for (int i = 0; i < 50; ++i) {
    auto up = engine->copy(on_device.data(), payload.data(), payload.size());
    ASSERT_THAT(up, IsOk());
    ASSERT_THAT(up->wait(), IsOk());
    auto down = engine->copy(back.data(), on_device.data(), back.size());
    ASSERT_THAT(down, IsOk());
    ASSERT_THAT(down->wait(), IsOk());
  }
  EXPECT_EQ(device.pins(), pins_after_start);
  EXPECT_EQ(device.allocations, allocations_after_start);
  EXPECT_EQ(back, payload);
}

TEST(EngineTest, ABufferIsRegisteredAfterKUsesAndThenGoesDirect) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  Profile profile = small_profile();
  profile.register_after_uses = 3;
  auto engine = make_engine(device, profile);
  const auto payload = pattern(1 << 20, 3);
  DeviceMemory on_device(device, payload.size());
  const auto copy_once = [&] {
    auto transfer = engine->copy(on_device.data() + kGuard, payload.data(), payload.size());
    ACCO_CHECK(transfer.has_value());
    auto record = transfer->wait();
    ACCO_CHECK(record.has_value());
    return *record;
  };
  EXPECT_EQ(copy_once().strategy, Strategy::kPipelined);
  EXPECT_EQ(copy_once().strategy, Strategy::kPipelined);
  EXPECT_EQ(engine->registrations(), 0U);
  const CopyRecord third = copy_once();
  EXPECT_EQ(third.strategy, Strategy::kDirect);
  EXPECT_TRUE(third.registered);
  EXPECT_EQ(third.src_kind, MemoryKind::kRegistered);
  EXPECT_EQ(engine->registrations(), 1U);
  const CopyRecord fourth = copy_once();
  EXPECT_EQ(fourth.strategy, Strategy::kDirect);
  EXPECT_TRUE(fourth.registered);
  EXPECT_EQ(fourth.pin_time.count(), 0);  // paid once, by the third copy
  expect_exactly(on_device.read_all(), kGuard, payload);

  engine->forget(payload.data());
  EXPECT_EQ(engine->registrations(), 0U);
  EXPECT_EQ(device.kind_of(payload.data()), MemoryKind::kPageable);
  EXPECT_EQ(copy_once().strategy, Strategy::kPipelined);  // counting starts again
}

TEST(EngineTest, ACopyLongerThanTheEnginesRegistrationIsStaged) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  Profile profile = small_profile();
  profile.register_after_uses = 1;
  auto engine = make_engine(device, profile);
  const auto payload = pattern(1 << 20, 8);
  DeviceMemory on_device(device, payload.size());
  auto first = engine->copy(on_device.data() + kGuard, payload.data(), 4096);
  ASSERT_THAT(first, IsOk());
  ASSERT_THAT(first->wait(), IsOk());
  EXPECT_TRUE(first->record().registered);
  auto longer = engine->copy(on_device.data() + kGuard, payload.data(), payload.size());
  ASSERT_THAT(longer, IsOk());
  ASSERT_THAT(longer->wait(), IsOk());
  EXPECT_EQ(longer->record().strategy, Strategy::kPipelined);
  EXPECT_FALSE(longer->record().registered);
  expect_exactly(on_device.read_all(), kGuard, payload);
}

TEST(EngineTest, ZeroLengthCopiesCompleteAtOnceWhateverThePointers) {
  auto backend = make_backend();
  auto engine = make_engine(*backend->devices().front(), small_profile());
  auto transfer = engine->copy(nullptr, nullptr, 0);
  ASSERT_THAT(transfer, IsOk());
  EXPECT_TRUE(transfer->ready());
  const auto record = transfer->wait();
  ASSERT_THAT(record, IsOk());
  EXPECT_EQ(record->strategy, Strategy::kNone);
  EXPECT_EQ(record->bytes, 0U);
}

TEST(EngineTest, NullPointersAreInvalidArgument) {
  auto backend = make_backend();
  auto engine = make_engine(*backend->devices().front(), small_profile());
  std::vector<std::byte> host(16);
  for (const auto& [dst, src] : {std::pair<void*, const void*>{nullptr, host.data()},
                                 std::pair<void*, const void*>{host.data(), nullptr}}) {
    const auto transfer = engine->copy(dst, src, 16);
    ASSERT_THAT(transfer, StatusIs(Errc::kInvalidArgument, HasSubstr("null")));
  }
}

TEST(EngineTest, OverlappingRangesAreInvalidArgument) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  auto engine = make_engine(device, small_profile());
  std::vector<std::byte> host(8192);
  DeviceMemory on_device(device, 8192);
  for (const auto& [dst, src] :
       {std::pair<std::byte*, std::byte*>{host.data() + 100, host.data()},
        std::pair<std::byte*, std::byte*>{on_device.data(), on_device.data() + 4095}}) {
    const auto transfer = engine->copy(dst, src, 4096);
    ASSERT_THAT(transfer, StatusIs(Errc::kInvalidArgument, HasSubstr("overlap")));
  }
}

TEST(EngineTest, ARangePastTheEndOfDeviceMemoryIsInvalidArgumentOnEveryPath) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  auto engine = make_engine(device, small_profile());
  auto small = device.allocate(4096);
  ASSERT_THAT(small, IsOk());
  std::vector<std::byte> host(1 << 20);
  auto pinned = device.allocate_host(1 << 20, MemoryKind::kPinned);
  ASSERT_THAT(pinned, IsOk());
  for (const auto& [src, strategy] :
       {std::pair<const void*, Strategy>{host.data(), Strategy::kPipelined},
        std::pair<const void*, Strategy>{host.data(), Strategy::kZeroCopy},
        std::pair<const void*, Strategy>{(*pinned)->data(), Strategy::kDirect}}) {
    const auto transfer = engine->copy((*small)->data(), src, 8192, {strategy});
    ASSERT_THAT(transfer, StatusIs(Errc::kInvalidArgument)) << to_string(strategy);
  }
  // Nothing stayed queued or held: the engine still works.
  auto ok = engine->copy((*small)->data(), host.data(), 4096, {Strategy::kPipelined});
  ASSERT_THAT(ok, IsOk());
  EXPECT_THAT(ok->wait(), IsOk());
}

TEST(EngineTest, AForcedStrategyThatCannotMoveTheCopyIsInvalidArgument) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  auto engine = make_engine(device, small_profile());
  std::vector<std::byte> host(4096);
  std::vector<std::byte> other(4096);
  DeviceMemory on_device(device, 4096);
  struct Bad {
    void* dst;
    const void* src;
    Strategy strategy;
  };
  for (const Bad& bad : {Bad{on_device.data(), host.data(), Strategy::kDirect},
                         Bad{other.data(), host.data(), Strategy::kPipelined},
                         Bad{other.data(), host.data(), Strategy::kZeroCopy},
                         Bad{on_device.data(), host.data(), Strategy::kHostCopy},
                         Bad{on_device.data(), host.data(), Strategy::kBatched},
                         Bad{on_device.data(), host.data(), Strategy::kNone}}) {
    const auto transfer = engine->copy(bad.dst, bad.src, 4096, {bad.strategy});
    ASSERT_THAT(transfer,
                StatusIs(Errc::kInvalidArgument, HasSubstr(std::string(to_string(bad.strategy)))))
        << to_string(bad.strategy);
  }
}

// Issue 33: with no profile, the engine staged pageable memory on the host backend and lost to the
// plain copy (9.8 against 14.7 GB/s); its defaults there hand it to the device's own copy.
TEST(EngineTest, WithoutAProfilePageableMemoryTakesThePlainPathOnTheHostBackend) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  DeviceMemory on_device(device, 1 << 20);
  const auto payload = pattern(1 << 20, 7);
  const auto defaults = Engine::create(device);
  ASSERT_THAT(defaults, IsOk());
  EXPECT_FALSE((*defaults)->profile().stage_pageable);
  auto transfer = (*defaults)->copy(on_device.data() + kGuard, payload.data(), payload.size());
  ASSERT_THAT(transfer, IsOk());
  const auto record = transfer->wait();
  ASSERT_THAT(record, IsOk());
  EXPECT_EQ(record->strategy, Strategy::kDirect);
  EXPECT_FALSE(record->registered);
  const auto staged = Engine::create(device, Profile{});  // a profile given is a profile kept
  ASSERT_THAT(staged, IsOk());
  auto again = (*staged)->copy(on_device.data() + kGuard, payload.data(), payload.size());
  ASSERT_THAT(again, IsOk());
  const auto staged_record = again->wait();
  ASSERT_THAT(staged_record, IsOk());
  EXPECT_EQ(staged_record->strategy, Strategy::kPipelined);
}

TEST(EngineTest, AnInvalidProfileIsRejectedByName) {
  auto backend = make_backend();
  Profile profile;
  profile.slots = 0;
  const auto engine = Engine::create(*backend->devices().front(), profile);
  ASSERT_THAT(engine, StatusIs(Errc::kInvalidArgument, HasSubstr("slots")));
}

TEST(EngineTest, NoPinnableMemoryAtStartIsDeviceError) {
  auto backend = make_backend();
  CountingDevice device(*backend->devices().front());
  device.fail_host = true;
  const auto engine = Engine::create(device, small_profile());
  ASSERT_THAT(engine, StatusIs(Errc::kDeviceError));
}

TEST(EngineTest, DeviceOutOfMemoryIsDeviceErrorAndTheEngineGoesOn) {
  device::HostBackendOptions options;
  options.memory_bytes_per_device = 1 << 20;  // less than one 2 MiB device staging slot
  auto backend = make_backend(options);
  device::Device& device = *backend->devices().front();
  auto engine = make_engine(device, small_profile());
  DeviceMemory on_device(device, 4096);
  const auto payload = pattern(4096, 1);
  Batch batch = engine->batch();
  ASSERT_THAT(batch.add(on_device.data() + kGuard, payload.data(), payload.size()), IsOk());
  const auto transfer = batch.submit();
  ASSERT_THAT(transfer, StatusIs(Errc::kDeviceError));
  EXPECT_EQ(batch.items(), 0U);
  // The slot it had taken is back: a later copy through the pool still runs.
  auto copy = engine->copy(on_device.data() + kGuard, payload.data(), payload.size());
  ASSERT_THAT(copy, IsOk());
  ASSERT_THAT(copy->wait(), IsOk());
  EXPECT_EQ(engine->info().pool.slots, 3);
  expect_exactly(on_device.read_all(), kGuard, payload);
}

TEST(EngineTest, WaitMayBeCalledAgain) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  auto engine = make_engine(device, small_profile());
  HostMemory pinned(device, MemoryKind::kPinned, 4096);
  DeviceMemory on_device(device, 4096);
  auto transfer = engine->copy(on_device.data(), pinned.data(), 4096);
  ASSERT_THAT(transfer, IsOk());
  EXPECT_THAT(transfer->wait(), IsOk());
  EXPECT_THAT(transfer->wait(), IsOk());
  EXPECT_TRUE(transfer->ready());
}

TEST(EngineTest, CopiesInBothDirectionsCanBeInFlightAtOnce) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  auto engine = make_engine(device, small_profile());
  const std::size_t bytes = 3 << 20;
  HostMemory up_src(device, MemoryKind::kPinned, bytes);
  HostMemory down_dst(device, MemoryKind::kPinned, bytes);
  DeviceMemory a(device, bytes);
  DeviceMemory b(device, bytes);
  const auto up_payload = pattern(bytes, 11);
  const auto down_payload = pattern(bytes, 12);
  std::memcpy(up_src.data(), up_payload.data(), bytes);
  b.write(kGuard, down_payload);
  auto up = engine->copy(a.data() + kGuard, up_src.data(), bytes);
  auto down = engine->copy(down_dst.data(), b.data() + kGuard, bytes);
  ASSERT_THAT(up, IsOk());
  ASSERT_THAT(down, IsOk());
  ASSERT_THAT(up->wait(), IsOk());
  ASSERT_THAT(down->wait(), IsOk());
  expect_exactly(a.read_all(), kGuard, up_payload);
  EXPECT_EQ(std::memcmp(down_dst.data(), down_payload.data(), bytes), 0);
}

TEST(EngineTest, OneEnginePerThreadRunsConcurrently) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  std::vector<std::thread> threads;
  std::vector<int> ok(3, 0);
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      auto engine = make_engine(device, small_profile());
      const auto payload = pattern((1 << 20) + 9, static_cast<std::uint64_t>(t));
      std::vector<std::byte> back(payload.size());
      auto buffer = device.allocate(payload.size());
      ACCO_CHECK(buffer.has_value());
      for (int i = 0; i < 5; ++i) {
        auto up = engine->copy((*buffer)->data(), payload.data(), payload.size());
        ACCO_CHECK(up.has_value() && up->wait().has_value());
        auto down = engine->copy(back.data(), (*buffer)->data(), back.size());
        ACCO_CHECK(down.has_value() && down->wait().has_value());
      }
      ok[static_cast<std::size_t>(t)] = back == payload ? 1 : 0;
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(ok, std::vector<int>(3, 1));
}

TEST(EngineTest, InfoReportsThePoolAndTheMeasuredHost) {
  auto backend = make_backend();
  auto engine = make_engine(*backend->devices().front(), small_profile());
  const EngineInfo& info = engine->info();
  EXPECT_EQ(info.queues, 2);
  EXPECT_EQ(info.host_copy_threads, 2);
  EXPECT_GT(info.host_memcpy_bytes_per_second, 0);
  EXPECT_EQ(info.pool.slots, 3);
  EXPECT_GE(info.pool.slot_bytes, 2U << 20);
  EXPECT_GT(info.pool.setup_time.count(), 0);
}

// A Gen5 x16 link needs 8 threads at the cold per-thread rate, whatever the cache-hot start-up
// measurement said (it said more than the link on the H200 where one thread was chosen).
TEST(AutoHostCopyThreads, AssumesNoMoreThanTheColdRatePerThread) {
  EXPECT_EQ(auto_host_copy_threads(63e9, 70e9, 16), 8);
  EXPECT_EQ(auto_host_copy_threads(63e9, 4e9, 32), 12);    // memory bandwidth caps the count
  EXPECT_EQ(auto_host_copy_threads(450e9, 70e9, 72), 12);  // NVLink-C2C (Grace Hopper)
  EXPECT_EQ(auto_host_copy_threads(25e9, 70e9, 16), 4);    // Gen4 x16
  EXPECT_EQ(auto_host_copy_threads(63e9, 70e9, 4), 3);     // one core left to the submitter
  EXPECT_EQ(auto_host_copy_threads(63e9, 70e9, 1), 1);
  EXPECT_EQ(auto_host_copy_threads(0, 70e9, 16), 1);  // no link rate known
  EXPECT_EQ(auto_host_copy_threads(63e9, 0, 16), 1);
}

// With the host copy threads left to it, the engine sizes them for the device's link, and where
// the backend does not know the link (CUDA's driver does not say) for one DMA it measures.
TEST(EngineTest, AutoHostThreadsUseTheDevicesLinkElseAMeasuredDma) {
  Profile automatic = small_profile();
  automatic.host_copy_threads = 0;

  device::HostBackendOptions rated;
  rated.link = {"25GB/s", 25e9, {}};
  auto backend = make_backend(rated);
  auto engine = make_engine(*backend->devices().front(), automatic);
  EXPECT_DOUBLE_EQ(engine->info().link_bytes_per_second, 25e9);
  EXPECT_GE(engine->info().host_copy_threads, 1);

  device::HostBackendOptions unlimited;
  unlimited.link = {"unlimited", 0, {}};
  auto unrated = make_backend(unlimited);
  CountingDevice counted(*unrated->devices().front());
  auto measured = make_engine(counted, automatic);
  EXPECT_GT(measured->info().link_bytes_per_second, 0);
  EXPECT_GE(counted.allocations, 2);  // the mapping probe and the DMA's target

  // A fixed count is taken as it is: nothing measured, no link to report.
  auto fixed = make_engine(*unrated->devices().front(), small_profile());
  EXPECT_EQ(fixed->info().host_copy_threads, 2);
  EXPECT_EQ(fixed->info().link_bytes_per_second, 0);
}

}  // namespace
}  // namespace acco::transfer
