// Asynchronous implementations: the queue TaskContext::queue() hands out, tasks launched behind
// the ones in flight (when, and when not), and their completion.
#include <algorithm>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "runtime_core.hpp"

namespace acco::sched::detail {

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
  ACCO_ASSIGN_OR_RETURN(std::unique_ptr<device::Queue> made, device->create_queue());
  const auto before = std::chrono::steady_clock::now();
  ACCO_ASSIGN_OR_RETURN(std::shared_ptr<device::Event> event, made->record());
  ACCO_RETURN_IF_ERROR(event->wait());
  const auto after = std::chrono::steady_clock::now();
  reference_at = std::chrono::duration_cast<std::chrono::nanoseconds>(before - origin) +
                 std::chrono::duration_cast<std::chrono::nanoseconds>(after - before) / 2;
  reference = std::move(event);
  queue = std::move(made);
  facade.inner = queue.get();
  return {};
}

}  // namespace acco::sched::detail

namespace acco::sched {

device::Queue& TaskContext::queue() {
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
  return d.memory.used + missing <= d.memory.budget;
}

bool RuntimeCore::releases_higher_priority(int device) const {
  const DeviceState& d = *devices_[static_cast<std::size_t>(device)];
  const int front = state(d.queue.front()).priority;
  const auto& dependents = state(d.async.launched.back().id).dependents;
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
  const Launched& running = d.async.launched.back();  // the work the front task would follow
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

void RuntimeCore::settle(DeviceState& d, Outcome& out) const {
  Status done = out.end->wait();
  if (!done && out.device_error.empty()) {
    out.device_error = done.error().message;
  }
  // The run time from the task's own two events (exact); its start through the reference (a
  // GPU's elapsed times are single-precision milliseconds, coarser the longer the run).
  auto from = out.start->since(*d.async.launch.reference);
  auto run = out.end->since(*out.start);
  if (done && from && run) {
    out.started = d.async.launch.reference_at + *from;
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
  Launched l = std::move(d.async.launched.front());
  d.async.launched.pop_front();
  lock.unlock();
  settle(d, l.outcome);
  spin_lock(lock);
  if (d.failed && l.outcome.device_error.empty()) {
    // An earlier task's failure retired the device: what this one wrote there is not kept.
    l.outcome.device_error = "its device failed while it ran";
  }
  const TaskState& t = state(l.id);
  if (d.costs.previous_end.count() >= 0) {
    note_overhead(d, l.outcome.started - d.costs.previous_end - t.transfer_time, 1);
  }
  if (d.async.launched.empty()) {
    d.running_end_s = 0;
  }
  const std::chrono::nanoseconds finished = l.outcome.finished;
  const bool ran = complete(device, l.id, std::move(l.outcome), l.weight, lock);
  pins_released_.notify_all();
  prefetch_pushed(lock);
  d.costs.previous_end = ran && (!d.queue.empty() || !d.async.launched.empty())
                             ? finished
                             : std::chrono::nanoseconds(-1);
}

}  // namespace acco::sched::detail
