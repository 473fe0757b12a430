// A host backend queue: one worker thread runs its operations in submission order while the
// submitter and other queues go on. Events are markers the worker stamps with the device clock.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "acco/core/result.hpp"
#include "acco/device/device.hpp"

#include "host/address_space.hpp"
#include "host/device_core.hpp"
#include "host/pages.hpp"

namespace acco::device::host {

// Shared by an Event, the queue that completes it and the queues that wait for it.
class EventState {
 public:
  using Clock = std::chrono::steady_clock;

  explicit EventState(std::uint64_t device_id) : device_id_(device_id) {}

  void complete(Status status);
  // Blocks until complete; returns the status the queue had when the event was reached.
  [[nodiscard]] Status wait();
  [[nodiscard]] bool ready() const;
  // The completion time, if complete.
  [[nodiscard]] std::optional<Clock::time_point> time() const;
  [[nodiscard]] std::uint64_t device_id() const { return device_id_; }

 private:
  const std::uint64_t device_id_;
  mutable std::mutex mutex_;
  std::condition_variable completed_;
  bool done_ = false;
  Status status_;
  Clock::time_point time_{};
};

class HostEvent final : public Event {
 public:
  explicit HostEvent(std::shared_ptr<EventState> state) : state_(std::move(state)) {}
  [[nodiscard]] Status wait() override { return state_->wait(); }
  [[nodiscard]] bool ready() const override { return state_->ready(); }
  [[nodiscard]] Result<std::chrono::nanoseconds> since(const Event& earlier) const override;
  [[nodiscard]] const std::shared_ptr<EventState>& state() const { return state_; }

 private:
  std::shared_ptr<EventState> state_;
};

class HostQueue final : public Queue {
 public:
  // kDeviceError when the staging buffer cannot be allocated.
  [[nodiscard]] static Result<std::unique_ptr<HostQueue>> create(
      std::shared_ptr<DeviceCore> device, std::shared_ptr<AddressSpace> space);
  // Drains: returns after every submitted operation has run.
  ~HostQueue() override;
  HostQueue(const HostQueue&) = delete;
  HostQueue& operator=(const HostQueue&) = delete;

  [[nodiscard]] Status copy(void* dst, const void* src, std::size_t bytes) override;
  [[nodiscard]] Status host_task(std::function<void()> task) override;
  [[nodiscard]] Result<std::shared_ptr<Event>> record() override;
  [[nodiscard]] Status wait(std::shared_ptr<Event> event) override;
  [[nodiscard]] Status synchronize() override;

 private:
  using Operation = std::function<Status()>;  // runs on the worker

  HostQueue(std::shared_ptr<DeviceCore> device, std::shared_ptr<AddressSpace> space, Pages staging);
  void submit(Operation operation);
  // The first error since the last synchronize, if any.
  [[nodiscard]] Status pending_status();
  void run();

  const std::shared_ptr<DeviceCore> device_;
  const std::shared_ptr<AddressSpace> space_;
  const Pages staging_;  // used by the worker only

  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  std::deque<Operation> operations_;
  std::uint64_t submitted_ = 0;
  std::uint64_t completed_ = 0;
  bool stopping_ = false;
  std::optional<Error> error_;

  std::thread worker_;  // last: starts once everything above exists
};

}  // namespace acco::device::host
