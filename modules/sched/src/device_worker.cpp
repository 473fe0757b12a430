// Each device's thread: take the next task (own queue, the shared queue under eager, or a steal
// that pays under ws), make its inputs valid there (waiting for prefetches, copying from the
// host or another device through the transfer engine, evicting to stay within the budget),
// start the next tasks' prefetches, run the implementation without the lock, then publish what
// it wrote and release its dependants.
#include <algorithm>
#include <array>
#include <span>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "median.hpp"
#include "runtime_core.hpp"

namespace acco::sched::detail {

namespace {

std::chrono::nanoseconds scaled(std::chrono::nanoseconds t, double factor) {
  return std::chrono::nanoseconds(
      static_cast<std::int64_t>(static_cast<double>(t.count()) * factor));
}

// EWMA of the runtime's own costs. A thread that lost its CPU for a whole time slice gives one
// sample hundreds of times the usual; it may raise the estimate only tenfold at a time, so a
// lasting change is still followed within a few samples.
double smoothed(double estimate, double sample, double weight) {
  return (1 - weight) * estimate + weight * std::min(sample, 10 * estimate + 1e-6);
}

}  // namespace

void spin_lock(std::unique_lock<std::mutex>& lock) {
  constexpr int kSpins = 200;
  for (int i = 0; i < kSpins; ++i) {
    if (lock.try_lock()) {
      return;
    }
    if (i % 32 == 31) {
      std::this_thread::yield();  // the holder may be waiting for this CPU
    }
  }
  lock.lock();
}

namespace {

// The first of several errors of one task's work is the one reported.
void keep_first(std::mutex& mu, std::string& slot, const char* what) {
  const std::lock_guard<std::mutex> guard(mu);
  if (slot.empty()) {
    slot = *what != '\0' ? what : "an exception without a message";
  }
}

}  // namespace

Status TaskQueue::copy(void* dst, const void* src, std::size_t bytes) {
  return inner->copy(dst, src, bytes);
}

Status TaskQueue::host_task(std::function<void()> task) {
  if (!task) {
    return inner->host_task(std::move(task));  // the queue's own error for an empty function
  }
  return inner->host_task([task = std::move(task), errors = errors] {
    try {
      task();
    } catch (const DeviceFailure& e) {
      keep_first(errors->mu, errors->device_error, e.what());
    } catch (const std::exception& e) {
      keep_first(errors->mu, errors->error, e.what());
    } catch (...) {
      keep_first(errors->mu, errors->error, "an exception that is not a std::exception");
    }
  });
}

Status AsyncLaunch::ensure() {
  if (queue) {
    return {};
  }
  auto made = device->create_queue();
  if (!made) {
    return tl::unexpected(std::move(made.error()));
  }
  const auto before = std::chrono::steady_clock::now();
  auto event = (*made)->record();
  if (!event) {
    return tl::unexpected(std::move(event.error()));
  }
  if (Status done = (*event)->wait(); !done) {
    return done;
  }
  const auto after = std::chrono::steady_clock::now();
  reference_at = std::chrono::duration_cast<std::chrono::nanoseconds>(before - origin) +
                 std::chrono::duration_cast<std::chrono::nanoseconds>(after - before) / 2;
  reference = std::move(*event);
  queue = std::move(*made);
  facade.inner = queue.get();
  return {};
}

}  // namespace acco::sched::detail

namespace acco::sched {

dev::Queue& TaskContext::queue() {
  if (async_ == nullptr) {
    throw DeviceFailure("TaskContext::queue: this context belongs to no running task");
  }
  detail::AsyncLaunch& a = *async_;
  if (!a.start) {
    if (Status made = a.ensure(); !made) {
      throw DeviceFailure(fmt::format("{}: cannot make a queue for the task: {}", dev_->info().name,
                                      made.error().message));
    }
    auto start = a.queue->record();
    if (!start) {
      throw DeviceFailure(fmt::format("{}: {}", dev_->info().name, start.error().message));
    }
    a.facade.errors = std::make_shared<detail::AsyncErrors>();
    a.start = std::move(*start);
  }
  return a.facade;
}

}  // namespace acco::sched

