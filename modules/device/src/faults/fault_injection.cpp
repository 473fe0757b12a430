#include "acco/device/fault_injection.hpp"

#include <atomic>
#include <cmath>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "acco/core/units.hpp"

namespace acco::device {
namespace {

// What the device and its queues share: the counts and whether it is lost.
struct FaultState {
  FaultPlan plan;
  std::string name;
  std::atomic<std::size_t> copies{0};
  std::atomic<std::size_t> allocations{0};
  std::atomic<std::size_t> host_allocations{0};
  std::atomic<bool> lost{false};

  [[nodiscard]] Status lost_error(std::string_view what) const {
    return fail(Errc::kDeviceError,
                fmt::format("injected fault: {}: {}: the device is lost", name, what));
  }
  // Before a copy: lost, this copy's failure, or a stall.
  [[nodiscard]] Status before_copy() {
    if (lost) {
      return lost_error("copy");
    }
    const std::size_t n = ++copies;
    if (plan.lost_after_copies && n > *plan.lost_after_copies) {
      lost = true;
      return lost_error("copy");
    }
    if (plan.fail_copy && n == *plan.fail_copy) {
      return fail(Errc::kDeviceError, fmt::format("injected fault: {}: copy {} failed", name, n));
    }
    if (plan.stall_every > 0 && plan.stall.count() > 0 && n % plan.stall_every == 0) {
      std::this_thread::sleep_for(plan.stall);
    }
    return {};
  }
  [[nodiscard]] Status before_allocation(bool host) {
    if (lost) {
      return lost_error("allocation");
    }
    const std::size_t n = ++(host ? host_allocations : allocations);
    const auto& nth = host ? plan.fail_host_allocation : plan.fail_allocation;
    if (nth && n == *nth) {
      return fail(Errc::kDeviceError,
                  fmt::format("injected fault: {}: {} allocation {} failed ({})", name,
                              host ? "host" : "device", n,
                              host ? "cannot pin host memory" : "out of memory"));
    }
    return {};
  }
  [[nodiscard]] Status alive(std::string_view what) const {
    return lost ? lost_error(what) : Status{};
  }
};

// Device memory that says it is not host-accessible, so the transfer engine moves every byte
// through the device's queues (as on a discrete GPU) instead of a memcpy the faults cannot see.
class OpaqueBuffer final : public Buffer {
 public:
  explicit OpaqueBuffer(std::unique_ptr<Buffer> inner) : inner_(std::move(inner)) {}
  void* data() const override { return inner_->data(); }
  std::size_t size() const override { return inner_->size(); }
  MemoryKind kind() const override { return inner_->kind(); }
  bool host_accessible() const override { return false; }

 private:
  std::unique_ptr<Buffer> inner_;
};

class FaultyQueue final : public Queue {
 public:
  FaultyQueue(std::unique_ptr<Queue> inner, std::shared_ptr<FaultState> state)
      : inner_(std::move(inner)), state_(std::move(state)) {}

  Status copy(void* dst, const void* src, std::size_t bytes) override {
    ACCO_RETURN_IF_ERROR(state_->before_copy());
    return inner_->copy(dst, src, bytes);
  }
  Status host_task(std::function<void()> task) override {
    ACCO_RETURN_IF_ERROR(state_->alive("host task"));
    return inner_->host_task(std::move(task));
  }
  Result<std::shared_ptr<Event>> record() override {
    ACCO_RETURN_IF_ERROR(state_->alive("record"));
    return inner_->record();
  }
  Status wait(std::shared_ptr<Event> event) override {
    ACCO_RETURN_IF_ERROR(state_->alive("wait"));
    return inner_->wait(std::move(event));
  }
  Status synchronize() override {
    // What was queued before the loss still finishes: buffers must not be freed under it.
    Status done = inner_->synchronize();
    ACCO_RETURN_IF_ERROR(state_->alive("synchronize"));
    return done;
  }
  Result<void*> native_stream() override { return inner_->native_stream(); }

 private:
  std::unique_ptr<Queue> inner_;
  std::shared_ptr<FaultState> state_;
};

class FaultyDevice final : public Device {
 public:
  FaultyDevice(Device& inner, const FaultPlan& plan)
      : inner_(inner), state_(std::make_shared<FaultState>()) {
    state_->plan = plan;
    state_->name = inner.info().name;
  }

