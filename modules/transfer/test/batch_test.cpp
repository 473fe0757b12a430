#include <cstring>
#include <memory>
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
using device::MemoryKind;
using ::testing::HasSubstr;
using testing::make_backend;
using testing::pattern;

Profile batch_profile() {
  Profile p;
  p.chunk_bytes = 1 << 20;
  p.slots = 3;
  p.queues = 2;
  p.batch_below_bytes = 64 << 10;
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

// Device memory as the host sees it: in place where it can (the host backend), else a copy.
std::vector<std::byte> read_back(device::Device& device, const device::Buffer& buffer) {
  if (buffer.host_accessible()) {
    const auto* data = static_cast<const std::byte*>(buffer.data());
    return {data, data + buffer.size()};
  }
  std::vector<std::byte> out(buffer.size());
  ACCO_CHECK(device.copy(out.data(), buffer.data(), out.size()).has_value());
  return out;
}

constexpr std::size_t kItems = 10'000;
constexpr std::size_t kItemBytes = 4096;

TEST(BatchTest, TenThousandSmallCopiesToTheDeviceArriveIntact) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  auto engine = make_engine(device, batch_profile());
  // Items go to a shuffled order of device offsets, so a scatter that kept the packed order
  // would be caught.
  const auto host = pattern(kItems * kItemBytes, 21);
  auto on_device = device_buffer(device, kItems * kItemBytes);
  auto* base = static_cast<std::byte*>(on_device->data());
  Batch batch = engine->batch();
  for (std::size_t i = 0; i < kItems; ++i) {
    const std::size_t to = (i * 7919) % kItems;
    ASSERT_THAT(batch.add(base + to * kItemBytes, host.data() + i * kItemBytes, kItemBytes),
                IsOk());
  }
  EXPECT_EQ(batch.items(), kItems);
  EXPECT_EQ(batch.bytes(), kItems * kItemBytes);
  auto transfer = batch.submit();
  ASSERT_THAT(transfer, IsOk());
  const auto record = transfer->wait();
  ASSERT_THAT(record, IsOk());
  EXPECT_EQ(record->strategy, Strategy::kBatched);
  EXPECT_EQ(record->items, kItems);
  EXPECT_EQ(record->direction, Direction::kHostToDevice);
  // 40,960,000 bytes in 1 MiB rounds.
  EXPECT_EQ(record->chunks, (kItems * kItemBytes + (1 << 20) - 1) >> 20);
  const auto back = read_back(device, *on_device);
  for (std::size_t i = 0; i < kItems; ++i) {
    const std::size_t to = (i * 7919) % kItems;
    ASSERT_EQ(std::memcmp(back.data() + to * kItemBytes, host.data() + i * kItemBytes, kItemBytes),
              0)
        << "item " << i;
  }
  EXPECT_EQ(batch.items(), 0U);
}

TEST(BatchTest, TenThousandSmallCopiesToTheHostArriveIntact) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  auto engine = make_engine(device, batch_profile());
  const auto payload = pattern(kItems * kItemBytes, 22);
  auto on_device = device_buffer(device, payload.size());
  ASSERT_THAT(device.copy(on_device->data(), payload.data(), payload.size()), IsOk());
  std::vector<std::byte> host(payload.size());
  const auto* base = static_cast<const std::byte*>(on_device->data());
  Batch batch = engine->batch();
  for (std::size_t i = 0; i < kItems; ++i) {
    const std::size_t from = (i * 7919) % kItems;
    ASSERT_THAT(batch.add(host.data() + i * kItemBytes, base + from * kItemBytes, kItemBytes),
                IsOk());
  }
  auto transfer = batch.submit();
  ASSERT_THAT(transfer, IsOk());
  const auto record = transfer->wait();
  ASSERT_THAT(record, IsOk());
  EXPECT_EQ(record->direction, Direction::kDeviceToHost);
  for (std::size_t i = 0; i < kItems; ++i) {
    const std::size_t from = (i * 7919) % kItems;
    ASSERT_EQ(
        std::memcmp(host.data() + i * kItemBytes, payload.data() + from * kItemBytes, kItemBytes),
        0)
        << "item " << i;
  }
}

