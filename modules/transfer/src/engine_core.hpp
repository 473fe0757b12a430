// What every strategy of the engine shares: its device, queues, staging pool, device-side staging
// for batches, host copy threads and the registrations it made. Private to the xfer module.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/device/device.hpp"
#include "acco/transfer/engine.hpp"

#include "host_copier.hpp"
#include "registration_cache.hpp"

namespace acco::transfer::detail {

using Events = std::vector<std::shared_ptr<device::Event>>;

// True when [a, a + bytes) and [b, b + bytes) share a byte.
[[nodiscard]] inline bool ranges_overlap(const void* a, const void* b, std::size_t bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a);
  const auto y = reinterpret_cast<std::uintptr_t>(b);
  return (x >= y ? x - y : y - x) < bytes;
}

// Records the queues a copy used, so it can mark their ends with events, or drain them when a
// copy fails part-way and nothing may stay queued that points at the caller's memory.
class QueueSet {
 public:
  void use(device::Queue& queue);
  [[nodiscard]] Result<Events> record();
  // Waits for every used queue; returns the first error of the drain itself.
  Status drain();
  [[nodiscard]] int size() const { return static_cast<int>(used_.size()); }

 private:
  std::vector<device::Queue*> used_;
};

// The engine's counters, bumped by the thread that dispatches a copy and read by any thread: one
// relaxed fetch_add per counter, no lock, so counting costs a small copy a few nanoseconds.
class AtomicCounters {
 public:
  void add(Direction direction, std::size_t bytes, std::size_t copies) {
    const auto i = static_cast<std::size_t>(direction);
    bytes_[i].fetch_add(bytes, std::memory_order_relaxed);
    copies_[i].fetch_add(copies, std::memory_order_relaxed);
  }
  void add_batch() { batches_.fetch_add(1, std::memory_order_relaxed); }
  [[nodiscard]] EngineCounters read() const;

 private:
  static constexpr std::size_t kDirections = 4;
  std::array<std::atomic<std::uint64_t>, kDirections> bytes_{};
  std::array<std::atomic<std::uint64_t>, kDirections> copies_{};
  std::atomic<std::uint64_t> batches_{0};
};

struct EngineCore {
  EngineCore(device::Device& dev, const Profile& prof) : device(dev), profile(prof) {}

  // Round robin, so independent copies land on different queues and can run at once.
  device::Queue& next_queue();
  // The device-side twin of staging slot `index`, allocated on first use. kDeviceError when the
  // device is out of memory.
  [[nodiscard]] Result<std::byte*> device_slot(int index);
  // Returns `index` to the pool once everything queued on `queue` so far is done. When the
  // release cannot be queued, drains the queue and releases at once, so no slot is ever lost.
  [[nodiscard]] Status release_after(device::Queue& queue, int index);

  device::Device& device;
  const Profile profile;
  EngineInfo info;
  std::unique_ptr<StagingPool> pool;
  std::unique_ptr<HostCopier> copier;
  std::vector<std::unique_ptr<device::Buffer>> device_slots;
  RegistrationCache registrations;
  AtomicCounters counters;
  // Last, so they are destroyed first: a queue drains when destroyed, and its pending work
  // releases staging slots and reads device slots.
  std::vector<std::unique_ptr<device::Queue>> queues;
  std::size_t next_queue_index = 0;
};

// Strategy bodies, one file each. Each fills the record's strategy-specific fields; the queued
// ones return the events that complete the copy, host copy and zero-copy complete on return. On
// an error nothing a strategy queued is still pending.
[[nodiscard]] Status copy_host(EngineCore& core, void* dst, const void* src, std::size_t bytes,
                               CopyRecord& record);
[[nodiscard]] Status copy_zero_copy(EngineCore& core, void* dst, const void* src, std::size_t bytes,
                                    CopyRecord& record);
[[nodiscard]] Result<Events> copy_direct(EngineCore& core, void* dst, const void* src,
                                         std::size_t bytes, int queues, CopyRecord& record);
[[nodiscard]] Result<Events> copy_pipelined(EngineCore& core, void* dst, const void* src,
                                            std::size_t bytes, CopyRecord& record);

}  // namespace acco::transfer::detail
