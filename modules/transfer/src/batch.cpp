// Batching: many small host<->device copies packed into staging slots, each slot crossing the link
// as one DMA, the items scattered (or gathered) on the device side. A DMA pays microseconds of
// setup and latency whatever its size, so 10,000 copies of 4 KiB cost 10,000 setups one by one
// and a handful packed.
//
// The device-side scatter is one device-to-device Queue::copy per item. On the host backend that
// is a memcpy on the queue's worker; on CUDA one scatter kernel taking the item list would do it in
// a single launch, which the device layer does not offer yet.
#include <algorithm>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "acco/core/units.hpp"
#include "acco/device/trace_range.hpp"

#include "engine_core.hpp"

namespace acco::transfer {
namespace {

using detail::EngineCore;
using detail::QueueSet;

// One piece of one item inside a staging round: an item larger than what is left of a round
// continues in the next one.
struct Segment {
  std::byte* dst = nullptr;
  const std::byte* src = nullptr;
  std::size_t offset = 0;  // in the packed round
  std::size_t bytes = 0;
};

struct Round {
  std::size_t bytes = 0;
  std::vector<Segment> segments;
};

struct Packed {
  void* dst;
  const void* src;
  std::size_t bytes;
};

std::vector<Round> pack(const std::vector<Packed>& items, std::size_t round_bytes) {
  std::vector<Round> rounds;
  for (const Packed& item : items) {
    std::size_t done = 0;
    while (done < item.bytes) {
      if (rounds.empty() || rounds.back().bytes == round_bytes) {
        rounds.emplace_back();
      }
      Round& round = rounds.back();
      const std::size_t n = std::min(item.bytes - done, round_bytes - round.bytes);
      round.segments.push_back({static_cast<std::byte*>(item.dst) + done,
                                static_cast<const std::byte*>(item.src) + done, round.bytes, n});
      round.bytes += n;
      done += n;
    }
  }
  return rounds;
}

// A round failed after parts of it were queued: wait for them before the slot goes back.
Status abandon_round(EngineCore& core, device::Queue& queue, int slot, Error error) {
  (void)queue.synchronize();
  core.pool->release(slot);
  return tl::unexpected(std::move(error));
}

// The device-side twin of a staging slot; on failure the slot goes back to the pool.
Result<std::byte*> device_slot_of(EngineCore& core, const StagingPool::Slot& slot) {
  auto device_slot = core.device_slot(slot.index);
  if (!device_slot) {
    core.pool->release(slot.index);
  }
  return device_slot;
}

// Pack on the host (the caller), one DMA into the device slot, scatter on the device.
Status round_to_device(EngineCore& core, const Round& round, QueueSet& used) {
  device::Queue& queue = core.next_queue();
  used.use(queue);
  const StagingPool::Slot slot = core.pool->acquire();
  ACCO_ASSIGN_OR_RETURN(std::byte* const device_slot, device_slot_of(core, slot));
  for (const Segment& segment : round.segments) {
    std::memcpy(slot.data + segment.offset, segment.src, segment.bytes);
  }
  if (Status status = queue.copy(device_slot, slot.data, round.bytes); !status) {
    return abandon_round(core, queue, slot.index, std::move(status.error()));
  }
  for (const Segment& segment : round.segments) {
    if (Status status = queue.copy(segment.dst, device_slot + segment.offset, segment.bytes);
        !status) {
      return abandon_round(core, queue, slot.index, std::move(status.error()));
    }
  }
  return core.release_after(queue, slot.index);
}

// Gather on the device, one DMA into the staging slot, scatter on the host by the queue itself
// (a host task), so the caller does not wait.
Status round_to_host(EngineCore& core, const Round& round, QueueSet& used) {
  device::Queue& queue = core.next_queue();
  used.use(queue);
  const StagingPool::Slot slot = core.pool->acquire();
  ACCO_ASSIGN_OR_RETURN(std::byte* const device_slot, device_slot_of(core, slot));
  for (const Segment& segment : round.segments) {
    if (Status status = queue.copy(device_slot + segment.offset, segment.src, segment.bytes);
        !status) {
      return abandon_round(core, queue, slot.index, std::move(status.error()));
    }
  }
  if (Status status = queue.copy(slot.data, device_slot, round.bytes); !status) {
    return abandon_round(core, queue, slot.index, std::move(status.error()));
  }
  // std::function must be copyable, hence the shared segment list.
  auto segments = std::make_shared<const std::vector<Segment>>(round.segments);
  StagingPool* pool = core.pool.get();
  Status queued = queue.host_task([segments, pool, slot] {
    for (const Segment& segment : *segments) {
      std::memcpy(segment.dst, slot.data + segment.offset, segment.bytes);
    }
    pool->release(slot.index);
  });
  if (!queued) {
    return abandon_round(core, queue, slot.index, std::move(queued.error()));
  }
  return {};
}

}  // namespace

Status Batch::add(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) {
    return {};
  }
  if (dst == nullptr || src == nullptr) {
    return fail(Errc::kInvalidArgument,
                fmt::format("batch item {} ({} bytes): null {}", items_.size(), bytes,
                            dst == nullptr ? "destination" : "source"));
  }
  if (detail::ranges_overlap(dst, src, bytes)) {
    return fail(Errc::kInvalidArgument,
                fmt::format("batch item {} ({} bytes): source {} and destination {} overlap",
                            items_.size(), bytes, src, dst));
  }
  items_.push_back({dst, src, bytes});
  bytes_ += bytes;
  return {};
}