TEST(BatchTest, AMixedBatchMovesEveryKindOfItem) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  auto engine = make_engine(device, batch_profile());
  const auto a = pattern(100, 1);
  const auto big = pattern(3 << 20, 2);  // above batch_below_bytes: a copy of its own
  const auto c = pattern(5000, 3);
  auto d1 = device_buffer(device, 8 << 20);
  auto* dev = static_cast<std::byte*>(d1->data());
  ASSERT_THAT(device.copy(dev + (6 << 20), c.data(), c.size()), IsOk());
  std::vector<std::byte> host_out(5000);
  std::vector<std::byte> host_copy(100);

  Batch batch = engine->batch();
  ASSERT_THAT(batch.add(dev, a.data(), a.size()), IsOk());                 // to device
  ASSERT_THAT(batch.add(dev + 4096, big.data(), big.size()), IsOk());      // large
  ASSERT_THAT(batch.add(host_out.data(), dev + (6 << 20), 5000), IsOk());  // to host
  ASSERT_THAT(batch.add(dev + (7 << 20), dev + (6 << 20), 5000), IsOk());  // on device
  ASSERT_THAT(batch.add(host_copy.data(), a.data(), a.size()), IsOk());    // on host
  ASSERT_THAT(batch.add(dev + 200, a.data(), 0), IsOk());                  // dropped
  EXPECT_EQ(batch.items(), 5U);
  auto transfer = batch.submit();
  ASSERT_THAT(transfer, IsOk());
  ASSERT_THAT(transfer->wait(), IsOk());

  const auto back = read_back(device, *d1);
  EXPECT_EQ(std::memcmp(back.data(), a.data(), a.size()), 0);
  EXPECT_EQ(std::memcmp(back.data() + 4096, big.data(), big.size()), 0);
  EXPECT_EQ(std::memcmp(back.data() + (7 << 20), c.data(), c.size()), 0);
  EXPECT_EQ(host_out, c);
  EXPECT_EQ(host_copy, a);
}

TEST(BatchTest, ItemsLargerThanASlotAreSplitAcrossRounds) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  Profile profile = batch_profile();
  profile.chunk_bytes = 64 << 10;
  profile.batch_below_bytes = 1 << 20;
  auto engine = make_engine(device, profile);
  const auto payload = pattern(300'001, 5);
  auto on_device = device_buffer(device, payload.size() + 10);
  Batch batch = engine->batch();
  ASSERT_THAT(
      batch.add(static_cast<std::byte*>(on_device->data()) + 10, payload.data(), payload.size()),
      IsOk());
  auto transfer = batch.submit();
  ASSERT_THAT(transfer, IsOk());
  ASSERT_THAT(transfer->wait(), IsOk());
  EXPECT_EQ(transfer->record().chunks, 5U);  // 300,001 bytes in 64 KiB rounds
  const auto back = read_back(device, *on_device);
  EXPECT_EQ(std::memcmp(back.data() + 10, payload.data(), payload.size()), 0);
}

TEST(BatchTest, AnEmptyBatchCompletesAtOnce) {
  auto backend = make_backend();
  auto engine = make_engine(*backend->devices().front(), batch_profile());
  Batch batch = engine->batch();
  auto transfer = batch.submit();
  ASSERT_THAT(transfer, IsOk());
  EXPECT_TRUE(transfer->ready());
  EXPECT_EQ(transfer->record().strategy, Strategy::kNone);
  EXPECT_EQ(transfer->record().items, 0U);
}

TEST(BatchTest, AddRejectsNullPointersAndOverlaps) {
  auto backend = make_backend();
  auto engine = make_engine(*backend->devices().front(), batch_profile());
  std::vector<std::byte> host(100);
  Batch batch = engine->batch();
  const Status null_dst = batch.add(nullptr, host.data(), 10);
  ASSERT_THAT(null_dst, StatusIs(Errc::kInvalidArgument, HasSubstr("null")));
  const Status overlap = batch.add(host.data() + 5, host.data(), 10);
  ASSERT_THAT(overlap, StatusIs(Errc::kInvalidArgument, HasSubstr("overlap")));
  EXPECT_EQ(batch.items(), 0U);
}

TEST(BatchTest, AnItemPastTheEndOfDeviceMemoryFailsTheBatchAndNothingStaysQueued) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  auto engine = make_engine(device, batch_profile());
  auto on_device = device_buffer(device, 4096);
  // On the host backend device memory comes from the same heap: read from the middle of a large
  // buffer so no source can sit within a copy's length of its destination.
  const auto payload = pattern(1 << 20, 6);
  const std::byte* source = payload.data() + (512 << 10);
  Batch batch = engine->batch();
  ASSERT_THAT(batch.add(on_device->data(), source, 100), IsOk());
  ASSERT_THAT(batch.add(static_cast<std::byte*>(on_device->data()) + 4000, source, 200), IsOk());
  const auto transfer = batch.submit();
  ASSERT_THAT(transfer, StatusIs(Errc::kInvalidArgument, HasSubstr("batch")));
  // Every staging slot came back.
  Batch again = engine->batch();
  for (int i = 0; i < 10; ++i) {
    ASSERT_THAT(again.add(on_device->data(), source, 100), IsOk());
    auto t = again.submit();
    ASSERT_THAT(t, IsOk());
    ASSERT_THAT(t->wait(), IsOk());
  }
}

}  // namespace
}  // namespace acco::transfer
