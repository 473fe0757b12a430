#include "acco/transfer/counters.hpp"

#include <atomic>
#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"
#include "acco/transfer/engine.hpp"

#include "test_device.hpp"

namespace acco::transfer {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using testing::make_backend;
using testing::pattern;

Profile counting_profile() {
  Profile p;
  p.chunk_bytes = 1 << 20;
  p.slots = 3;
  p.queues = 2;
  p.batch_below_bytes = 64 << 10;
  p.zero_copy_below_bytes = 0;
  return p;
}

std::unique_ptr<Engine> make_engine(device::Device& device, const Profile& profile) {
  auto engine = Engine::create(device, profile);
  ACCO_CHECK(engine.has_value());
  return std::move(*engine);
}

std::unique_ptr<device::Buffer> device_buffer(device::Device& device, std::size_t bytes) {
  auto buffer = device.allocate(bytes);
  ACCO_CHECK(buffer.has_value());
  return std::move(*buffer);
}

void copy_and_wait(Engine& engine, void* dst, const void* src, std::size_t bytes) {
  auto transfer = engine.copy(dst, src, bytes);
  ACCO_CHECK(transfer.has_value());
  ACCO_CHECK(transfer->wait().has_value());
}

TEST(EngineCountersTest, ANewEngineHasMovedNothing) {
  auto backend = make_backend();
  auto engine = make_engine(*backend->devices().front(), counting_profile());
  EXPECT_EQ(engine->counters(), EngineCounters{});
}

TEST(EngineCountersTest, EachDirectionCountsItsBytesAndCopies) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  auto engine = make_engine(device, counting_profile());
  const auto payload = pattern((3 << 20) + 5, 1);  // pipelined through several slots
  std::vector<std::byte> back(payload.size());
  auto a = device_buffer(device, payload.size());
  auto b = device_buffer(device, payload.size());

  copy_and_wait(*engine, a->data(), payload.data(), payload.size());
  copy_and_wait(*engine, a->data(), payload.data(), payload.size());
  copy_and_wait(*engine, b->data(), a->data(), 1000);
  copy_and_wait(*engine, back.data(), b->data(), 100);
  copy_and_wait(*engine, back.data(), payload.data(), 10);

  const EngineCounters c = engine->counters();
  EXPECT_EQ(c.host_to_device, (DirectionCounters{2 * payload.size(), 2}));
  EXPECT_EQ(c.device_to_device, (DirectionCounters{1000, 1}));
  EXPECT_EQ(c.device_to_host, (DirectionCounters{100, 1}));
  EXPECT_EQ(c.host_to_host, (DirectionCounters{10, 1}));
  EXPECT_EQ(c.of(Direction::kHostToDevice), c.host_to_device);
  EXPECT_EQ(c.bytes(), 2 * payload.size() + 1110);
  EXPECT_EQ(c.batches, 0U);
}

TEST(EngineCountersTest, FailedAndEmptyCopiesAreNotCounted) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  auto engine = make_engine(device, counting_profile());
  std::vector<std::byte> host(64);
  EXPECT_THAT(engine->copy(nullptr, host.data(), host.size()), StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(engine->copy(host.data(), host.data() + 8, 32), StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(engine->copy(host.data(), nullptr, 0), IsOk());
  EXPECT_EQ(engine->counters(), EngineCounters{});
}

TEST(EngineCountersTest, ABatchCountsOnceAndEveryItemByDirection) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  auto engine = make_engine(device, counting_profile());
  const auto small = pattern(4096, 2);
  const auto big = pattern(1 << 20, 3);  // above batch_below_bytes: a copy of its own
  std::vector<std::byte> back(4096);
  auto on_device = device_buffer(device, 4 << 20);
  auto* base = static_cast<std::byte*>(on_device->data());

  Batch batch = engine->batch();
  ASSERT_THAT(batch.add(base, small.data(), small.size()), IsOk());
  ASSERT_THAT(batch.add(base + 8192, small.data(), small.size()), IsOk());
  ASSERT_THAT(batch.add(base + (2 << 20), big.data(), big.size()), IsOk());
  ASSERT_THAT(batch.add(back.data(), base + (1 << 20), back.size()), IsOk());
  auto transfer = batch.submit();
  ASSERT_THAT(transfer, IsOk());
  ASSERT_THAT(transfer->wait(), IsOk());
  Batch empty = engine->batch();
  ASSERT_THAT(empty.submit(), IsOk());

  const EngineCounters c = engine->counters();
  EXPECT_EQ(c.batches, 1U);
  EXPECT_EQ(c.host_to_device, (DirectionCounters{2 * small.size() + big.size(), 3}));
  EXPECT_EQ(c.device_to_host, (DirectionCounters{back.size(), 1}));
}

TEST(EngineCountersTest, CountersMayBeReadWhileAnotherThreadCopies) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  auto engine = make_engine(device, counting_profile());
  const auto payload = pattern(4096, 4);
  auto buffer = device_buffer(device, payload.size());
  constexpr int kCopies = 2000;
  std::atomic<bool> done{false};
  std::uint64_t last = 0;
  bool monotonic = true;
  std::thread reader([&] {
    while (!done.load()) {
      const std::uint64_t now = engine->counters().host_to_device.bytes;
      monotonic = monotonic && now >= last;
      last = now;
    }
  });
  for (int i = 0; i < kCopies; ++i) {
    copy_and_wait(*engine, buffer->data(), payload.data(), payload.size());
  }
  done = true;
  reader.join();
  EXPECT_TRUE(monotonic);
  EXPECT_EQ(engine->counters().host_to_device,
            (DirectionCounters{kCopies * payload.size(), kCopies}));
}

TEST(EngineCountersTest, SumsAddEveryDirection) {
  EngineCounters a;
  a.host_to_device = {10, 1};
  a.batches = 2;
  EngineCounters b;
  b.host_to_device = {5, 2};
  b.device_to_host = {7, 1};
  b.batches = 1;
  a += b;
  EXPECT_EQ(a.host_to_device, (DirectionCounters{15, 3}));
  EXPECT_EQ(a.device_to_host, (DirectionCounters{7, 1}));
  EXPECT_EQ(a.batches, 3U);
  EXPECT_EQ(a.bytes(), 22U);
}

}  // namespace
}  // namespace acco::transfer
