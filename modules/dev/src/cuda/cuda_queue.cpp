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

#include "cuda/cuda_error.hpp"

namespace acco::dev::detail {
namespace {

// Failures the runtime does not see: a host task that threw. Each is stamped with the sequence
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
  CudaEvent(int device, cudaEvent_t event, std::shared_ptr<const QueueFailures> failures,
            std::uint64_t sequence)
      : device_(device), event_(event), failures_(std::move(failures)), sequence_(sequence) {}
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  // Destroying a pending event is allowed: the runtime releases it once it completes.
  ~CudaEvent() override { static_cast<void>(cudaEventDestroy(event_)); }

  [[nodiscard]] Status wait() override {
    ACCO_RETURN_IF_ERROR(cuda_check("cudaEventSynchronize", cudaEventSynchronize(event_)),
                         "event wait");
    return failures_->before(sequence_);
  }

  // An event that failed counts as ready, so wait() returns at once with the error.
  [[nodiscard]] bool ready() const override {
    const cudaError_t code = cudaEventQuery(event_);
    if (code == cudaErrorNotReady) {
      static_cast<void>(cudaGetLastError());
      return false;
    }
    return true;
  }

  // cudaEventElapsedTime gives float milliseconds with a resolution of about 0.5 us (CUDA
  // Runtime API reference), so short intervals are quantised; bench repeats copies for that.
  [[nodiscard]] Result<std::chrono::nanoseconds> since(const Event& earlier) const override {
    const auto* other = dynamic_cast<const CudaEvent*>(&earlier);
    if (other == nullptr) {
      return fail(Errc::kInvalidArgument, "event since: the earlier event is not a CUDA event");
    }
    if (other->device_ != device_) {
      return fail(Errc::kInvalidArgument, "event since: events of devices " +
                                              std::to_string(other->device_) + " and " +
                                              std::to_string(device_) + " share no clock");
    }
    if (!other->ready() || !ready()) {
      return fail(Errc::kInvalidArgument, "event since: both events must be complete");
    }
    float milliseconds = 0;
    if (const cudaError_t code = cudaEventElapsedTime(&milliseconds, other->event_, event_);
        code != cudaSuccess) {
      return tl::unexpected(cuda_error("cudaEventElapsedTime", code).with_context("event since"));
    }
    return std::chrono::nanoseconds(std::llround(static_cast<double>(milliseconds) * 1e6));
  }

  [[nodiscard]] int device() const { return device_; }
  [[nodiscard]] cudaEvent_t handle() const { return event_; }

 private:
  int device_;
  cudaEvent_t event_;
  std::shared_ptr<const QueueFailures> failures_;
  std::uint64_t sequence_;  // operations numbered below it come before this event
};

struct HostTask {
  std::function<void()> task;
  std::shared_ptr<QueueFailures> failures;
  std::uint64_t sequence = 0;
};

// Runs on the runtime's callback thread; exceptions must not cross into the runtime. The task
// must not call the CUDA API itself (the runtime forbids it in host functions).
void CUDART_CB run_host_task(void* user_data) {
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
  CudaQueue(int device, cudaStream_t stream, std::shared_ptr<const AllocationTable> table)
      : device_(device), stream_(stream), table_(std::move(table)) {}
  CudaQueue(const CudaQueue&) = delete;
  CudaQueue& operator=(const CudaQueue&) = delete;
  // Drains first so host tasks still queued run (and free their closures) before the stream goes.
  ~CudaQueue() override {
    static_cast<void>(cudaStreamSynchronize(stream_));
    static_cast<void>(cudaStreamDestroy(stream_));
  }

  [[nodiscard]] Status copy(void* dst, const void* src, std::size_t bytes) override {
    ACCO_RETURN_IF_ERROR(validate_copy(*table_, dst, src, bytes), "queue");
    if (bytes == 0) {
      return {};
    }
    ACCO_RETURN_IF_ERROR(select(), "queue copy");
    ++submitted_;
    // cudaMemcpyDefault: unified addressing tells the direction. Pageable memory is staged by
    // the driver, synchronously with the caller for host-to-device.
    ACCO_RETURN_IF_ERROR(
        cuda_check("cudaMemcpyAsync", cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_)),
        "queue copy");
    return {};
  }

