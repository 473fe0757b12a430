#include "engine_core.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace acco::transfer::detail {

// ---- QueueSet ----------------------------------------------------------------------------------

void QueueSet::use(device::Queue& queue) {
  if (std::find(used_.begin(), used_.end(), &queue) == used_.end()) {
    used_.push_back(&queue);
  }
}

Result<Events> QueueSet::record() {
  Events events;
  for (device::Queue* queue : used_) {
    ACCO_ASSIGN_OR_RETURN(auto event, queue->record());
    events.push_back(std::move(event));
  }
  return events;
}

Status QueueSet::drain() {
  Status first;
  for (device::Queue* queue : used_) {
    if (Status status = queue->synchronize(); !status && first) {
      first = std::move(status);
    }
  }
  return first;
}

// ---- AtomicCounters ----------------------------------------------------------------------------

EngineCounters AtomicCounters::read() const {
  EngineCounters out;
  for (const Direction d : {Direction::kHostToHost, Direction::kHostToDevice,
                            Direction::kDeviceToHost, Direction::kDeviceToDevice}) {
    const auto i = static_cast<std::size_t>(d);
    out.of(d) = {bytes_[i].load(std::memory_order_relaxed),
                 copies_[i].load(std::memory_order_relaxed)};
  }
  out.batches = batches_.load(std::memory_order_relaxed);
  return out;
}

// ---- EngineCore --------------------------------------------------------------------------------

device::Queue& EngineCore::next_queue() {
  return *queues[next_queue_index++ % queues.size()];
}

Result<std::byte*> EngineCore::device_slot(int index) {
  auto& slot = device_slots[static_cast<std::size_t>(index)];
  if (!slot) {
    ACCO_ASSIGN_OR_RETURN(slot, device.allocate(pool->info().slot_bytes),
                          fmt::format("device staging slot of {} bytes", pool->info().slot_bytes));
  }
  return static_cast<std::byte*>(slot->data());
}

// Not const: it gives a slot back, a change of the engine's state through its pool pointer.
Status EngineCore::release_after(  // NOLINT(readability-make-member-function-const)
    device::Queue& queue, int index) {
  StagingPool* staging = pool.get();
  Status queued = queue.host_task([staging, index] { staging->release(index); });
  if (!queued) {
    (void)queue.synchronize();
    pool->release(index);
  }
  return queued;
}

}  // namespace acco::transfer::detail
