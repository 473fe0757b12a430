// Pipelined staging for pageable host memory. Pageable pages cannot be DMA'd, so every chunk
// passes through a pinned staging slot; with several slots the host copy of one chunk runs while
// the DMA of the previous one is in flight, instead of the driver's copy-then-DMA, one at a time.
#include <algorithm>
#include <deque>

#include "engine_core.hpp"

namespace acco::transfer::detail {
namespace {

// Host to device: the caller copies chunk k into a slot while the queue DMAs chunk k-1 out of
// another; the queue itself hands a slot back when its DMA is done.
Status to_device(EngineCore& core, device::Queue& queue, std::byte* dst, const std::byte* src,
                 std::size_t bytes) {
  const std::size_t chunk = core.pool->info().slot_bytes;
  for (std::size_t offset = 0; offset < bytes; offset += chunk) {
    const std::size_t n = std::min(chunk, bytes - offset);
    // Blocks while every slot is in flight: the pipeline is as deep as the pool.
    const StagingPool::Slot slot = core.pool->acquire();
    core.copier->copy(slot.data, src + offset, n);
    if (Status status = queue.copy(dst + offset, slot.data, n); !status) {
      core.pool->release(slot.index);
      return status;
    }
    ACCO_RETURN_IF_ERROR(core.release_after(queue, slot.index), "release staging slot");
  }
  return {};
}

// Device to host: DMAs run ahead into every free slot; the caller copies each chunk out as soon
// as its DMA is done and reuses the slot for the next chunk still to fetch.
Status to_host(EngineCore& core, device::Queue& queue, std::byte* dst, const std::byte* src,
               std::size_t bytes) {
  struct InFlight {
    StagingPool::Slot slot;
    std::size_t offset = 0;
    std::size_t bytes = 0;
    std::shared_ptr<device::Event> done;
  };
  const std::size_t chunk = core.pool->info().slot_bytes;
  std::deque<InFlight> in_flight;
  std::size_t next_offset = 0;

  const auto fetch = [&](const StagingPool::Slot& slot) -> Status {
    const std::size_t n = std::min(chunk, bytes - next_offset);
    if (Status status = queue.copy(slot.data, src + next_offset, n); !status) {
      core.pool->release(slot.index);
      return status;
    }
    auto event = queue.record();
    if (!event) {
      (void)queue.synchronize();
      core.pool->release(slot.index);
      return tl::unexpected(std::move(event.error()));
    }
    in_flight.push_back({slot, next_offset, n, std::move(*event)});
    next_offset += n;
    return {};
  };
  // Only block for a slot when nothing of ours is in flight: blocking while we hold slots whose
  // chunks we have not copied out yet could wait for ourselves.
  const auto fill = [&]() -> Status {
    while (next_offset < bytes) {
      std::optional<StagingPool::Slot> slot =
          in_flight.empty() ? std::optional(core.pool->acquire()) : core.pool->try_acquire();
      if (!slot) {
        return {};
      }
      ACCO_RETURN_IF_ERROR(fetch(*slot), "fetch chunk");
    }
    return {};
  };

  Status result = fill();
  while (!in_flight.empty()) {
    InFlight front = std::move(in_flight.front());
    in_flight.pop_front();
    Status done = front.done->wait();
    if (result && done) {
      core.copier->copy(dst + front.offset, front.slot.data, front.bytes);
    } else if (result) {
      result = std::move(done);
    }
    // After an error the loop still waits for every chunk in flight before its slot goes back.
    core.pool->release(front.slot.index);
    if (result) {
      result = fill();
    }
  }
  return result;
}

}  // namespace

Result<Events> copy_pipelined(EngineCore& core, void* dst, const void* src, std::size_t bytes,
                              CopyRecord& record) {
  // One queue: the overlap comes from the slots, and one copy engine already fills a link per
  // direction. A second DMA stream would only compete with the host copies for memory bandwidth
  // (and, on the host backend, for the cores that emulate the DMA).
  device::Queue& queue = core.next_queue();
  QueueSet used;
  used.use(queue);
  const bool host_to_device = record.direction == Direction::kHostToDevice;
  Status status = host_to_device ? to_device(core, queue, static_cast<std::byte*>(dst),
                                             static_cast<const std::byte*>(src), bytes)
                                 : to_host(core, queue, static_cast<std::byte*>(dst),
                                           static_cast<const std::byte*>(src), bytes);
  const std::size_t chunk = core.pool->info().slot_bytes;
  record.chunk_bytes = chunk;
  record.chunks = (bytes + chunk - 1) / chunk;
  record.queues = used.size();
  record.slots = static_cast<int>(std::min<std::size_t>(record.chunks, core.pool->info().slots));
  record.host_threads = core.copier->threads();
  if (!status) {
    (void)used.drain();
    return tl::unexpected(std::move(status.error()));
  }
  if (!host_to_device) {
    return Events{};  // every chunk was waited for and copied out already
  }
  auto events = used.record();
  if (!events) {
    (void)used.drain();
  }
  return events;
}

}  // namespace acco::transfer::detail
