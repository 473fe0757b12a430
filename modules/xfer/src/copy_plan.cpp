// The planning step of Engine::copy: the profile's choice (plan_copy) or a strategy the caller
// forced, checked against the copy, and pinning a reused host buffer when the plan asks for it.
#include <algorithm>

#include <fmt/format.h>

#include "copy_steps.hpp"

namespace acco::xfer::detail {
namespace {

// kInvalidArgument when `strategy` cannot move a copy between these kinds.
Status check_forced(Strategy strategy, dev::MemoryKind dst, dev::MemoryKind src, std::size_t bytes,
                    const DeviceTraits& traits) {
  const Direction direction = direction_of(dst, src);
  const bool one_device_end =
      direction == Direction::kHostToDevice || direction == Direction::kDeviceToHost;
  const dev::MemoryKind host = dst == dev::MemoryKind::kDevice ? src : dst;
  const char* problem = nullptr;
  switch (strategy) {
    case Strategy::kNone:
      problem = bytes > 0 ? "moves nothing" : nullptr;
      break;
    case Strategy::kHostCopy:
      problem = direction != Direction::kHostToHost ? "needs host memory at both ends" : nullptr;
      break;
    case Strategy::kDirect:
      problem = one_device_end && host == dev::MemoryKind::kPageable
                    ? "cannot DMA pageable memory (use pipelined)"
                    : (direction == Direction::kHostToHost ? "needs a device end" : nullptr);
      break;
    case Strategy::kPipelined:
      problem = one_device_end ? nullptr : "needs exactly one device end";
      break;
    case Strategy::kZeroCopy:
      problem = !one_device_end ? "needs exactly one device end"
                : !traits.device_memory_host_accessible
                    ? "needs a host mapping of device memory, which this device lacks"
                    : nullptr;
      break;
    case Strategy::kBatched:
      problem = "is for Engine::batch()";
      break;
  }
  if (problem != nullptr) {
    return fail(
        Errc::kInvalidArgument,
        fmt::format("strategy {} for a {} copy ({} to {}): {}", to_string(strategy),
                    to_string(direction), dev::to_string(src), dev::to_string(dst), problem));
  }
  return {};
}

// Pins the host end for the plan. A buffer that cannot be pinned (limit, overlap with another
// registration) is staged instead.
void pin_host_end(EngineCore& core, PendingCopy& copy) {
  auto pin_time = core.registrations.pin(core.device, copy.host_end, copy.bytes);
  if (!pin_time) {
    copy.plan.strategy = Strategy::kPipelined;
    return;
  }
  CopyRecord& record = copy.record;
  record.registered = true;
  record.pin_time = *pin_time;
  (record.direction == Direction::kHostToDevice ? record.src_kind : record.dst_kind) =
      dev::MemoryKind::kRegistered;
}

}  // namespace

Status choose_plan(EngineCore& core, PendingCopy& copy, const CopyOptions& options) {
  if (options.strategy) {
    ACCO_RETURN_IF_ERROR(check_forced(*options.strategy, copy.shape.dst, copy.shape.src, copy.bytes,
                                      core.info.traits),
                         copy_context(copy.bytes));
    copy.plan = plan_copy(copy.shape, core.profile, core.info.traits);
    copy.plan.strategy = *options.strategy;
    copy.plan.register_host = false;
    copy.plan.queues = std::max(copy.plan.queues, 1);
  } else {
    copy.plan = plan_copy(copy.shape, core.profile, core.info.traits);
  }
  if (copy.plan.register_host) {
    pin_host_end(core, copy);
  }
  copy.record.strategy = copy.plan.strategy;
  return {};
}

}  // namespace acco::xfer::detail
