// Data to where a task runs: demand copies of its inputs, prefetches for the tasks queued next,
// and the copies in flight.
#include <vector>

#include <fmt/format.h>

#include "runtime_core.hpp"

namespace acco::sched::detail {

Result<transfer::Transfer> RuntimeCore::issue(DeviceState& d, const InflightCopy& copy) {
  const std::lock_guard<std::mutex> guard(d.transfers.engine_mu);
  if (!d.transfers.engine) {
    return fail(Errc::kUnavailable, fmt::format("{}: its device thread has stopped", d.name));
  }
  return d.transfers.engine->copy(copy.dst, copy.src, copy.bytes);
}

void RuntimeCore::prefetch_pushed(Lock& lock) {
  if (options_.prefetch_depth <= 0) {
    return;
  }
  // Each pass may release the lock; a push made meanwhile sets its flag again.
  for (bool again = true; again && !stop_;) {
    again = false;
    for (std::size_t d = 0; d < devices_.size(); ++d) {
      DeviceState& ds = *devices_[d];
      if (ds.transfers.prefetch_wanted && !ds.failed) {
        prefetch(static_cast<int>(d), lock);
        again = true;
      }
    }
  }
}

Status RuntimeCore::wait_inflight(int device, std::size_t handle, Lock& lock) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  const auto find = [&] {
    return std::find_if(d.transfers.inflight.begin(), d.transfers.inflight.end(),
                        [&](const InflightCopy& c) { return c.handle == handle; });
  };
  auto it = find();
  while (it == d.transfers.inflight.end()) {
    // Another thread marked it and is issuing it without the lock: it lists the copy (or clears
    // `fetching` if the copy could not be issued) and then notifies. Or another thread took the
    // listed copy and waits for it (a worker, or an unregister): it clears `fetching` when done.
    if (!handles_[handle].replicas[static_cast<std::size_t>(device)].fetching) {
      return {};  // nothing in flight: the caller copies if the replica is not valid
    }
    pins_released_.wait(lock);
    it = find();
  }
  InflightCopy copy = std::move(*it);
  d.transfers.inflight.erase(it);
  // A prefetch that has landed is taken without releasing the lock: a hand-off to another thread
  // costs more than the bookkeeping.
  const bool landed = copy.transfer.ready();
  if (!landed) {
    lock.unlock();
  }
  auto done = copy.transfer.wait();
  if (!landed) {
    spin_lock(lock);
  }
  HandleState& h = handles_[handle];
  Replica& r = h.replicas[static_cast<std::size_t>(device)];
  if (copy.source >= 0) {
    --h.replicas[static_cast<std::size_t>(copy.source)].pins;
  }
  r.fetching = false;
  --r.pins;
  pins_released_.notify_all();
  if (!done) {
    note_failed_transfer(copy.source < 0 ? kHostNode : copy.source + 1, device + 1, copy, true,
                         done.error().message);
    return tl::unexpected(
        std::move(done.error())
            .with_context(fmt::format("prefetching data {} to dev{}", handle, device)));
  }
  r.valid = true;
  note_transfer(copy.source < 0 ? kHostNode : copy.source + 1, device + 1, copy, true, false);
  return {};
}

void RuntimeCore::drain_inflight(int device, Lock& lock) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  while (!d.transfers.inflight.empty()) {
    // A failed prefetch only means the task fetches again when it runs.
    (void)wait_inflight(device, d.transfers.inflight.front().handle, lock);
  }
}

Status RuntimeCore::issue_and_wait(DeviceState& d, std::vector<InflightCopy>& copies,
                                   std::vector<std::string>& errors) {
  Status status;
  for (std::size_t i = 0; i < copies.size(); ++i) {
    InflightCopy& c = copies[i];
    auto transfer = issue(d, c);
    if (!transfer) {
      errors[i] = transfer.error().message;
      status = tl::unexpected(transfer.error());
      break;
    }
    c.transfer = std::move(*transfer);
    c.issued = true;
  }
  for (std::size_t i = 0; i < copies.size(); ++i) {
    InflightCopy& c = copies[i];
    if (!c.issued) {
      continue;
    }
    auto done = c.transfer.wait();
    if (!done) {
      errors[i] = done.error().message;
      if (status) {
        status = tl::unexpected(done.error());
      }
    }
  }
  return status;
}

