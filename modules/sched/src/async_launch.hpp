// Asynchronous implementations: the queue a task's implementation submits its work to
// (TaskContext::queue), what that work threw, and the tasks launched on a device and not yet
// completed.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "acco/core/result.hpp"
#include "acco/device/device.hpp"
#include "acco/sched/runtime.hpp"

namespace acco::sched::detail {

// What the work a task submitted through TaskContext::queue() threw, kept for that task: the
// queue's own error would stick and fail every task launched behind it.
struct AsyncErrors {
  std::mutex mu;
  std::string error;         // a host task threw
  std::string device_error;  // a host task threw DeviceFailure
};

// The queue an implementation sees: forwards to the device's compute queue, wrapping host tasks
// so that what they throw goes to the task's AsyncErrors.
class TaskQueue final : public device::Queue {
 public:
  Status copy(void* dst, const void* src, std::size_t bytes) override;
  Status host_task(std::function<void()> task) override;
  Result<std::shared_ptr<device::Event>> record() override { return inner->record(); }
  Status wait(std::shared_ptr<device::Event> event) override {
    return inner->wait(std::move(event));
  }
  Status synchronize() override { return inner->synchronize(); }

  device::Queue* inner = nullptr;
  std::shared_ptr<AsyncErrors> errors;
};

// A device's compute queue for asynchronous implementations, made on first use by its thread,
// and the launch in progress (what TaskContext::queue() started for the current task).
struct AsyncLaunch {
  device::Device* device = nullptr;
  std::chrono::steady_clock::time_point origin;  // the runtime's clock
  std::unique_ptr<device::Queue> queue;
  // Device-clock times are placed on the runtime's clock through an event completed at a known
  // time (within half the round trip that waited for it).
  std::shared_ptr<device::Event> reference;
  std::chrono::nanoseconds reference_at{0};
  TaskQueue facade;
  std::shared_ptr<device::Event> start;  // of the current task; null until queue() is called
  Status ensure();                       // makes the queue and the reference event
};

// What running one implementation gave: times, and an error or a device failure.
struct Outcome {
  std::chrono::nanoseconds started{0}, finished{0};
  std::string error;
  std::string device_error;
  // Set when the implementation submitted work to TaskContext::queue(): the task was launched
  // and completes when `end` does (RuntimeCore::settle fills the rest then).
  std::shared_ptr<device::Event> start, end;
  std::shared_ptr<AsyncErrors> errors;
};

// An asynchronous task between its launch and its completion.
struct Launched {
  TaskId id = 0;
  double weight = 1;  // the device's when it was launched
  Outcome outcome;
};

// A device's asynchronous pipeline: its compute queue and the tasks launched on it, oldest
// first (at most RuntimeCore::kPipelineDepth): pinned, not in the queue; the device's
// `running_end_s` is the expected end of the last one.
struct AsyncPipeline {
  AsyncLaunch launch;
  std::deque<Launched> launched;
};

}  // namespace acco::sched::detail
