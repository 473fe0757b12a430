#include "acco/transfer/staging_pool.hpp"

#include <atomic>
#include <cstdint>
#include <set>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"

#include "test_device.hpp"

namespace acco::transfer {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using testing::CountingDevice;
using ::testing::HasSubstr;
using testing::make_backend;

// A machine whose kernel reports transparent huge pages in `mode`.
core::ReplayFs thp_machine(const std::string& mode) {
  core::FsRecord record;
  std::string line;
  for (const char* m : {"always", "madvise", "never"}) {
    line += (line.empty() ? "" : " ") + (m == mode ? "[" + mode + "]" : std::string(m));
  }
  record.files["/sys/kernel/mm/transparent_hugepage/enabled"] = {true, line + "\n", {}, {}, {}};
  record.files["/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"] = {
      true, "2097152\n", {}, {}, {}};
  return core::ReplayFs(record);
}

TEST(StagingPoolTest, SlotsArePageAlignedDisjointAndPinned) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  const core::ReplayFs fs = thp_machine("never");
  auto pool = StagingPool::create(device, {10000, 3, true, &fs});
  ASSERT_THAT(pool, IsOk());
  const PoolInfo& info = (*pool)->info();
  EXPECT_EQ(info.slot_bytes, 12288U);  // rounded up to pages
  EXPECT_EQ(info.slots, 3);
  EXPECT_EQ(info.kind, device::MemoryKind::kPinned);
  EXPECT_GE(info.alignment_bytes, 4096U);
  std::set<std::byte*> starts;
  std::vector<StagingPool::Slot> slots;
  for (int i = 0; i < 3; ++i) {
    slots.push_back((*pool)->acquire());
    const StagingPool::Slot& slot = slots.back();
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(slot.data) % 4096, 0U);
    EXPECT_EQ(slot.bytes, info.slot_bytes);
    EXPECT_NE(device.kind_of(slot.data), device::MemoryKind::kPageable);
    starts.insert(slot.data);
  }
  EXPECT_EQ(starts.size(), 3U);
  for (auto it = std::next(starts.begin()); it != starts.end(); ++it) {
    EXPECT_GE(*it - *std::prev(it), static_cast<std::ptrdiff_t>(info.slot_bytes));
  }
  for (const auto& slot : slots) {
    (*pool)->release(slot.index);
  }
}

TEST(StagingPoolTest, LargePoolsStartOnHugePageBoundariesWhenTheKernelOffersThem) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  const core::ReplayFs fs = thp_machine("madvise");
  auto pool = StagingPool::create(device, {3 << 20, 2, true, &fs});
  ASSERT_THAT(pool, IsOk());
  const PoolInfo& info = (*pool)->info();
  EXPECT_EQ(info.transparent_hugepage, "madvise");
  EXPECT_EQ(info.kind, device::MemoryKind::kRegistered);
  EXPECT_TRUE(info.huge_page_advice);
  EXPECT_EQ(info.slot_bytes, 4U << 20);  // whole huge pages per slot
  EXPECT_EQ(info.alignment_bytes, 2U << 20);
  const StagingPool::Slot a = (*pool)->acquire();
  const StagingPool::Slot b = (*pool)->acquire();
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data) % (2 << 20), 0U);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data) % (2 << 20), 0U);
  EXPECT_EQ(device.kind_of(a.data), device::MemoryKind::kRegistered);
  (*pool)->release(a.index);
  (*pool)->release(b.index);
}

TEST(StagingPoolTest, NoHugePagesWhenTheKernelHasThemOff) {
  auto backend = make_backend();
  const core::ReplayFs fs = thp_machine("never");
  auto pool = StagingPool::create(*backend->devices().front(), {4 << 20, 2, true, &fs});
  ASSERT_THAT(pool, IsOk());
  EXPECT_EQ((*pool)->info().kind, device::MemoryKind::kPinned);
  EXPECT_FALSE((*pool)->info().huge_page_advice);
}

TEST(StagingPoolTest, PinningIsPaidOnceAtCreation) {
  auto backend = make_backend();
  CountingDevice device(*backend->devices().front());
  auto pool = StagingPool::create(device, {1 << 20, 4});
  ASSERT_THAT(pool, IsOk());
  EXPECT_EQ(device.pins(), 1);  // one slab, not one pin per slot
  EXPECT_GT((*pool)->info().setup_time.count(), 0);
  EXPECT_GT((*pool)->info().pin_bytes_per_second(), 0);
  for (int i = 0; i < 100; ++i) {
    (*pool)->release((*pool)->acquire().index);
  }
  EXPECT_EQ(device.pins(), 1);
  EXPECT_EQ((*pool)->acquisitions(), 100U);
}

TEST(StagingPoolTest, TryAcquireFailsOnlyWhenEverySlotIsTaken) {
  auto backend = make_backend();
  auto pool = StagingPool::create(*backend->devices().front(), {4096, 2});
  ASSERT_THAT(pool, IsOk());
  const auto a = (*pool)->try_acquire();
  const auto b = (*pool)->try_acquire();
  ASSERT_TRUE(a && b);
  EXPECT_FALSE((*pool)->try_acquire().has_value());
  EXPECT_EQ((*pool)->available(), 0);
  (*pool)->release(a->index);
  EXPECT_EQ((*pool)->available(), 1);
  (*pool)->release(b->index);
}

TEST(StagingPoolTest, AcquireWaitsForAReleaseFromAnotherThread) {
  auto backend = make_backend();
  auto pool = StagingPool::create(*backend->devices().front(), {4096, 1});
  ASSERT_THAT(pool, IsOk());
  const StagingPool::Slot held = (*pool)->acquire();
  std::atomic<bool> released{false};
  std::thread other([&] {
    released = true;
    (*pool)->release(held.index);
  });
  const StagingPool::Slot again = (*pool)->acquire();  // returns only after the release
  EXPECT_TRUE(released.load());
  EXPECT_EQ(again.index, held.index);
  other.join();
  (*pool)->release(again.index);
}

TEST(StagingPoolTest, BadOptionsAreInvalidArgument) {
  auto backend = make_backend();
  device::Device& device = *backend->devices().front();
  for (const StagingPoolOptions& options :
       {StagingPoolOptions{0, 2}, StagingPoolOptions{4096, 0}}) {
    const auto pool = StagingPool::create(device, options);
    ASSERT_THAT(pool, StatusIs(Errc::kInvalidArgument));
  }
}

TEST(StagingPoolTest, PinningFailureIsDeviceErrorWithTheReason) {
  auto backend = make_backend();
  CountingDevice device(*backend->devices().front());
  device.fail_host = true;
  for (const char* mode : {"never", "always"}) {
    const core::ReplayFs fs = thp_machine(mode);
    const auto pool = StagingPool::create(device, {4 << 20, 2, true, &fs});
    EXPECT_THAT(pool, StatusIs(Errc::kDeviceError, HasSubstr("staging pool"))) << mode;
  }
}

}  // namespace
}  // namespace acco::transfer