  const DeviceInfo& info() const override { return inner_.info(); }
  Result<std::unique_ptr<Buffer>> allocate(std::size_t bytes) override {
    ACCO_RETURN_IF_ERROR(state_->before_allocation(false));
    ACCO_ASSIGN_OR_RETURN(auto buffer, inner_.allocate(bytes));
    return std::unique_ptr<Buffer>(std::make_unique<OpaqueBuffer>(std::move(buffer)));
  }
  Result<std::unique_ptr<Buffer>> allocate_host(std::size_t bytes, MemoryKind kind) override {
    ACCO_RETURN_IF_ERROR(state_->before_allocation(true));
    return inner_.allocate_host(bytes, kind);
  }
  Result<std::unique_ptr<Registration>> register_host(void* ptr, std::size_t bytes) override {
    ACCO_RETURN_IF_ERROR(state_->before_allocation(true));
    return inner_.register_host(ptr, bytes);
  }
  Result<std::unique_ptr<Queue>> create_queue() override {
    ACCO_RETURN_IF_ERROR(state_->alive("create queue"));
    ACCO_ASSIGN_OR_RETURN(auto queue, inner_.create_queue());
    return std::unique_ptr<Queue>(std::make_unique<FaultyQueue>(std::move(queue), state_));
  }
  Status copy(void* dst, const void* src, std::size_t bytes) override {
    ACCO_RETURN_IF_ERROR(state_->before_copy());
    return inner_.copy(dst, src, bytes);
  }
  MemoryKind kind_of(const void* ptr) const override { return inner_.kind_of(ptr); }
  Status make_current() override {
    ACCO_RETURN_IF_ERROR(state_->alive("make current"));
    return inner_.make_current();
  }

 private:
  Device& inner_;
  std::shared_ptr<FaultState> state_;
};

Result<std::size_t> count_of(std::string_view part, std::string_view value) {
  const auto n = units::parse_int(value);
  if (!n || *n < 1) {
    return fail(Errc::kInvalidArgument,
                fmt::format("'{}': expected a count of 1 or more after ':'", part));
  }
  return static_cast<std::size_t>(*n);
}

Status parse_stall(std::string_view part, std::string_view value, FaultPlan& plan) {
  const auto slash = value.find('/');
  const auto seconds = units::parse_duration(value.substr(0, slash));
  if (!seconds || *seconds <= 0 || *seconds > 60) {
    return fail(Errc::kInvalidArgument,
                fmt::format("'{}': expected a stall of 1ms to 60s (e.g. stall:50ms/4)", part));
  }
  plan.stall = std::chrono::milliseconds(std::max<long long>(1, std::llround(*seconds * 1000)));
  plan.stall_every = 1;
  if (slash != std::string_view::npos) {
    ACCO_ASSIGN_OR_RETURN(plan.stall_every, count_of(part, value.substr(slash + 1)));
  }
  return {};
}

}  // namespace

Result<FaultPlan> parse_fault_plan(std::string_view text) {
  FaultPlan plan;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const std::string_view part = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const auto colon = part.find(':');
    const std::string_view key = part.substr(0, colon);
    const std::string_view value =
        colon == std::string_view::npos ? std::string_view{} : part.substr(colon + 1);
    if (key == "copy-fails") {
      ACCO_ASSIGN_OR_RETURN(plan.fail_copy, count_of(part, value));
    } else if (key == "lost-after") {
      ACCO_ASSIGN_OR_RETURN(plan.lost_after_copies, count_of(part, value));
    } else if (key == "alloc-fails") {
      ACCO_ASSIGN_OR_RETURN(plan.fail_allocation, count_of(part, value));
    } else if (key == "host-alloc-fails") {
      ACCO_ASSIGN_OR_RETURN(plan.fail_host_allocation, count_of(part, value));
    } else if (key == "stall") {
      ACCO_RETURN_IF_ERROR(parse_stall(part, value, plan));
    } else {
      return fail(Errc::kInvalidArgument,
                  fmt::format("'{}' is not a fault (expected copy-fails:N, lost-after:N, "
                              "alloc-fails:N, host-alloc-fails:N or stall:DURATION[/N])",
                              units::excerpt(part)));
    }
    if (comma == std::string_view::npos) {
      break;
    }
    start = comma + 1;
  }
  return plan;
}

std::string to_string(const FaultPlan& plan) {
  std::vector<std::string> parts;
  if (plan.fail_copy) {
    parts.push_back(fmt::format("copy-fails:{}", *plan.fail_copy));
  }
  if (plan.lost_after_copies) {
    parts.push_back(fmt::format("lost-after:{}", *plan.lost_after_copies));
  }
  if (plan.fail_allocation) {
    parts.push_back(fmt::format("alloc-fails:{}", *plan.fail_allocation));
  }
  if (plan.fail_host_allocation) {
    parts.push_back(fmt::format("host-alloc-fails:{}", *plan.fail_host_allocation));
  }
  if (plan.stall_every > 0 && plan.stall.count() > 0) {
    parts.push_back(fmt::format("stall:{}ms/{}", plan.stall.count(), plan.stall_every));
  }
  return fmt::format("{}", fmt::join(parts, ","));
}

std::unique_ptr<Device> with_faults(Device& inner, const FaultPlan& plan) {
  return std::make_unique<FaultyDevice>(inner, plan);
}

}  // namespace acco::device