Result<Transfer> Batch::submit() {
  const std::vector<Item> items = std::move(items_);
  items_.clear();
  const std::size_t total = std::exchange(bytes_, 0);
  EngineCore& core = *engine_->core_;

  CopyRecord record;
  record.strategy = Strategy::kBatched;
  record.bytes = total;
  record.items = items.size();
  if (items.empty()) {
    record.strategy = Strategy::kNone;
    return Transfer(record, {});
  }
  record.dst_kind = core.device.kind_of(items.front().dst);
  record.src_kind = core.device.kind_of(items.front().src);
  record.direction = direction_of(record.dst_kind, record.src_kind);

  const device::TraceRange range = device::TraceRange::lazy([&] {
    return fmt::format("acco batch {} items {}", items.size(), units::format_bytes(total));
  });
  std::vector<Packed> to_device;
  std::vector<Packed> to_host;
  detail::Events events;
  QueueSet used;
  // Nothing of the batch may stay queued once submit has failed: the caller may free its memory.
  const auto give_up = [&](Error error, const std::string& where) -> Result<Transfer> {
    (void)used.drain();
    for (const auto& event : events) {
      (void)event->wait();
    }
    return tl::unexpected(std::move(error).with_context(where));
  };
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Item& item = items[i];
    const Direction direction =
        direction_of(core.device.kind_of(item.dst), core.device.kind_of(item.src));
    const bool packable =
        item.bytes < core.profile.batch_below_bytes &&
        (direction == Direction::kHostToDevice || direction == Direction::kDeviceToHost);
    if (packable) {
      (direction == Direction::kHostToDevice ? to_device : to_host)
          .push_back({item.dst, item.src, item.bytes});
      continue;
    }
    auto transfer = engine_->copy(item.dst, item.src, item.bytes);
    if (!transfer) {
      return give_up(std::move(transfer.error()), fmt::format("batch item {}", i));
    }
    events.insert(events.end(), transfer->events_.begin(), transfer->events_.end());
  }

  const std::size_t round_bytes = core.pool->info().slot_bytes;
  std::size_t rounds = 0;
  for (const Round& round : pack(to_device, round_bytes)) {
    if (Status status = round_to_device(core, round, used); !status) {
      return give_up(std::move(status.error()), fmt::format("batch round {}", rounds));
    }
    ++rounds;
  }
  for (const Round& round : pack(to_host, round_bytes)) {
    if (Status status = round_to_host(core, round, used); !status) {
      return give_up(std::move(status.error()), fmt::format("batch round {}", rounds));
    }
    ++rounds;
  }
  record.chunk_bytes = rounds > 0 ? round_bytes : 0;
  record.chunks = rounds;
  record.queues = used.size();
  record.slots = static_cast<int>(std::min<std::size_t>(rounds, core.pool->info().slots));
  record.host_threads = 1;
  auto queued = used.record();
  if (!queued) {
    return give_up(std::move(queued.error()), "batch");
  }
  events.insert(events.end(), queued->begin(), queued->end());
  // Items copied one by one above were counted by Engine::copy; the packed ones count now.
  for (const auto& [packed, direction] : {std::pair{&to_device, Direction::kHostToDevice},
                                          std::pair{&to_host, Direction::kDeviceToHost}}) {
    std::size_t bytes = 0;
    for (const Packed& item : *packed) {
      bytes += item.bytes;
    }
    if (!packed->empty()) {
      core.counters.add(direction, bytes, packed->size());
    }
  }
  core.counters.add_batch();
  return Transfer(record, std::move(events));
}

}  // namespace acco::transfer
