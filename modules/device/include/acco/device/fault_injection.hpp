// Fault injection: a Device that wraps another and makes chosen operations fail or stall, so
// what sits above the device layer (the transfer engine, the task runtime, acco schedule) can be
// tested against the failures real accelerators have: a copy that fails (a DMA error, an Xid),
// a device that is lost mid-run (fallen off the bus: every call after fails), a queue that stalls
// (a hung copy engine, a throttled link) and an allocation that fails (out of memory, a staging
// buffer that cannot be pinned). Counts are per wrapped device and shared by its queues; the
// faults are deterministic, so a test that injects one sees the same run every time. Every
// operation counts, the transfer engine's own included: an engine measures a link whose rate the
// device does not give with 3 copies of one staging slot into one device allocation, and fills
// its staging pool from host allocations when it starts (pinning in place first: register_host
// counts as a host allocation). The wrapped device's memory says it is not host-accessible, so
// the engine moves every byte through its queues, as on a discrete GPU.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "acco/core/result.hpp"
#include "acco/device/device.hpp"

namespace acco::device {

struct FaultPlan {
  // The Nth copy (1-based, on the device's queues and its plain copy together) fails once with
  // kDeviceError; later copies succeed.
  std::optional<std::size_t> fail_copy;
  // After N copies have been issued the device is lost: every later call (copies, queues, host
  // tasks, allocations, records) fails with kDeviceError, as a GPU that fell off the bus does.
  std::optional<std::size_t> lost_after_copies;
  // The Nth allocation of device memory (1-based) fails with kDeviceError, once: a device out
  // of memory.
  std::optional<std::size_t> fail_allocation;
  // The Nth allocation of host memory through the device (pinned staging buffers) fails, once.
  std::optional<std::size_t> fail_host_allocation;
  // Every `stall_every`th copy waits `stall` before it is issued (0: none).
  std::size_t stall_every = 0;
  std::chrono::milliseconds stall{0};
  bool operator==(const FaultPlan&) const = default;
};

// "copy-fails:3", "lost-after:10", "alloc-fails:2", "host-alloc-fails:1", "stall:50ms/4" (every
// 4th copy waits 50 ms; "/N" may be left out: every copy), several joined by commas.
// kInvalidArgument naming the part that is not one of these.
[[nodiscard]] Result<FaultPlan> parse_fault_plan(std::string_view text);
// The plan as parse_fault_plan reads it ("" for none).
[[nodiscard]] std::string to_string(const FaultPlan& plan);

// `inner` with `plan`'s faults; `inner` must outlive it. Every injected failure's message starts
// with "injected fault: " and names the device and the operation.
[[nodiscard]] std::unique_ptr<Device> with_faults(Device& inner, const FaultPlan& plan);

}  // namespace acco::device