namespace acco::sched::detail {

void RuntimeCore::worker(int device) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  Lock lock = acquire();
  TaskId id = 0;
  std::vector<TaskId> batch;
  for (;;) {
    if (!d.launched.empty()) {
      // Asynchronous tasks in flight: launch the next behind them while there is room, else
      // complete the oldest. Not at once: shortly before the running work is expected to end
      // (launch_wait), so that a task of higher priority pushed meanwhile goes first.
      if (d.launched.size() < kPipelineDepth && front_launchable(device) &&
          !releases_higher_priority(device)) {
        if (const double wait = launch_wait(device); wait > 0) {
          lock.unlock();
          std::this_thread::sleep_for(std::chrono::duration<double>(wait));
          spin_lock(lock);
          continue;  // the queue may have changed
        }
        take_front(device, id);
        run_task(device, id, lock);
      } else {
        complete_launched(device, lock);
      }
      continue;
    }
    if (!next_task(device, id, lock)) {
      break;
    }
    // Short tasks whose data is already here run several per lock hand-off.
    if (take_batch(device, id, batch)) {
      run_batch(device, batch, lock);
    } else {
      run_task(device, id, lock);
    }
  }
  drain_inflight(device, lock);
  std::unique_ptr<xfer::Engine> engine;
  {
    const std::lock_guard<std::mutex> guard(d.engine_mu);
    engine = std::move(d.engine);
  }
  std::unique_ptr<dev::Queue> compute = std::move(d.async.queue);
  d.async.reference.reset();
  lock.unlock();
  compute.reset();  // idle: every launched task has completed
  engine.reset();   // waits for its queues
}

bool RuntimeCore::front_launchable(int device) const {
  const DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  const auto dev_index = static_cast<std::size_t>(device);
  if (d.failed || d.queue.empty()) {
    return false;
  }
  const TaskState& t = state(d.queue.front());
  if (t.info->launches[dev_index] != CodeletInfo::kAsync) {
    return false;
  }
  std::uint64_t missing = 0;
  for (const auto& [h, mode] : t.accesses) {
    if (!handles_[h].replicas[dev_index].buffer) {
      missing += handles_[h].bytes;
    }
  }
  return d.used + missing <= d.budget;
}

bool RuntimeCore::releases_higher_priority(int device) const {
  const DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  const int front = state(d.queue.front()).priority;
  const auto& dependents = state(d.launched.back().id).dependents;
  return std::any_of(dependents.begin(), dependents.end(), [&](const TaskState::Dependent& dep) {
    const TaskState& t = state(dep.task);
    if (t.priority <= front) {
      return false;
    }
    // Its last dependency, counting every edge from it (two data it writes, or data and an
    // explicit dependency, are two edges).
    const auto edges =
        std::count_if(dependents.begin(), dependents.end(),
                      [&](const TaskState::Dependent& e) { return e.task == dep.task; });
    return t.pending == static_cast<std::size_t>(edges);
  });
}

double RuntimeCore::launch_wait(int device) const {
  const DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  const Launched& running = d.launched.back();  // the work the front task would follow
  if (running.outcome.end->ready()) {
    return 0;  // ended: launch now, complete it after
  }
  // The launch itself (taking the task, its inputs' copies, the implementation's submission)
  // and this thread's wake-up from the sleep must both fit before the running work ends.
  const TaskState& next = state(d.queue.front());
  const double lead = kLaunchLead + transfer_estimate(device, next);
  const double wait = d.running_end_s - lead - now_s();
  // In slices, so that a task that ends early is noticed soon.
  return wait > 0 ? std::min(wait, kLaunchWaitSlice) : 0;
}

void RuntimeCore::take_front(int device, TaskId& out) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  out = d.queue.front();
  d.queue.pop_front();
  unqueued(d, state(out));
}

void RuntimeCore::settle(DeviceState& d, Outcome& out) const {
  Status done = out.end->wait();
  if (!done && out.device_error.empty()) {
    out.device_error = done.error().message;
  }
  // The run time from the task's own two events (exact); its start through the reference (a
  // GPU's elapsed times are single-precision milliseconds, coarser the longer the run).
  auto from = out.start->since(*d.async.reference);
  auto run = out.end->since(*out.start);
  if (done && from && run) {
    out.started = d.async.reference_at + *from;
    out.finished = out.started + *run;
  } else {
    out.finished = now();
  }
  {
    const std::lock_guard<std::mutex> guard(out.errors->mu);
    if (out.device_error.empty()) {
      out.device_error = out.errors->device_error;
    }
    if (out.error.empty()) {
      out.error = out.errors->error;
    }
  }
  out.start.reset();
  out.end.reset();
  out.errors.reset();
}

