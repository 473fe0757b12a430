#include "cuda/cuda_queue.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace acco::device::detail {
namespace {

// Failures the driver does not see: a host task that threw. Each is stamped with the sequence
// number of its operation, so an event reports only the failures of operations before it. A
// queue starts a new set when synchronize() has reported one (as the host backend clears its
// error), while events recorded earlier keep the set they were recorded in.
class QueueFailures {
 public:
  void add(std::uint64_t sequence, Error error) {
    const std::scoped_lock lock(mutex_);
    if (!first_ || sequence < first_->first) {
      first_.emplace(sequence, std::move(error));
    }
  }
  // The first failure of an operation numbered below `sequence`.
  [[nodiscard]] Status before(std::uint64_t sequence) const {
    const std::scoped_lock lock(mutex_);
    if (first_ && first_->first < sequence) {
      return tl::unexpected(first_->second);
    }
    return {};
  }

 private:
  mutable std::mutex mutex_;
  std::optional<std::pair<std::uint64_t, Error>> first_;
};

class CudaEvent final : public Event {
 public:
  CudaEvent(std::shared_ptr<const PrimaryContext> context, CUevent event,
            std::shared_ptr<const QueueFailures> failures, std::uint64_t sequence)
      : context_(std::move(context)),
        event_(event),
        failures_(std::move(failures)),
        sequence_(sequence) {}
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  // Destroying a pending event is allowed: the driver releases it once it completes.
  ~CudaEvent() override { static_cast<void>(context_->api().event_destroy(event_)); }

  [[nodiscard]] Status wait() override {
    ACCO_RETURN_IF_ERROR(
        driver().check("cuEventSynchronize", context_->api().event_synchronize(event_)),
        context_->where("event wait"));
    return failures_->before(sequence_);
  }

  // An event that failed counts as ready, so wait() returns at once with the error.
  [[nodiscard]] bool ready() const override {
    return context_->api().event_query(event_) != CUDA_ERROR_NOT_READY;
  }

  // cuEventElapsedTime gives float milliseconds with a resolution of about 0.5 us (CUDA Driver
  // API reference), so short intervals are quantised; bench repeats copies for that.
  [[nodiscard]] Result<std::chrono::nanoseconds> since(const Event& earlier) const override {
    const auto* other = dynamic_cast<const CudaEvent*>(&earlier);
    if (other == nullptr) {
      return fail(Errc::kInvalidArgument, "event since: the earlier event is not a CUDA event");
    }
    if (other->device() != device()) {
      return fail(Errc::kInvalidArgument, "event since: events of devices " +
                                              std::to_string(other->device()) + " and " +
                                              std::to_string(device()) + " share no clock");
    }
    if (!other->ready() || !ready()) {
      return fail(Errc::kInvalidArgument, "event since: both events must be complete");
    }
    float milliseconds = 0;
    if (const CUresult code =
            context_->api().event_elapsed_time(&milliseconds, other->event_, event_);
        code != CUDA_SUCCESS) {
      return tl::unexpected(
          driver().error("cuEventElapsedTime", code).with_context(context_->where("event since")));
    }
    return std::chrono::nanoseconds(std::llround(static_cast<double>(milliseconds) * 1e6));
  }

  [[nodiscard]] int device() const { return context_->ordinal(); }
  [[nodiscard]] CUevent handle() const { return event_; }

 private:
  [[nodiscard]] const Driver& driver() const { return context_->driver(); }

  std::shared_ptr<const PrimaryContext> context_;
  CUevent event_;
  std::shared_ptr<const QueueFailures> failures_;
  std::uint64_t sequence_;  // operations numbered below it come before this event
};

struct HostTask {
  std::function<void()> task;
  std::shared_ptr<QueueFailures> failures;
  std::uint64_t sequence = 0;
};

// Runs on the driver's callback thread; exceptions must not cross into the driver. The task
// must not call the CUDA API itself (the driver forbids it in callbacks). A stream callback, unlike
// a cuLaunchHostFunc host function, is called exactly once even after the stream or its context
// failed (with that error as `status`), so the task runs and its closure is freed whatever
// happened before it: a task that gives back what earlier operations used (the engine's staging
// slots) never waits for a device that will not answer again. The failure itself reaches the
// caller through events and synchronize.
void run_host_task(CUstream /*stream*/, CUresult /*status*/, void* user_data) {
  const std::unique_ptr<HostTask> host_task(static_cast<HostTask*>(user_data));
  try {
    host_task->task();
  } catch (const std::exception& e) {
    host_task->failures->add(host_task->sequence,
                             Error{Errc::kInternal, std::string("host task threw: ") + e.what()});
  } catch (...) {
    host_task->failures->add(host_task->sequence,
                             Error{Errc::kInternal, "host task threw a non-standard exception"});
  }
}

class CudaQueue final : public Queue {
 public:
  CudaQueue(std::shared_ptr<const PrimaryContext> context, CUstream stream,
            std::shared_ptr<const AllocationTable> table)
      : context_(std::move(context)), stream_(stream), table_(std::move(table)) {}
  CudaQueue(const CudaQueue&) = delete;
  CudaQueue& operator=(const CudaQueue&) = delete;
  // Drains first so host tasks still queued run (and free their closures) before the stream goes.
  ~CudaQueue() override {
    static_cast<void>(api().stream_synchronize(stream_));
    static_cast<void>(api().stream_destroy(stream_));
  }

