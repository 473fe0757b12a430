#include "buffer_cache.hpp"

#include <iterator>
#include <utility>

namespace acco::sched::detail {

std::unique_ptr<device::Buffer> BufferCache::take(std::size_t bytes) {
  auto it = buffers_.find(bytes);
  if (it == buffers_.end()) {
    return nullptr;
  }
  std::unique_ptr<device::Buffer> buffer = std::move(it->second);
  buffers_.erase(it);
  bytes_ -= bytes;
  return buffer;
}

void BufferCache::make_room(std::uint64_t in_use, std::size_t incoming, std::uint64_t budget) {
  while (!buffers_.empty() && in_use + bytes_ + incoming > budget) {
    auto largest = std::prev(buffers_.end());
    bytes_ -= largest->first;
    buffers_.erase(largest);
  }
}

void BufferCache::keep(std::unique_ptr<device::Buffer> buffer, std::uint64_t limit) {
  const std::size_t bytes = buffer->size();
  if (bytes_ + bytes <= limit) {
    buffers_.emplace(bytes, std::move(buffer));
    bytes_ += bytes;
  }
}

Result<std::unique_ptr<device::Buffer>> DeviceMemory::take(device::Device& device,
                                                           std::size_t bytes) {
  if (std::unique_ptr<device::Buffer> cached = cache.take(bytes)) {
    used += bytes;
    ++buffers_reused;
    return cached;
  }
  // Cached buffers of other sizes give way to a new one, largest first.
  cache.make_room(used, bytes, budget);
  auto buffer = device.allocate(bytes);
  if (buffer) {
    used += bytes;
    ++buffers_allocated;
  }
  return buffer;
}

void DeviceMemory::drop(std::unique_ptr<device::Buffer> buffer, std::uint64_t cache_limit) {
  if (!buffer) {
    return;
  }
  used -= buffer->size();
  cache.keep(std::move(buffer), cache_limit);
}

}  // namespace acco::sched::detail