void RuntimeCore::complete_launched(int device, Lock& lock) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  Launched l = std::move(d.launched.front());
  d.launched.pop_front();
  lock.unlock();
  settle(d, l.outcome);
  spin_lock(lock);
  if (d.failed && l.outcome.device_error.empty()) {
    // An earlier task's failure retired the device: what this one wrote there is not kept.
    l.outcome.device_error = "its device failed while it ran";
  }
  const TaskState& t = state(l.id);
  if (d.previous_end.count() >= 0) {
    note_overhead(d, l.outcome.started - d.previous_end - t.transfer_time, 1);
  }
  if (d.launched.empty()) {
    d.running_end_s = 0;
  }
  const std::chrono::nanoseconds finished = l.outcome.finished;
  const bool ran = complete(device, l.id, std::move(l.outcome), l.weight, lock);
  pins_released_.notify_all();
  prefetch_pushed(lock);
  d.previous_end =
      ran && (!d.queue.empty() || !d.launched.empty()) ? finished : std::chrono::nanoseconds(-1);
}

bool RuntimeCore::next_task(int device, TaskId& out, Lock& lock) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  // Taking a task after being idle: how long the push waited for this thread.
  const auto took = [&] {
    if (!d.active) {
      d.active = true;
      if (d.idle_push.count() >= 0) {
        const double latency = std::chrono::duration<double>(now() - d.idle_push).count();
        double& estimate = d.idle_push_woke ? d.wake_latency_s : d.poll_latency_s;
        // Capped: an estimate inflated by a thread that lost its CPU for whole time slices would
        // keep the device idle, and an idle device is measured again only when it gets work.
        constexpr double kMaxStartLatency = 200e-6;
        estimate = std::min(smoothed(estimate, latency, 0.1), kMaxStartLatency);
        d.idle_push = std::chrono::nanoseconds(-1);
      }
    }
    return true;
  };
  for (;;) {
    if (!d.failed && !d.queue.empty()) {
      out = d.queue.front();
      d.queue.pop_front();
      unqueued(d, state(out));
      return took();
    }
    if (!d.failed && !d.drained && policy_->shared_queue()) {
      auto it = std::find_if(shared_queue_.begin(), shared_queue_.end(),
                             [&](TaskId id) { return eligible(device, state(id)); });
      if (it != shared_queue_.end()) {
        out = *it;
        shared_queue_.erase(it);
        state(out).device = device;
        return took();
      }
    }
    if (!d.failed && !d.drained && policy_->steals() && try_steal(device, out)) {
      return took();
    }
    if (stop_) {
      return false;
    }
    d.active = false;
    d.previous_end = std::chrono::nanoseconds(-1);
    if (poll_for_work(device, lock)) {
      continue;
    }
    d.sleeping = true;
    d.cv.wait(lock);
    d.sleeping = false;
  }
}

bool RuntimeCore::poll_for_work(int device, Lock& lock) {
  // 50 us: longer than a futex wake-up and a context switch (10-50 us on a busy VM), short
  // enough that idle devices give the CPU back quickly.
  constexpr auto kPoll = std::chrono::microseconds(50);
  const std::atomic<std::uint64_t>& mine = devices_[static_cast<std::size_t>(device)]->epoch;
  const std::uint64_t global = work_epoch_.load(std::memory_order_acquire);
  const std::uint64_t own = mine.load(std::memory_order_acquire);
  const auto unchanged = [&] {
    return work_epoch_.load(std::memory_order_acquire) == global &&
           mine.load(std::memory_order_acquire) == own;
  };
  lock.unlock();
  const auto until = std::chrono::steady_clock::now() + kPoll;
  for (int i = 0; unchanged(); ++i) {
    std::this_thread::yield();
    if (i % 8 == 7 && std::chrono::steady_clock::now() >= until) {
      break;
    }
  }
  spin_lock(lock);
  // Every bump happens under the lock, so this check cannot miss one made after the last poll.
  return !unchanged();
}

