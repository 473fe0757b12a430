// Replicas' buffers on a device: allocation through its DeviceMemory, eviction to stay within
// its budget (writing back a sole copy first), and where a copy can come from.
#include <algorithm>
#include <optional>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "runtime_core.hpp"

namespace acco::sched::detail {

int RuntimeCore::pick_source(std::size_t handle, int device, bool allow_host) const {
  const HandleState& h = handles_[handle];
  if (allow_host && h.host_valid) {
    return -1;
  }
  int best = -2;
  int best_pins = 0;
  for (std::size_t s = 0; s < h.replicas.size(); ++s) {
    if (static_cast<int>(s) == device || devices_[s]->failed || !h.replicas[s].valid) {
      continue;
    }
    if (best == -2 || h.replicas[s].pins < best_pins) {
      best = static_cast<int>(s);
      best_pins = h.replicas[s].pins;
    }
  }
  return best;
}

Status RuntimeCore::make_room(int device, std::uint64_t bytes, Lock& lock) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  const auto dev_index = static_cast<std::size_t>(device);
  while (d.memory.used + bytes > d.memory.budget) {
    // Victim: not pinned; not needed by the next queued tasks if possible (a look-ahead in the
    // spirit of Belady); stale before duplicated before sole copies; least recently used.
    std::vector<std::size_t> soon;
    for (std::size_t q = 0; q < d.queue.size() && q < 8; ++q) {
      for (const auto& a : state(d.queue[q]).accesses) {
        soon.push_back(a.first);
      }
    }
    std::optional<std::size_t> victim;
    std::tuple<int, int, std::uint64_t> best{};
    for (std::size_t h = 0; h < handles_.size(); ++h) {
      const Replica& r = handles_[h].replicas[dev_index];
      if (!r.buffer || r.pins > 0 || r.fetching) {
        continue;
      }
      const bool needed = std::find(soon.begin(), soon.end(), h) != soon.end();
      const int category = !r.valid ? 0 : pick_source(h, device, true) != -2 ? 1 : 2;
      if (category == 2 && handles_[h].host_writing) {
        continue;  // wait for the write-back in flight
      }
      const std::tuple<int, int, std::uint64_t> score{needed ? 1 : 0, category, r.last_use};
      if (!victim || score < best) {
        victim = h;
        best = score;
      }
    }
    if (!victim) {
      if (!d.transfers.inflight.empty()) {
        drain_inflight(device, lock);
      } else if (!d.async.launched.empty()) {
        complete_launched(device, lock);  // its pins are this thread's to release
      } else {
        // Only other devices' copies out of this device (or a write_back) hold pins now; they
        // end on their own.
        pins_released_.wait(lock);
      }
      continue;
    }
    HandleState& h = handles_[*victim];
    Replica& r = h.replicas[dev_index];
    if (std::get<1>(best) == 2) {
      // The only valid copy: write it back to host memory first.
      const std::uint64_t version = h.version;
      ++r.pins;
      h.host_writing = true;
      InflightCopy copy{*victim, device, h.host, r.buffer->data(), h.bytes, {}, false, now()};
      lock.unlock();
      Status status;
      auto transfer = issue(d, copy);
      if (transfer) {
        auto done = transfer->wait();
        if (!done) {
          status = tl::unexpected(done.error());
        }
      } else {
        status = tl::unexpected(transfer.error());
      }
      spin_lock(lock);
      --r.pins;
      h.host_writing = false;
      all_done_.notify_all();  // write_back waits for host_writing too
      pins_released_.notify_all();
      if (!status) {
        return tl::unexpected(
            std::move(status.error()).with_context(fmt::format("evicting data {}", *victim)));
      }
      note_transfer(static_cast<NodeId>(device + 1), kHostNode, copy, false, true);
      if (h.version == version) {
        h.host_valid = true;
      }
      continue;  // re-evaluate: it may have been pinned meanwhile
    }
    d.memory.drop(std::move(r.buffer), options_.buffer_cache_bytes);
    r = Replica{};
  }
  return {};
}

Status RuntimeCore::allocate_replica(int device, std::size_t handle, Lock& lock) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  const std::size_t bytes = handles_[handle].bytes;
  ACCO_RETURN_IF_ERROR(make_room(device, bytes, lock), fmt::format("dev{}", device));
  if (handles_[handle].replicas[static_cast<std::size_t>(device)].buffer) {
    return {};  // a prefetch allocated it while make_room had released the lock
  }
  ACCO_ASSIGN_OR_RETURN(handles_[handle].replicas[static_cast<std::size_t>(device)].buffer,
                        d.memory.take(*d.spec.device, bytes),
                        fmt::format("dev{}: allocating data {}", device, handle));
  return {};
}

}  // namespace acco::sched::detail