  [[nodiscard]] Status copy(void* dst, const void* src, std::size_t bytes) override {
    ACCO_RETURN_IF_ERROR(validate_copy(*table_, dst, src, bytes), context_->where("queue"));
    if (bytes == 0) {
      return {};
    }
    ACCO_RETURN_IF_ERROR(context_->make_current(), context_->where("queue copy"));
    ++submitted_;
    // Unified addressing tells the direction from the addresses. Pageable memory is staged by
    // the driver, synchronously with the caller for host-to-device.
    ACCO_RETURN_IF_ERROR(
        driver().check("cuMemcpyAsync",
                       api().memcpy_async(reinterpret_cast<CUdeviceptr>(dst),
                                          reinterpret_cast<CUdeviceptr>(src), bytes, stream_)),
        context_->where("queue copy"));
    return {};
  }

  [[nodiscard]] Status host_task(std::function<void()> task) override {
    if (!task) {
      return fail(Errc::kInvalidArgument, context_->where("queue host_task: empty task"));
    }
    auto host_task = std::make_unique<HostTask>(HostTask{std::move(task), failures_, submitted_});
    ACCO_RETURN_IF_ERROR(context_->make_current(), context_->where("queue host_task"));
    if (const CUresult code = api().stream_add_callback(stream_, run_host_task, host_task.get(), 0);
        code != CUDA_SUCCESS) {
      return tl::unexpected(driver()
                                .error("cuStreamAddCallback", code)
                                .with_context(context_->where("queue host_task")));
    }
    static_cast<void>(host_task.release());  // run_host_task owns it now
    ++submitted_;
    return {};
  }

  [[nodiscard]] Result<std::shared_ptr<Event>> record() override {
    ACCO_RETURN_IF_ERROR(context_->make_current(), context_->where("queue record"));
    CUevent event = nullptr;
    // Timing stays enabled (no CU_EVENT_DISABLE_TIMING): since() needs it.
    if (const CUresult code = api().event_create(&event, CU_EVENT_DEFAULT); code != CUDA_SUCCESS) {
      return tl::unexpected(
          driver().error("cuEventCreate", code).with_context(context_->where("queue record")));
    }
    auto recorded = std::make_shared<CudaEvent>(context_, event, failures_, submitted_);
    if (const CUresult code = api().event_record(event, stream_); code != CUDA_SUCCESS) {
      return tl::unexpected(
          driver().error("cuEventRecord", code).with_context(context_->where("queue record")));
    }
    return recorded;
  }

  [[nodiscard]] Status wait(std::shared_ptr<Event> event) override {
    const auto* cuda_event = dynamic_cast<const CudaEvent*>(event.get());
    if (cuda_event == nullptr) {
      return fail(Errc::kInvalidArgument,
                  context_->where("queue wait: not an event of the CUDA backend"));
    }
    ACCO_RETURN_IF_ERROR(driver().check("cuStreamWaitEvent",
                                        api().stream_wait_event(stream_, cuda_event->handle(), 0)),
                         context_->where("queue wait"));
    return {};
  }

  // A CUstream is the same handle as the runtime's cudaStream_t, so libraries on the runtime
  // (NCCL, cuFile) take it as theirs.
  [[nodiscard]] Result<void*> native_stream() override {
    ACCO_RETURN_IF_ERROR(context_->make_current(), context_->where("queue native_stream"));
    return static_cast<void*>(stream_);
  }

  [[nodiscard]] Status synchronize() override {
    ACCO_RETURN_IF_ERROR(driver().check("cuStreamSynchronize", api().stream_synchronize(stream_)),
                         context_->where("queue synchronize"));
    Status failed = failures_->before(submitted_);
    if (!failed.has_value()) {
      failures_ = std::make_shared<QueueFailures>();
    }
    return failed;
  }

 private:
  [[nodiscard]] const Driver& driver() const { return context_->driver(); }
  [[nodiscard]] const DriverApi& api() const { return context_->api(); }

  std::shared_ptr<const PrimaryContext> context_;
  CUstream stream_;
  std::shared_ptr<const AllocationTable> table_;
  std::shared_ptr<QueueFailures> failures_ = std::make_shared<QueueFailures>();
  std::uint64_t submitted_ = 0;  // operations submitted so far; the next one's sequence number
};

}  // namespace

Result<std::unique_ptr<Queue>> create_cuda_queue(std::shared_ptr<const PrimaryContext> context,
                                                 std::shared_ptr<const AllocationTable> table) {
  CUstream stream = nullptr;
  // Non-blocking: no implicit synchronisation with the legacy default stream, which
  // Device::copy (cuMemcpy) uses.
  if (const CUresult code = context->api().stream_create(&stream, CU_STREAM_NON_BLOCKING);
      code != CUDA_SUCCESS) {
    return tl::unexpected(context->driver()
                              .error("cuStreamCreate", code)
                              .with_context(context->where("create_queue")));
  }
  return std::make_unique<CudaQueue>(std::move(context), stream, std::move(table));
}

}  // namespace acco::device::detail