bool RuntimeCore::try_steal(int device, TaskId& out) {
  const double now = now_s();
  std::vector<std::size_t> victims;
  for (std::size_t v = 0; v < devices_.size(); ++v) {
    if (static_cast<int>(v) != device && !devices_[v]->queue.empty()) {
      victims.push_back(v);
    }
  }
  // The most loaded first: that is where a steal saves the most.
  std::sort(victims.begin(), victims.end(), [&](std::size_t a, std::size_t b) {
    return devices_[a]->running_end_s + devices_[a]->queued_s >
           devices_[b]->running_end_s + devices_[b]->queued_s;
  });
  constexpr int kCandidatesPerVictim = 4;
  for (std::size_t v : victims) {
    DeviceState& victim = *devices_[v];
    int looked = 0;
    for (auto it = victim.queue.rbegin();
         it != victim.queue.rend() && looked < kCandidatesPerVictim; ++it, ++looked) {
      TaskState& t = state(*it);
      if (t.prefetched_on >= 0 || t.planned >= 0 || !eligible(device, t)) {
        continue;
      }
      const DeviceView victim_view = view_of(static_cast<int>(v), t, now);
      const DeviceView thief_view = view_of(device, t, now);
      if (!steal_pays(victim_view, thief_view, now)) {
        continue;
      }
      out = *it;
      victim.queue.erase(std::next(it).base());
      unqueued(victim, t);
      t.stolen = true;
      t.device = device;
      if (thief_view.predicted) {
        t.predicted_s = *thief_view.predicted / thief_view.weight;
      }
      if (options_.keep_task_records) {
        t.reason += fmt::format("; stolen by dev{} from dev{} (dev{} free at +{:.3g}ms)", device, v,
                                v, (victim_view.available_at - now) * 1e3);
      }
      return true;
    }
  }
  return false;
}

Result<xfer::Transfer> RuntimeCore::issue(DeviceState& d, const InflightCopy& copy) {
  const std::lock_guard<std::mutex> guard(d.engine_mu);
  if (!d.engine) {
    return fail(Errc::kUnavailable, fmt::format("{}: its device thread has stopped", d.name));
  }
  return d.engine->copy(copy.dst, copy.src, copy.bytes);
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
      if (ds.prefetch_wanted && !ds.failed) {
        prefetch(static_cast<int>(d), lock);
        again = true;
      }
    }
  }
}

void RuntimeCore::unqueued(DeviceState& d, const TaskState& t) {
  // Rounding never leaves an empty queue with a residue, nor a negative load.
  d.queued_s = d.queue.empty() ? 0 : std::max(0.0, d.queued_s - t.queued_cost_s);
}

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

void RuntimeCore::note_transfer(NodeId from, NodeId to, const InflightCopy& copy, bool prefetch,
                                bool eviction) {
  const std::chrono::nanoseconds end = now();
  LinkRecord& link = links_[{from, to}];
  link.from = from;
  link.to = to;
  link.bytes += copy.bytes;
  ++link.transfers;
  if (options_.keep_task_records) {
    transfers_.push_back({copy.handle, from, to, copy.bytes, copy.start, end, prefetch, eviction});
  }
}

Status RuntimeCore::make_room(int device, std::uint64_t bytes, Lock& lock) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  const auto dev_index = static_cast<std::size_t>(device);
  while (d.used + bytes > d.budget) {
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
      if (!d.inflight.empty()) {
        drain_inflight(device, lock);
      } else if (!d.launched.empty()) {
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
    drop_buffer(d, std::move(r.buffer));
    r = Replica{};
  }
  return {};
}

Result<std::unique_ptr<dev::Buffer>> RuntimeCore::take_buffer(DeviceState& d, std::size_t bytes) {
  if (auto it = d.spare.find(bytes); it != d.spare.end()) {
    std::unique_ptr<dev::Buffer> buffer = std::move(it->second);
    d.spare.erase(it);
    d.spare_bytes -= bytes;
    d.used += bytes;
    ++d.buffers_reused;
    return buffer;
  }
  // Cached buffers of other sizes give way to a new one, largest first.
  while (!d.spare.empty() && d.used + d.spare_bytes + bytes > d.budget) {
    auto largest = std::prev(d.spare.end());
    d.spare_bytes -= largest->first;
    d.spare.erase(largest);
  }
  auto buffer = d.spec.device->allocate(bytes);
  if (buffer) {
    d.used += bytes;
    ++d.buffers_allocated;
  }
  return buffer;
}

void RuntimeCore::drop_buffer(DeviceState& d, std::unique_ptr<dev::Buffer> buffer) {
  if (!buffer) {
    return;
  }
  const std::size_t bytes = buffer->size();
  d.used -= bytes;
  if (d.spare_bytes + bytes <= options_.buffer_cache_bytes) {
    d.spare.emplace(bytes, std::move(buffer));
    d.spare_bytes += bytes;
  }
}

