// Direct copies: the memory is already DMA-capable (or device memory), so each part is one
// Queue::copy; large copies are cut into one part per queue so several copy engines share them.
#include <algorithm>

#include "engine_core.hpp"

namespace acco::transfer::detail {
namespace {

// Part boundaries fall on pages, so no two engines split a page between them.
constexpr std::size_t kPartAlignment = 4096;

}  // namespace

Result<Events> copy_direct(EngineCore& core, void* dst, const void* src, std::size_t bytes,
                           int queues, CopyRecord& record) {
  const auto parts = static_cast<std::size_t>(std::max(1, queues));
  std::size_t part_bytes = (bytes + parts - 1) / parts;
  part_bytes = std::min(bytes, (part_bytes + kPartAlignment - 1) / kPartAlignment * kPartAlignment);
  QueueSet used;
  std::size_t chunks = 0;
  for (std::size_t offset = 0; offset < bytes; offset += part_bytes) {
    const std::size_t n = std::min(part_bytes, bytes - offset);
    device::Queue& queue = core.next_queue();
    used.use(queue);
    if (Status status = queue.copy(static_cast<std::byte*>(dst) + offset,
                                   static_cast<const std::byte*>(src) + offset, n);
        !status) {
      (void)used.drain();
      return tl::unexpected(std::move(status.error()));
    }
    ++chunks;
  }
  record.chunk_bytes = chunks > 1 ? part_bytes : 0;
  record.chunks = chunks;
  record.queues = used.size();
  auto events = used.record();
  if (!events) {
    (void)used.drain();
  }
  return events;
}

}  // namespace acco::transfer::detail