void RuntimeCore::mark_moved(std::chrono::nanoseconds& moved_at) const {
  if (moved_at.count() < 0) {
    moved_at = now();
  }
}

Status RuntimeCore::pin_replicas(int device, const TaskState& t, Lock& lock,
                                 std::chrono::nanoseconds& moved_at, std::size_t& pinned) {
  const auto dev_index = static_cast<std::size_t>(device);
  // Waiting for a prefetch and making room release the lock, and meanwhile another thread may
  // start a prefetch into a replica not pinned yet (prefetches skip pinned ones) or allocate its
  // buffer: so each replica is re-examined until it can be pinned as it is.
  for (const auto& [h, mode] : t.accesses) {
    if (reads(mode) && !handles_[h].lost.empty()) {
      return fail(Errc::kNotFound, fmt::format("data {}: {}", h, handles_[h].lost));
    }
    for (;;) {
      const Replica& r = handles_[h].replicas[dev_index];
      if (r.fetching) {
        // A failed prefetch is retried below as an ordinary copy.
        mark_moved(moved_at);
        (void)wait_inflight(device, h, lock);
      } else if (!r.buffer) {
        mark_moved(moved_at);
        ACCO_RETURN_IF_ERROR(allocate_replica(device, h, lock));
      } else {
        break;
      }
    }
    ++handles_[h].replicas[dev_index].pins;
    ++pinned;
  }
  return {};
}

Status RuntimeCore::acquire_data(int device, TaskId id, Lock& lock,
                                 std::chrono::nanoseconds& moved_at, std::size_t& pinned) {
  TaskState& t = state(id);
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  const auto dev_index = static_cast<std::size_t>(device);
  // Pin every replica the task uses, then copy in what is not valid there.
  ACCO_RETURN_IF_ERROR(pin_replicas(device, t, lock, moved_at, pinned));
  std::vector<InflightCopy> copies;
  for (const auto& [h, mode] : t.accesses) {
    HandleState& hs = handles_[h];
    if (!reads(mode) || hs.replicas[dev_index].valid) {
      continue;
    }
    const int source = pick_source(h, device, true);
    if (source == -2) {
      // The copies listed so far are not made: their sources' pins go with them.
      for (const InflightCopy& c : copies) {
        if (c.source >= 0) {
          --handles_[c.handle].replicas[static_cast<std::size_t>(c.source)].pins;
        }
      }
      pins_released_.notify_all();
      return fail(Errc::kNotFound, fmt::format("data {}: no valid copy left", h));
    }
    const void* src = hs.host;
    if (source >= 0) {
      Replica& from = hs.replicas[static_cast<std::size_t>(source)];
      ++from.pins;
      src = from.buffer->data();
    }
    copies.push_back(
        {h, source, hs.replicas[dev_index].buffer->data(), src, hs.bytes, {}, false, now()});
  }
  if (copies.empty()) {
    return {};
  }
  mark_moved(moved_at);
  lock.unlock();
  std::vector<std::string> errors(copies.size());
  Status status = issue_and_wait(d, copies, errors);
  const std::chrono::nanoseconds copied = now();
  spin_lock(lock);
  for (std::size_t i = 0; i < copies.size(); ++i) {
    if (!errors[i].empty()) {
      const InflightCopy& c = copies[i];
      note_failed_transfer(c.source < 0 ? kHostNode : c.source + 1, device + 1, c, false,
                           errors[i]);
    }
  }
  if (status) {
    // Prefetches queue behind each other, so only demand copies say what a copy costs; these
    // were issued together, so they make one sample.
    std::uint64_t bytes = 0;
    for (const InflightCopy& c : copies) {
      bytes += c.bytes;
    }
    d.copy_cost.note(copies.size(), bytes, copied - copies.front().start);
  }
  for (const InflightCopy& c : copies) {
    HandleState& hs = handles_[c.handle];
    if (c.source >= 0) {
      --hs.replicas[static_cast<std::size_t>(c.source)].pins;
    }
    if (status) {
      hs.replicas[dev_index].valid = true;
      t.transfer_bytes += c.bytes;
      note_transfer(c.source < 0 ? kHostNode : c.source + 1, device + 1, c, false, false);
    }
  }
  pins_released_.notify_all();
  if (!status) {
    return tl::unexpected(
        std::move(status.error()).with_context(fmt::format("moving data to dev{}", device)));
  }
  return {};
}