Status RuntimeCore::allocate_replica(int device, std::size_t handle, Lock& lock) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  const std::size_t bytes = handles_[handle].bytes;
  ACCO_RETURN_IF_ERROR(make_room(device, bytes, lock), fmt::format("dev{}", device));
  if (handles_[handle].replicas[static_cast<std::size_t>(device)].buffer) {
    return {};  // a prefetch allocated it while make_room had released the lock
  }
  auto buffer = take_buffer(d, bytes);
  if (!buffer) {
    return tl::unexpected(
        std::move(buffer.error())
            .with_context(fmt::format("dev{}: allocating data {}", device, handle)));
  }
  handles_[handle].replicas[static_cast<std::size_t>(device)].buffer = std::move(*buffer);
  return {};
}

Status RuntimeCore::wait_inflight(int device, std::size_t handle, Lock& lock) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  const auto find = [&] {
    return std::find_if(d.inflight.begin(), d.inflight.end(),
                        [&](const InflightCopy& c) { return c.handle == handle; });
  };
  auto it = find();
  while (it == d.inflight.end()) {
    // Another thread marked it and is issuing it without the lock: it lists the copy (or clears
    // `fetching` if the copy could not be issued) and then notifies.
    if (!handles_[handle].replicas[static_cast<std::size_t>(device)].fetching) {
      return {};  // nothing in flight: the caller copies if the replica is not valid
    }
    pins_released_.wait(lock);
    it = find();
  }
  InflightCopy copy = std::move(*it);
  d.inflight.erase(it);
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
  while (!d.inflight.empty()) {
    // A failed prefetch only means the task fetches again when it runs.
    (void)wait_inflight(device, d.inflight.front().handle, lock);
  }
}

