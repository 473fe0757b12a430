// A bounded pool of pinned host slots for staging copies. The memory is allocated and pinned once,
// when the pool is created (on 2 MiB boundaries with transparent huge pages when the kernel offers
// them, on the device's NUMA node when it has one); copies only acquire and release slots, so
// pinning is never paid per copy.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "acco/core/fs.hpp"
#include "acco/core/result.hpp"
#include "acco/device/device.hpp"

namespace acco::transfer {

struct StagingPoolOptions {
  std::size_t slot_bytes = std::size_t{4} << 20;  // rounded up to the page size
  int slots = 4;
  // Ask for transparent huge pages when the slab is at least 2 MiB and the kernel allows it.
  bool huge_pages = true;
  // Where /sys/kernel/mm/transparent_hugepage and /proc/self/smaps are read; nullptr = this
  // machine. Must outlive create().
  const core::Fs* fs = nullptr;
};

// How the pool's memory was obtained, for reports.
struct PoolInfo {
  std::size_t slot_bytes = 0;  // usable bytes per slot (page-rounded)
  int slots = 0;
  std::size_t total_bytes = 0;      // the pinned slab
  std::size_t alignment_bytes = 0;  // of the slab and of every slot
  // kRegistered: an mmap'd slab advised for huge pages, then pinned in place with
  // Device::register_host (advice must come before the first touch to take effect).
  // kPinned: Device::allocate_host(kPinned), page-aligned.
  device::MemoryKind kind = device::MemoryKind::kPinned;
  std::string transparent_hugepage;        // the kernel's mode: "always", "madvise", "never", ""
  bool huge_page_advice = false;           // madvise(MADV_HUGEPAGE) applied
  long long huge_page_bytes = -1;          // AnonHugePages of the slab per smaps; -1 unknown
  int numa_node = -1;                      // node the slab was bound to (mbind); -1 not bound
  std::chrono::nanoseconds pin_time{0};    // allocate_host or register_host
  std::chrono::nanoseconds setup_time{0};  // everything: map, advise, bind, first touch, pin
  // total_bytes / setup_time: what pinning costs per byte on this machine.
  [[nodiscard]] double pin_bytes_per_second() const;
};

// Thread-safe: any thread may acquire and release (queue workers release slots when their DMA is
// done). Destroy only after every slot is released and no queued operation uses one.
class StagingPool {
 public:
  struct Slot {
    int index = -1;
    std::byte* data = nullptr;
    std::size_t bytes = 0;
  };

  // kInvalidArgument for slot_bytes 0 or slots < 1; kDeviceError (from the device) when the
  // memory cannot be allocated or pinned.
  [[nodiscard]] static Result<std::unique_ptr<StagingPool>> create(
      device::Device& device, const StagingPoolOptions& options = {});
  ~StagingPool();
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;

  // Blocks (on a condition variable, not spinning) until a slot is free.
  [[nodiscard]] Slot acquire();
  [[nodiscard]] std::optional<Slot> try_acquire();
  // Returns a slot taken by acquire or try_acquire.
  void release(int index);

  [[nodiscard]] int available() const;
  // Slots handed out since creation: a pool that is reused has acquisitions >> slots.
  [[nodiscard]] std::size_t acquisitions() const;
  [[nodiscard]] const PoolInfo& info() const { return info_; }

 private:
  struct Slab;
  StagingPool(std::unique_ptr<Slab> slab, PoolInfo info);
  [[nodiscard]] Slot slot(int index) const;

  std::unique_ptr<Slab> slab_;
  PoolInfo info_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  std::vector<int> free_;  // indices of free slots
  std::size_t acquisitions_ = 0;
};

}  // namespace acco::transfer
