#include "buffer_cache.hpp"

#include <cstddef>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

namespace acco::sched::detail {
namespace {

class FakeBuffer final : public device::Buffer {
 public:
  explicit FakeBuffer(std::size_t bytes) : bytes_(bytes) {}
  void* data() const override { return nullptr; }
  std::size_t size() const override { return bytes_; }
  device::MemoryKind kind() const override { return device::MemoryKind::kDevice; }
  bool host_accessible() const override { return false; }

 private:
  std::size_t bytes_;
};

std::unique_ptr<device::Buffer> buffer(std::size_t bytes) {
  return std::make_unique<FakeBuffer>(bytes);
}

TEST(BufferCacheTest, GivesBackABufferOfExactlyTheSizeAskedFor) {
  BufferCache cache;
  cache.keep(buffer(100), 1000);
  cache.keep(buffer(200), 1000);
  EXPECT_EQ(cache.bytes(), 300u);
  EXPECT_EQ(cache.take(150), nullptr);
  auto taken = cache.take(200);
  ASSERT_NE(taken, nullptr);
  EXPECT_EQ(taken->size(), 200u);
  EXPECT_EQ(cache.bytes(), 100u);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(BufferCacheTest, KeepsABufferOnlyWithinItsLimit) {
  BufferCache cache;
  cache.keep(buffer(600), 1000);
  cache.keep(buffer(500), 1000);  // 1100 > 1000: freed
  EXPECT_EQ(cache.bytes(), 600u);
  cache.keep(buffer(400), 1000);
  EXPECT_EQ(cache.bytes(), 1000u);
  cache.keep(buffer(1), 0);
  EXPECT_EQ(cache.size(), 2u);
}

TEST(BufferCacheTest, MakesRoomByFreeingTheLargestBuffersFirst) {
  BufferCache cache;
  cache.keep(buffer(100), 1000);
  cache.keep(buffer(300), 1000);
  cache.keep(buffer(200), 1000);
  // 400 in use + 600 cached + 100 incoming > 1000: the 300 goes, then 400 + 300 + 100 fits.
  cache.make_room(400, 100, 1000);
  EXPECT_EQ(cache.bytes(), 300u);
  EXPECT_EQ(cache.take(300), nullptr);
  cache.make_room(1000, 1, 1000);  // nothing fits: everything goes
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
}

TEST(DeviceMemoryTest, ADroppedBufferLeavesTheUsedBytesAndIsCachedWithinTheLimit) {
  DeviceMemory memory;
  memory.budget = 1000;
  memory.used = 300;
  memory.drop(buffer(200), 150);  // over the cache's limit: freed
  EXPECT_EQ(memory.used, 100u);
  EXPECT_EQ(memory.cache.size(), 0u);
  memory.drop(buffer(100), 150);
  EXPECT_EQ(memory.used, 0u);
  EXPECT_EQ(memory.cache.bytes(), 100u);
  memory.drop(nullptr, 150);
  EXPECT_EQ(memory.used, 0u);
}

}  // namespace
}  // namespace acco::sched::detail