Status RuntimeCore::acquire_data(int device, TaskId id, Lock& lock,
                                 std::chrono::nanoseconds& moved_at) {
  TaskState& t = state(id);
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  const auto dev_index = static_cast<std::size_t>(device);
  // Pin every replica the task uses. Waiting for a prefetch and making room release the lock, and
  // meanwhile another thread may start a prefetch into a replica not pinned yet (prefetches
  // skip pinned ones) or allocate its buffer: so each replica is re-examined until it can be
  // pinned as it is.
  const auto mark_moved = [&] {
    if (moved_at.count() < 0) {
      moved_at = now();
    }
  };
  for (const auto& [h, mode] : t.accesses) {
    if (reads(mode) && !handles_[h].lost.empty()) {
      return fail(Errc::kNotFound, fmt::format("data {}: {}", h, handles_[h].lost));
    }
    for (;;) {
      const Replica& r = handles_[h].replicas[dev_index];
      if (r.fetching) {
        // A failed prefetch is retried below as an ordinary copy.
        mark_moved();
        (void)wait_inflight(device, h, lock);
      } else if (!r.buffer) {
        mark_moved();
        ACCO_RETURN_IF_ERROR(allocate_replica(device, h, lock), "");
      } else {
        break;
      }
    }
    ++handles_[h].replicas[dev_index].pins;
  }
  std::vector<InflightCopy> copies;
  for (const auto& [h, mode] : t.accesses) {
    HandleState& hs = handles_[h];
    if (!reads(mode) || hs.replicas[dev_index].valid) {
      continue;
    }
    const int source = pick_source(h, device, true);
    if (source == -2) {
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
  mark_moved();
  lock.unlock();
  Status status;
  for (InflightCopy& c : copies) {
    auto transfer = issue(d, c);
    if (!transfer) {
      status = tl::unexpected(transfer.error());
      break;
    }
    c.transfer = std::move(*transfer);
    c.issued = true;
  }
  for (InflightCopy& c : copies) {
    if (c.issued) {
      auto done = c.transfer.wait();
      if (!done && status) {
        status = tl::unexpected(done.error());
      }
    }
  }
  const std::chrono::nanoseconds copied = now();
  spin_lock(lock);
  if (status) {
    // Prefetches queue behind each other, so only demand copies say what a copy costs; these
    // were issued together, so they make one sample.
    std::uint64_t bytes = 0;
    for (const InflightCopy& c : copies) {
      bytes += c.bytes;
    }
    note_copies(d, copies.size(), bytes, copied - copies.front().start);
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
  d.prefetch_wanted = false;  // this pass covers every push so far, whoever makes it
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
        if (d.used + hs.bytes > d.budget) {
          continue;
        }
        auto buffer = take_buffer(d, hs.bytes);
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
  for (InflightCopy& c : copies) {
    auto transfer = issue(d, c);
    if (transfer) {
      c.transfer = std::move(*transfer);
      c.issued = true;
    }
  }
  spin_lock(lock);
  for (InflightCopy& c : copies) {
    if (c.issued) {
      d.inflight.push_back(std::move(c));
      continue;
    }
    HandleState& hs = handles_[c.handle];
    if (c.source >= 0) {
      --hs.replicas[static_cast<std::size_t>(c.source)].pins;
    }
    --hs.replicas[dev_index].pins;
    hs.replicas[dev_index].fetching = false;
  }
  pins_released_.notify_all();
}

void RuntimeCore::fail_device(int device, const std::string& why, Lock& lock) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  d.failed = true;
  drain_inflight(device, lock);
  for (std::size_t h = 0; h < handles_.size(); ++h) {
    HandleState& hs = handles_[h];
    Replica& r = hs.replicas[static_cast<std::size_t>(device)];
    // Buffers stay allocated (other devices may be reading them); they are never valid again.
    const bool was_valid = r.valid;
    r.valid = false;
    if (was_valid && hs.registered && hs.lost.empty() && pick_source(h, device, true) == -2) {
      hs.lost = fmt::format("its only valid copy was on dev{}, which failed: {}", device, why);
    }
  }
  requeue_from(device);
}

void RuntimeCore::fill_context(int device, const TaskState& t, TaskContext& context) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  context.device_ = device;
  context.async_ = &d.async;
  context.kind_ = &d.kind;
  context.dev_ = d.spec.device;
  context.buffers_.clear();
  for (std::size_t h : t.access_handles) {
    const Replica& r = handles_[h].replicas[static_cast<std::size_t>(device)];
    context.buffers_.emplace_back(r.buffer->data(), handles_[h].bytes);
  }
}

Outcome RuntimeCore::execute(const TaskState& t, int device, TaskContext& context) {
  const int impl = t.info->impl[static_cast<std::size_t>(device)];
  const Implementation& run = t.codelet->implementations[static_cast<std::size_t>(impl)].second;
  Outcome out;
  out.started = now();
  try {
    run(context);
  } catch (const DeviceFailure& e) {
    out.device_error = e.what();
  } catch (const std::exception& e) {
    out.error = e.what();
    if (out.error.empty()) {
      out.error = "an exception without a message";
    }
  } catch (...) {
    out.error = "an exception that is not a std::exception";
  }
  out.finished = now();
  context.async_ = nullptr;  // queue() after the implementation has returned is an error
  AsyncLaunch& a = devices_[static_cast<std::size_t>(device)]->async;
  if (a.start) {
    // Work was submitted to the device's queue: the task ends when it does.
    out.start = std::move(a.start);
    out.errors = a.facade.errors;
    auto end = a.queue->record();
    if (end) {
      out.end = std::move(*end);
    } else {
      (void)a.queue->synchronize();  // nothing may still use the task's buffers
      out.start.reset();
      out.device_error = end.error().message;
    }
  }
  return out;
}

void RuntimeCore::unpin(int device, const TaskState& t) {
  const auto dev_index = static_cast<std::size_t>(device);
  for (const auto& [h, mode] : t.accesses) {
    Replica& r = handles_[h].replicas[dev_index];
    if (r.pins > 0 && r.buffer) {
      --r.pins;
      r.last_use = ++use_tick_;
    }
  }
}

bool RuntimeCore::complete(int device, TaskId id, Outcome outcome, double weight, Lock& lock) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  const auto dev_index = static_cast<std::size_t>(device);
  TaskState& t = state(id);
  t.started = outcome.started;
  unpin(device, t);
  if (!outcome.device_error.empty()) {
    fail_device(device, outcome.device_error, lock);
    t.phase = TaskPhase::kQueued;
    place(id, -1);
    return false;
  }
  d.busy += outcome.finished - outcome.started;
  ++d.tasks_run;
  if (!outcome.error.empty()) {
    finish(id, fmt::format("threw on dev{}: {}", device, outcome.error), device);
    return true;
  }
  for (const auto& [h, mode] : t.accesses) {
    if (!writes(mode)) {
      continue;
    }
    HandleState& hs = handles_[h];
    for (std::size_t r = 0; r < hs.replicas.size(); ++r) {
      hs.replicas[r].valid = r == dev_index;
    }
    hs.host_valid = false;
    hs.lost.clear();
    ++hs.version;
  }
  // Normalised to full weight, so a slowed device's model stays the device's own.
  learn(device, t, scaled(outcome.finished - outcome.started, weight));
  finish(id, "", device, outcome.finished);
  return true;
}