void RuntimeCore::prefetch(int device, Lock& lock) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  const auto dev_index = static_cast<std::size_t>(device);
  d.transfers.prefetch_wanted = false;  // this pass covers every push so far, whoever makes it
  std::vector<InflightCopy> copies;
  const std::size_t depth = static_cast<std::size_t>(options_.prefetch_depth);
  for (std::size_t q = 0; q < d.queue.size() && q < depth; ++q) {
    TaskState& u = state(d.queue[q]);
    for (const auto& [h, mode] : u.accesses) {
      HandleState& hs = handles_[h];
      Replica& r = hs.replicas[dev_index];
      // A pinned replica that is not valid is being filled by the task that pinned it.
      if (!reads(mode) || !hs.lost.empty() || r.valid || r.fetching || r.pins > 0) {
        continue;
      }
      const int source = pick_source(h, device, true);
      if (source == -2) {
        continue;
      }
      if (!r.buffer) {
        // Prefetching never evicts: it only uses free room.
        if (d.memory.used + hs.bytes > d.memory.budget) {
          continue;
        }
        auto buffer = d.memory.take(*d.spec.device, hs.bytes);
        if (!buffer) {
          continue;
        }
        r.buffer = std::move(*buffer);
      }
      const void* src = hs.host;
      if (source >= 0) {
        Replica& from = hs.replicas[static_cast<std::size_t>(source)];
        ++from.pins;
        src = from.buffer->data();
      }
      r.fetching = true;
      ++r.pins;
      u.prefetched_on = device;
      copies.push_back({h, source, r.buffer->data(), src, hs.bytes, {}, false, now()});
    }
  }
  if (copies.empty()) {
    return;
  }
  lock.unlock();
  std::vector<std::string> errors(copies.size());
  for (std::size_t i = 0; i < copies.size(); ++i) {
    InflightCopy& c = copies[i];
    auto transfer = issue(d, c);
    if (transfer) {
      c.transfer = std::move(*transfer);
      c.issued = true;
    } else {
      errors[i] = transfer.error().message;
    }
  }
  spin_lock(lock);
  for (std::size_t i = 0; i < copies.size(); ++i) {
    InflightCopy& c = copies[i];
    if (c.issued) {
      d.transfers.inflight.push_back(std::move(c));
      continue;
    }
    // A prefetch that could not be issued: the task fetches again when it runs.
    note_failed_transfer(c.source < 0 ? kHostNode : c.source + 1, device + 1, c, true, errors[i]);
    HandleState& hs = handles_[c.handle];
    if (c.source >= 0) {
      --hs.replicas[static_cast<std::size_t>(c.source)].pins;
    }
    --hs.replicas[dev_index].pins;
    hs.replicas[dev_index].fetching = false;
  }
  pins_released_.notify_all();
  if (d.failed) {
    // It failed while these were issued without the lock, after its own drain: nobody waits for
    // a failed device's copies, and their pins would hold the data's buffers for ever (a later
    // unregister waited on them).
    drain_inflight(device, lock);
  }
}

}  // namespace acco::sched::detail