  [[nodiscard]] Status host_task(std::function<void()> task) override {
    if (!task) {
      return fail(Errc::kInvalidArgument, "queue host_task: empty task");
    }
    auto host_task = std::make_unique<HostTask>(HostTask{std::move(task), failures_, submitted_});
    ACCO_RETURN_IF_ERROR(select(), "queue host_task");
    if (const cudaError_t code = cudaLaunchHostFunc(stream_, run_host_task, host_task.get());
        code != cudaSuccess) {
      return tl::unexpected(cuda_error("cudaLaunchHostFunc", code).with_context("queue host_task"));
    }
    static_cast<void>(host_task.release());  // run_host_task owns it now
    ++submitted_;
    return {};
  }

  [[nodiscard]] Result<std::shared_ptr<Event>> record() override {
    ACCO_RETURN_IF_ERROR(select(), "queue record");
    cudaEvent_t event = nullptr;
    // Timing stays enabled (no cudaEventDisableTiming): since() needs it.
    if (const cudaError_t code = cudaEventCreateWithFlags(&event, cudaEventDefault);
        code != cudaSuccess) {
      return tl::unexpected(
          cuda_error("cudaEventCreateWithFlags", code).with_context("queue record"));
    }
    auto recorded = std::make_shared<CudaEvent>(device_, event, failures_, submitted_);
    if (const cudaError_t code = cudaEventRecord(event, stream_); code != cudaSuccess) {
      return tl::unexpected(cuda_error("cudaEventRecord", code).with_context("queue record"));
    }
    return recorded;
  }

  [[nodiscard]] Status wait(std::shared_ptr<Event> event) override {
    const auto* cuda_event = dynamic_cast<const CudaEvent*>(event.get());
    if (cuda_event == nullptr) {
      return fail(Errc::kInvalidArgument, "queue wait: not an event of the CUDA backend");
    }
    ACCO_RETURN_IF_ERROR(
        cuda_check("cudaStreamWaitEvent", cudaStreamWaitEvent(stream_, cuda_event->handle(), 0)),
        "queue wait");
    return {};
  }

  [[nodiscard]] Result<void*> native_stream() override {
    ACCO_RETURN_IF_ERROR(select(), "queue native_stream");
    return static_cast<void*>(stream_);
  }

  [[nodiscard]] Status synchronize() override {
    ACCO_RETURN_IF_ERROR(cuda_check("cudaStreamSynchronize", cudaStreamSynchronize(stream_)),
                         "queue synchronize");
    Status failed = failures_->before(submitted_);
    if (!failed.has_value()) {
      failures_ = std::make_shared<QueueFailures>();
    }
    return failed;
  }

 private:
  [[nodiscard]] Status select() const {
    return cuda_check("cudaSetDevice", cudaSetDevice(device_));
  }

  int device_;
  cudaStream_t stream_;
  std::shared_ptr<const AllocationTable> table_;
  std::shared_ptr<QueueFailures> failures_ = std::make_shared<QueueFailures>();
  std::uint64_t submitted_ = 0;  // operations submitted so far; the next one's sequence number
};

}  // namespace

Result<std::unique_ptr<Queue>> create_cuda_queue(int device,
                                                 std::shared_ptr<const AllocationTable> table) {
  cudaStream_t stream = nullptr;
  // Non-blocking: no implicit synchronisation with the legacy default stream, which
  // Device::copy (cudaMemcpy) uses.
  if (const cudaError_t code = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
      code != cudaSuccess) {
    return tl::unexpected(
        cuda_error("cudaStreamCreateWithFlags", code).with_context("create_queue"));
  }
  return std::make_unique<CudaQueue>(device, stream, std::move(table));
}

}  // namespace acco::dev::detail