void RuntimeCore::note_overhead(DeviceState& d, std::chrono::nanoseconds gap, std::size_t tasks) {
  const double per_task = std::chrono::duration<double>(gap).count() /
                          static_cast<double>(std::max<std::size_t>(tasks, 1));
  // A low quantile rather than the mean: gaps where the thread lost its CPU to another device's
  // thread say how crowded the CPUs are, not what one more task on this device costs; falls
  // quickly, rises slowly.
  const double sample = std::max(0.0, per_task);
  d.overhead_s = smoothed(d.overhead_s, sample, sample < d.overhead_s ? 0.2 : 0.02);
}

void RuntimeCore::note_copies(DeviceState& d, std::size_t copies, std::uint64_t bytes,
                              std::chrono::nanoseconds took) {
  if (copies == 0) {
    return;
  }
  const double n = static_cast<double>(copies);
  const double modelled = n * d.latency_s + static_cast<double>(bytes) * d.seconds_per_byte;
  const double sample = std::max(0.0, std::chrono::duration<double>(took).count() - modelled) / n;
  // The median of the last samples, once there are three (before, the link's figures alone): a
  // copy that waited behind others or for a CPU is one sample among several, and no single slow
  // one (the first ones pay for the engine's warm-up) can keep the device from the tasks whose
  // copies would correct it.
  d.copy_samples[d.copies_noted % d.copy_samples.size()] = sample;
  ++d.copies_noted;
  if (d.copies_noted >= 3) {
    std::array<double, DeviceState::kCopySamples> values = d.copy_samples;
    d.copy_fixed_s =
        d.latency_s +
        median_in_place(std::span(values).first(std::min(d.copies_noted, d.copy_samples.size())));
  }
}

void RuntimeCore::run_task(int device, TaskId id, Lock& lock) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  TaskState& t = state(id);
  t.phase = TaskPhase::kRunning;
  t.device = device;
  t.prefetched_on = -1;
  // Behind launched tasks, it starts when the last of them ends. An estimate: the clock's
  // latest reading will do.
  const double running_end = d.running_end_s;
  d.running_end_s =
      std::max(std::chrono::duration<double>(recent()).count(), running_end) + t.predicted_s;

  std::chrono::nanoseconds moved_at{-1};  // data was copied, waited for or allocated
  Status fetched = acquire_data(device, id, lock, moved_at);
  if (!fetched) {
    unpin(device, t);
    pins_released_.notify_all();
    d.running_end_s = d.launched.empty() ? 0 : running_end;
    if (fetched.error().code == Errc::kNotFound) {
      finish(id, fetched.error().message, device);
    } else {
      // The device could not hold or receive the data: retire it, run the task elsewhere.
      fail_device(device, fetched.error().message, lock);
      t.phase = TaskPhase::kQueued;
      place(id, -1);
    }
    return;
  }
  if (moved_at.count() >= 0) {
    t.transfer_time = now() - moved_at;
  }
  prefetch(device, lock);
  TaskContext& context = d.contexts.front();
  fill_context(device, t, context);
  const double weight = d.weight;
  const std::chrono::nanoseconds previous_end = d.previous_end;

  lock.unlock();
  Outcome outcome = execute(t, device, context);
  spin_lock(lock);

  t.info->launches[static_cast<std::size_t>(device)] =
      outcome.end ? CodeletInfo::kAsync : CodeletInfo::kSync;
  if (outcome.end) {
    d.launched.push_back({id, weight, std::move(outcome)});
    return;  // complete_launched completes it
  }
  if (previous_end.count() >= 0) {
    note_overhead(d, outcome.started - previous_end - t.transfer_time, 1);
  }
  d.running_end_s = d.launched.empty() ? 0 : running_end;
  const std::chrono::nanoseconds finished = outcome.finished;
  const bool ran = complete(device, id, std::move(outcome), weight, lock);
  pins_released_.notify_all();
  prefetch_pushed(lock);
  // The next task, if one is waiting now (perhaps released just above), starts back to back.
  d.previous_end = ran && !d.queue.empty() ? finished : std::chrono::nanoseconds(-1);
}

