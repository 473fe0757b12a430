#include "host/host_queue.hpp"

#include <exception>
#include <span>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "host/copy_path.hpp"

namespace acco::device::host {
namespace {

// Pageable copies are staged through chunks of this size. The CUDA driver stages through pinned
// buffers of a few MiB; the exact size is undocumented, and 2 MiB is also a huge page.
constexpr std::size_t kStagingBytes = std::size_t{2} << 20;

// A one-shot flag one thread sets and another waits for.
class Signal {
 public:
  void set() {
    {
      const std::lock_guard lock(mutex_);
      set_ = true;
    }
    changed_.notify_all();
  }
  void wait() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return set_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool set_ = false;
};

}  // namespace

void EventState::complete(Status status) {
  {
    const std::lock_guard lock(mutex_);
    status_ = std::move(status);
    time_ = Clock::now();
    done_ = true;
  }
  completed_.notify_all();
}

Status EventState::wait() {
  std::unique_lock lock(mutex_);
  completed_.wait(lock, [&] { return done_; });
  return status_;
}

bool EventState::ready() const {
  const std::lock_guard lock(mutex_);
  return done_;
}

std::optional<EventState::Clock::time_point> EventState::time() const {
  const std::lock_guard lock(mutex_);
  if (!done_) {
    return std::nullopt;
  }
  return time_;
}

Result<std::chrono::nanoseconds> HostEvent::since(const Event& earlier) const {
  const auto* other = dynamic_cast<const HostEvent*>(&earlier);
  if (other == nullptr) {
    return fail(Errc::kInvalidArgument, "event since: the earlier event is not a host event");
  }
  if (other->state_->device_id() != state_->device_id()) {
    return fail(Errc::kInvalidArgument, "event since: the events belong to different devices");
  }
  const auto end = state_->time();
  const auto start = other->state_->time();
  if (!end || !start) {
    return fail(Errc::kInvalidArgument, fmt::format("event since: the {} event is not complete",
                                                    end ? "earlier" : "later"));
  }
  return std::chrono::duration_cast<std::chrono::nanoseconds>(*end - *start);
}

Result<std::unique_ptr<HostQueue>> HostQueue::create(std::shared_ptr<DeviceCore> device,
                                                     std::shared_ptr<AddressSpace> space) {
  Pages staging = allocate_pages(kStagingBytes);
  if (!staging) {
    return fail(Errc::kDeviceError,
                fmt::format("{}: create queue: out of host memory for the staging buffer",
                            device->info.name));
  }
  return std::unique_ptr<HostQueue>(
      new HostQueue(std::move(device), std::move(space), std::move(staging)));
}

HostQueue::HostQueue(std::shared_ptr<DeviceCore> device, std::shared_ptr<AddressSpace> space,
                     Pages staging)
    : device_(std::move(device)),
      space_(std::move(space)),
      staging_(std::move(staging)),
      worker_(&HostQueue::run, this) {}

HostQueue::~HostQueue() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_one();
  worker_.join();
}

Status HostQueue::copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) {
    return {};
  }
  ACCO_ASSIGN_OR_RETURN(CopyPlan plan, plan_copy(*space_, dst, src, bytes), device_->info.name);
  const std::span<std::byte> bounce(staging_.get(), kStagingBytes);
  if (plan.path != CopyPlan::Path::kStagedToDevice) {
    submit([plan = std::move(plan), bounce] {
      run_copy(plan, bounce, [] {});
      return Status{};
    });
    return {};
  }
  // cudaMemcpyAsync from pageable memory returns once the source has been staged, so the caller
  // may reuse it at once; this queue does the same.
  auto consumed = std::make_shared<Signal>();
  submit([plan = std::move(plan), bounce, consumed] {
    run_copy(plan, bounce, [&] { consumed->set(); });
    return Status{};
  });
  consumed->wait();
  return {};
}

Status HostQueue::host_task(std::function<void()> task) {
  if (!task) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: host task: empty function", device_->info.name));
  }
  submit([task = std::move(task)]() -> Status {
    try {
      task();
      return {};
    } catch (const std::exception& e) {
      return fail(Errc::kInternal, std::string("host task threw: ") + e.what());
    } catch (...) {
      return fail(Errc::kInternal, "host task threw a non-standard exception");
    }
  });
  return {};
}

Result<std::shared_ptr<Event>> HostQueue::record() {
  auto state = std::make_shared<EventState>(device_->id);
  submit([this, state] {
    state->complete(pending_status());
    return Status{};
  });
  return std::make_shared<HostEvent>(std::move(state));
}

Status HostQueue::wait(std::shared_ptr<Event> event) {
  const auto* host_event = dynamic_cast<const HostEvent*>(event.get());
  if (host_event == nullptr) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: wait: {}", device_->info.name,
                            event ? "not an event of the host backend" : "null event"));
  }
  // The event's queue reports its own errors; waiting only orders.
  submit([state = host_event->state()] {
    (void)state->wait();
    return Status{};
  });
  return {};
}

Status HostQueue::synchronize() {
  std::unique_lock lock(mutex_);
  work_done_.wait(lock, [&] { return completed_ == submitted_; });
  if (!error_) {
    return {};
  }
  Error error = std::move(*error_);
  error_.reset();
  return tl::unexpected(std::move(error));
}

void HostQueue::submit(Operation operation) {
  {
    const std::lock_guard lock(mutex_);
    operations_.push_back(std::move(operation));
    ++submitted_;
  }
  work_ready_.notify_one();
}

Status HostQueue::pending_status() {
  const std::lock_guard lock(mutex_);
  if (error_) {
    return tl::unexpected(*error_);
  }
  return {};
}

void HostQueue::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    work_ready_.wait(lock, [&] { return stopping_ || !operations_.empty(); });
    if (operations_.empty()) {
      return;
    }
    Operation operation = std::move(operations_.front());
    operations_.pop_front();
    lock.unlock();
    Status status = operation();
    operation = nullptr;  // release what it captured before the submitter can see it done
    lock.lock();
    if (!status && !error_) {
      error_ = std::move(status.error());
    }
    ++completed_;
    work_done_.notify_all();
  }
}

}  // namespace acco::device::host
