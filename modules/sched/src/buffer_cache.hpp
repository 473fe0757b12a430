// A device's memory as the runtime counts it: the budget, what replicas use, and the buffers of
// dropped replicas kept for reuse within the same budget (RuntimeOptions::buffer_cache_bytes),
// so that a stream of same-sized data does not allocate device memory per task.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>

#include "acco/core/result.hpp"
#include "acco/device/device.hpp"

namespace acco::sched::detail {

// Buffers by size. Pure bookkeeping: what is in use is counted by its owner (DeviceMemory).
class BufferCache {
 public:
  // A cached buffer of exactly `bytes`, or null.
  std::unique_ptr<device::Buffer> take(std::size_t bytes);
  // Frees cached buffers, largest first, while in_use + bytes() + incoming > budget.
  void make_room(std::uint64_t in_use, std::size_t incoming, std::uint64_t budget);
  // Keeps `buffer` when the cache then holds at most `limit` bytes; frees it otherwise.
  void keep(std::unique_ptr<device::Buffer> buffer, std::uint64_t limit);
  std::uint64_t bytes() const { return bytes_; }
  std::size_t size() const { return buffers_.size(); }

 private:
  std::multimap<std::size_t, std::unique_ptr<device::Buffer>> buffers_;
  std::uint64_t bytes_ = 0;
};

struct DeviceMemory {
  std::uint64_t budget = 0;
  std::uint64_t used = 0;  // by replicas (the cache is counted apart); with the cache, <= budget
  BufferCache cache;
  std::size_t buffers_allocated = 0;
  std::size_t buffers_reused = 0;

  // A buffer for a replica of `bytes` (the caller checked used + bytes against the budget): a
  // cached one of that size, else a new one from `device`, after freeing cached buffers as
  // needed to keep used + cached within the budget. Counted in `used`.
  Result<std::unique_ptr<device::Buffer>> take(device::Device& device, std::size_t bytes);
  // A replica's buffer is no longer needed: cached within `cache_limit` bytes, or freed.
  void drop(std::unique_ptr<device::Buffer> buffer, std::uint64_t cache_limit);
};

}  // namespace acco::sched::detail