bool RuntimeCore::batchable(int device, const TaskState& t) const {
  // Short, calibrated, and every datum already usable here: no copy, no allocation, no wait.
  constexpr double kShortTask = 20e-6;
  if (!t.calibrated || t.predicted_s > kShortTask) {
    return false;
  }
  const auto dev_index = static_cast<std::size_t>(device);
  for (const auto& [h, mode] : t.accesses) {
    const HandleState& hs = handles_[h];
    const Replica& r = hs.replicas[dev_index];
    if (!r.buffer || r.fetching || (reads(mode) && (!r.valid || !hs.lost.empty()))) {
      return false;
    }
  }
  return true;
}

bool RuntimeCore::take_batch(int device, TaskId first, std::vector<TaskId>& batch) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  // Bounded so that the first task's dependants wait at most this long for its completion.
  constexpr std::size_t kMaxBatch = 64;
  constexpr double kMaxBatchSeconds = 50e-6;
  batch.clear();
  if (d.queue.empty() || !batchable(device, state(first))) {
    return false;
  }
  batch.push_back(first);
  double total = state(first).predicted_s;
  while (!d.queue.empty() && batch.size() < kMaxBatch) {
    const TaskState& next = state(d.queue.front());
    if (!batchable(device, next) || total + next.predicted_s > kMaxBatchSeconds) {
      break;
    }
    total += next.predicted_s;
    batch.push_back(d.queue.front());
    d.queue.pop_front();
    unqueued(d, next);
  }
  return batch.size() > 1;
}

void RuntimeCore::run_batch(int device, const std::vector<TaskId>& batch, Lock& lock) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  const auto dev_index = static_cast<std::size_t>(device);
  std::vector<TaskContext>& contexts = d.contexts;
  if (contexts.size() < batch.size()) {
    contexts.resize(batch.size());
  }
  std::vector<const TaskState*> states;  // tasks_ is not indexed without the lock
  states.reserve(batch.size());
  double predicted = 0;
  for (TaskId id : batch) {
    TaskState& t = state(id);
    t.phase = TaskPhase::kRunning;
    t.device = device;
    t.prefetched_on = -1;
    for (const auto& [h, mode] : t.accesses) {
      ++handles_[h].replicas[dev_index].pins;
    }
    fill_context(device, t, contexts[states.size()]);
    states.push_back(&t);
    predicted += t.predicted_s;
  }
  d.running_end_s = std::chrono::duration<double>(recent()).count() + predicted;
  prefetch(device, lock);
  const double weight = d.weight;
  const std::chrono::nanoseconds previous_end = d.previous_end;

  lock.unlock();
  std::vector<Outcome> outcomes;
  outcomes.reserve(batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    outcomes.push_back(execute(*states[i], device, contexts[i]));
    if (outcomes.back().end) {
      settle(d, outcomes.back());  // batched tasks run one after another
    }
    if (!outcomes.back().device_error.empty()) {
      break;  // the rest go elsewhere
    }
  }
  spin_lock(lock);

  std::chrono::nanoseconds gaps{0};
  for (std::size_t i = 1; i < outcomes.size(); ++i) {
    gaps += outcomes[i].started - outcomes[i - 1].finished;
  }
  if (previous_end.count() >= 0) {
    note_overhead(d, outcomes.front().started - previous_end + gaps, outcomes.size());
  }
  d.running_end_s = 0;
  const std::chrono::nanoseconds finished = outcomes.back().finished;
  bool ran = true;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const bool completed = complete(device, batch[i], std::move(outcomes[i]), weight, lock);
    d.tasks_batched += completed ? 1 : 0;
    ran = completed && ran;
  }
  for (std::size_t i = outcomes.size(); i < batch.size(); ++i) {
    // Not started: its device failed during an earlier task of the batch.
    TaskState& t = state(batch[i]);
    unpin(device, t);
    t.phase = TaskPhase::kQueued;
    place(batch[i], -1);
  }
  pins_released_.notify_all();
  prefetch_pushed(lock);
  d.previous_end = ran && !d.queue.empty() ? finished : std::chrono::nanoseconds(-1);
}

}  // namespace acco::sched::detail
