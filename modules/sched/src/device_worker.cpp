// Each device's thread: take the next task (own queue, the shared queue when the policy has one,
// or a steal that pays when it steals), make its inputs valid there (data_movement.cpp), run the
// implementation without the lock, then publish the outcome (completion.cpp); short tasks whose
// data is already there run in batches.
#include <algorithm>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "acco/device/trace_range.hpp"

#include "runtime_core.hpp"

namespace acco::sched::detail {

namespace {

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

void RuntimeCore::worker(int device) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  Lock lock = acquire();
  TaskId id = 0;
  std::vector<TaskId> batch;
  for (;;) {
    if (!d.async.launched.empty()) {
      // Asynchronous tasks in flight: launch the next behind them while there is room, else
      // complete the oldest. Not at once: shortly before the running work is expected to end
      // (launch_wait), so that a task of higher priority pushed meanwhile goes first.
      if (d.async.launched.size() < kPipelineDepth && front_launchable(device) &&
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
  std::unique_ptr<transfer::Engine> engine;
  {
    const std::lock_guard<std::mutex> guard(d.transfers.engine_mu);
    if (d.transfers.engine) {
      d.transfers.retired += d.transfers.engine->counters();
    }
    engine = std::move(d.transfers.engine);
  }
  std::unique_ptr<device::Queue> compute = std::move(d.async.launch.queue);
  d.async.launch.reference.reset();
  lock.unlock();
  compute.reset();  // idle: every launched task has completed
  engine.reset();   // waits for its queues
}

bool RuntimeCore::next_task(int device, TaskId& out, Lock& lock) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  // Taking a task after being idle: how long the push waited for this thread.
  const auto took = [&] {
    if (!d.worker.active) {
      d.worker.active = true;
      if (d.costs.idle_push.count() >= 0) {
        const double latency = std::chrono::duration<double>(now() - d.costs.idle_push).count();
        double& estimate = d.costs.idle_push_woke ? d.costs.wake_latency_s : d.costs.poll_latency_s;
        // Capped: an estimate inflated by a thread that lost its CPU for whole time slices would
        // keep the device idle, and an idle device is measured again only when it gets work.
        constexpr double kMaxStartLatency = 200e-6;
        estimate = std::min(smoothed(estimate, latency, 0.1), kMaxStartLatency);
        d.costs.idle_push = std::chrono::nanoseconds(-1);
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
    if (!d.failed && !d.drained && d.accepting && policy_->shared_queue()) {
      auto it = std::find_if(shared_queue_.begin(), shared_queue_.end(),
                             [&](TaskId id) { return eligible(device, state(id)); });
      if (it != shared_queue_.end()) {
        out = *it;
        shared_queue_.erase(it);
        state(out).device = device;
        return took();
      }
    }
    if (!d.failed && !d.drained && d.accepting && policy_->steals() && try_steal(device, out)) {
      return took();
    }
    if (stop_) {
      return false;
    }
    d.worker.active = false;
    d.costs.previous_end = std::chrono::nanoseconds(-1);
    if (poll_for_work(device, lock)) {
      continue;
    }
    d.worker.sleeping = true;
    d.worker.cv.wait(lock);
    d.worker.sleeping = false;
  }
}

bool RuntimeCore::poll_for_work(int device, Lock& lock) {
  // 50 us: longer than a futex wake-up and a context switch (10-50 us on a busy VM), short
  // enough that idle devices give the CPU back quickly.
  constexpr auto kPoll = std::chrono::microseconds(50);
  const std::atomic<std::uint64_t>& mine = devices_[static_cast<std::size_t>(device)]->worker.epoch;
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

void RuntimeCore::take_front(int device, TaskId& out) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  out = d.queue.front();
  d.queue.pop_front();
  unqueued(d, state(out));
}

void RuntimeCore::unqueued(DeviceState& d, const TaskState& t) {
  // Rounding never leaves an empty queue with a residue, nor a negative load.
  d.queued_s = d.queue.empty() ? 0 : std::max(0.0, d.queued_s - t.queued_cost_s);
}

void RuntimeCore::run_task(int device, TaskId id, Lock& lock) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  TaskState& t = state(id);
  t.phase = TaskPhase::kRunning;
  t.device = device;
  t.prefetched_on = -1;
  note_started(d);
  // Behind launched tasks, it starts when the last of them ends. An estimate: the clock's
  // latest reading will do.
  const double running_end = d.running_end_s;
  d.running_end_s =
      std::max(std::chrono::duration<double>(recent()).count(), running_end) + t.predicted_s;

  std::chrono::nanoseconds moved_at{-1};  // data was copied, waited for or allocated
  std::size_t pinned = 0;
  Status fetched = acquire_data(device, id, lock, moved_at, pinned);
  if (!fetched) {
    // Only its own pins: a prefetch in flight into a replica it had not reached yet holds one.
    unpin(device, t, pinned);
    pins_released_.notify_all();
    d.running_end_s = d.async.launched.empty() ? 0 : running_end;
    --d.totals.running;
    if (fetched.error().code == Errc::kNotFound) {
      ++d.totals.failed;
      finish(id, fetched.error().message, device);
    } else {
      // The device could not hold or receive the data: retire it, run the task elsewhere.
      fail_device(device, fetched.error().message, lock, true);
      t.phase = TaskPhase::kQueued;
      place(id, -1);
      note_replaced(t, device);
    }
    return;
  }
  if (moved_at.count() >= 0) {
    t.transfer_time = now() - moved_at;
  }
  prefetch(device, lock);
  TaskContext& context = d.worker.contexts.front();
  fill_context(device, t, context);
  const double weight = d.weight;
  const std::chrono::nanoseconds previous_end = d.costs.previous_end;

  lock.unlock();
  Outcome outcome = execute(id, t, device, context);
  spin_lock(lock);

  t.info->launches[static_cast<std::size_t>(device)] =
      outcome.end ? CodeletInfo::kAsync : CodeletInfo::kSync;
  if (outcome.end) {
    d.async.launched.push_back({id, weight, std::move(outcome)});
    return;  // complete_launched completes it
  }
  if (previous_end.count() >= 0) {
    note_overhead(d, outcome.started - previous_end - t.transfer_time, 1);
  }
  d.running_end_s = d.async.launched.empty() ? 0 : running_end;
  const std::chrono::nanoseconds finished = outcome.finished;
  const bool ran = complete(device, id, std::move(outcome), weight, lock);
  pins_released_.notify_all();
  prefetch_pushed(lock);
  // The next task, if one is waiting now (perhaps released just above), starts back to back.
  d.costs.previous_end = ran && !d.queue.empty() ? finished : std::chrono::nanoseconds(-1);
}

void RuntimeCore::fill_context(int device, const TaskState& t, TaskContext& context) {
  DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  context.device_ = device;
  context.async_ = &d.async.launch;
  context.kind_ = &d.kind;
  context.dev_ = d.spec.device;
  context.buffers_.clear();
  for (std::size_t h : t.access_handles) {
    const Replica& r = handles_[h].replicas[static_cast<std::size_t>(device)];
    context.buffers_.emplace_back(r.buffer->data(), handles_[h].bytes);
  }
}

Outcome RuntimeCore::execute(TaskId id, const TaskState& t, int device, TaskContext& context) {
  const int impl = t.info->impl[static_cast<std::size_t>(device)];
  const Implementation& run = t.codelet->implementations[static_cast<std::size_t>(impl)].second;
  Outcome out;
  out.started = now();
  try {
    const device::TraceRange range = device::TraceRange::lazy(
        [&] { return fmt::format("acco task {} #{}", t.codelet->type, id); });
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
  AsyncLaunch& a = devices_[static_cast<std::size_t>(device)]->async.launch;
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

void RuntimeCore::note_overhead(DeviceState& d, std::chrono::nanoseconds gap, std::size_t tasks) {
  const double per_task = std::chrono::duration<double>(gap).count() /
                          static_cast<double>(std::max<std::size_t>(tasks, 1));
  // A low quantile rather than the mean: gaps where the thread lost its CPU to another device's
  // thread say how crowded the CPUs are, not what one more task on this device costs; falls
  // quickly, rises slowly.
  const double sample = std::max(0.0, per_task);
  d.costs.overhead_s =
      smoothed(d.costs.overhead_s, sample, sample < d.costs.overhead_s ? 0.2 : 0.02);
}

bool RuntimeCore::batchable(int device, const TaskState& t) const {
  // Short, calibrated, and every datum already usable here: no copy, no allocation, no wait.
  constexpr double kShortTask = 20e-6;
  if (!t.calibrated || t.predicted_s > kShortTask) {
    return false;
  }
  const auto dev_index = static_cast<std::size_t>(device);
  return std::all_of(t.accesses.begin(), t.accesses.end(), [&](const auto& access) {
    const HandleState& hs = handles_[access.first];
    const Replica& r = hs.replicas[dev_index];
    return r.buffer && !r.fetching && (!reads(access.second) || (r.valid && hs.lost.empty()));
  });
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
  std::vector<TaskContext>& contexts = d.worker.contexts;
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
    note_started(d);
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
  const std::chrono::nanoseconds previous_end = d.costs.previous_end;

  lock.unlock();
  std::vector<Outcome> outcomes;
  outcomes.reserve(batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    outcomes.push_back(execute(batch[i], *states[i], device, contexts[i]));
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
    d.counters.tasks_batched += completed ? 1 : 0;
    ran = completed && ran;
  }
  for (std::size_t i = outcomes.size(); i < batch.size(); ++i) {
    // Not started: its device failed during an earlier task of the batch.
    TaskState& t = state(batch[i]);
    unpin(device, t);
    --d.totals.running;
    t.phase = TaskPhase::kQueued;
    place(batch[i], -1);
  }
  pins_released_.notify_all();
  prefetch_pushed(lock);
  d.costs.previous_end = ran && !d.queue.empty() ? finished : std::chrono::nanoseconds(-1);
}

}  // namespace acco::sched::detail
