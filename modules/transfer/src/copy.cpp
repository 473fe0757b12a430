// Engine::copy and its steps, in order: validate the arguments, classify the copy (memory kinds,
// direction, what the engine knows of its host end), plan it (the profile's choice or a forced
// strategy, and pinning a host buffer that keeps coming back) and dispatch it to the body of its
// strategy (host_copy.cpp, zero_copy.cpp, direct_copy.cpp, pipelined_copy.cpp). The steps share
// this file so the compiler inlines them: a small copy is a few hundred nanoseconds, and calls
// between files cost a measurable part of it.
#include <algorithm>
#include <cstddef>
#include <string>

#include <fmt/format.h>

#include "acco/core/units.hpp"
#include "acco/device/trace_range.hpp"
#include "acco/transfer/engine.hpp"
#include "acco/transfer/strategy.hpp"

#include "engine_core.hpp"

namespace acco::transfer {
namespace detail {
namespace {

// One copy on its way through the steps. classify_copy fills everything but the plan and the
// strategy's part of the record; choose_plan the plan, the record's strategy and a pinning;
// dispatch_copy the rest of the record.
struct PendingCopy {
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t bytes = 0;
  void* host_end = nullptr;  // the end a host<->device copy may pin
  CopyShape shape;           // what the plan is chosen from
  CopyPlan plan;
  CopyRecord record;
};

// "copy of N bytes", the context of every error of one copy.
[[gnu::cold]] std::string copy_context(std::size_t bytes) {
  return fmt::format("copy of {} bytes", bytes);
}

// The error of an invalid copy, kept out of line: the check itself is a few compares on every
// copy.
[[gnu::cold, gnu::noinline]] Error invalid_copy(void* dst, const void* src, std::size_t bytes) {
  if (dst == nullptr || src == nullptr) {
    return Error{Errc::kInvalidArgument, fmt::format("{}: null {}", copy_context(bytes),
                                                     dst == nullptr ? "destination" : "source")};
  }
  return Error{Errc::kInvalidArgument, fmt::format("{}: source {} and destination {} overlap",
                                                   copy_context(bytes), src, dst)};
}

// kInvalidArgument for a null pointer or overlapping ranges. Only for bytes > 0: zero bytes
// complete at once, whatever the pointers.
Status validate_copy(void* dst, const void* src, std::size_t bytes) {
  if (dst == nullptr || src == nullptr || ranges_overlap(dst, src, bytes)) [[unlikely]] {
    return tl::unexpected(invalid_copy(dst, src, bytes));
  }
  return {};
}

// The memory kinds and direction of the copy, whether the engine holds its host end pinned
// already and, unless `options` force a strategy, one more use of a pageable host end counted
// towards pinning it.
PendingCopy classify_copy(EngineCore& core, void* dst, const void* src, std::size_t bytes,
                          const CopyOptions& options) {
  PendingCopy copy;
  copy.dst = dst;
  copy.src = src;
  copy.bytes = bytes;
  CopyRecord& record = copy.record;
  record.bytes = bytes;
  record.items = 1;
  record.dst_kind = core.device.kind_of(dst);
  record.src_kind = core.device.kind_of(src);
  record.direction = direction_of(record.dst_kind, record.src_kind);
  const bool to_device = record.direction == Direction::kHostToDevice;
  const bool to_host = record.direction == Direction::kDeviceToHost;
  // The host end is only pinned (registered), never written through: the cast keeps one type for
  // both directions.
  copy.host_end =
      to_device ? const_cast<void*>(src) : dst;  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  const device::MemoryKind host_kind = to_device ? record.src_kind : record.dst_kind;

  copy.shape = CopyShape{record.dst_kind, record.src_kind, bytes, 0};
  if (to_device || to_host) {
    bool covered = false;
    if (core.registrations.registered(copy.host_end, bytes, &covered)) {
      record.registered = covered;
      if (!covered) {
        // Our registration is shorter than this copy; the rest is pageable, so stage it all.
        (to_device ? copy.shape.src : copy.shape.dst) = device::MemoryKind::kPageable;
      }
    } else if (host_kind == device::MemoryKind::kPageable && core.profile.register_after_uses > 0 &&
               !options.strategy) {
      copy.shape.host_buffer_uses = core.registrations.note_use(copy.host_end, bytes);
    }
  }
  return copy;
}

// kInvalidArgument when `strategy` cannot move a copy between these kinds.
Status check_forced(Strategy strategy, device::MemoryKind dst, device::MemoryKind src,
                    std::size_t bytes, const DeviceTraits& traits) {
  const Direction direction = direction_of(dst, src);
  const bool one_device_end =
      direction == Direction::kHostToDevice || direction == Direction::kDeviceToHost;
  const device::MemoryKind host = dst == device::MemoryKind::kDevice ? src : dst;
  const char* problem = nullptr;
  switch (strategy) {
    case Strategy::kNone:
      problem = bytes > 0 ? "moves nothing" : nullptr;
      break;
    case Strategy::kHostCopy:
      problem = direction != Direction::kHostToHost ? "needs host memory at both ends" : nullptr;
      break;
    case Strategy::kDirect:
      problem = one_device_end && host == device::MemoryKind::kPageable
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
                    to_string(direction), device::to_string(src), device::to_string(dst), problem));
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
      device::MemoryKind::kRegistered;
}

// The profile's plan, or the forced strategy once it is known to move this copy (kInvalidArgument
// otherwise). Pins the host end when the plan says so and stages the copy instead (pipelined)
// when pinning fails.
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

// Runs the planned strategy; `events` are those that complete the copy (none when it completed
// already).
Status dispatch_copy(EngineCore& core, PendingCopy& copy, Events& events) {
  // Each strategy's result is taken where it is returned (no Result<Events> assigned over
  // another): a small copy's whole cost is a few hundred instructions.
  const auto finish = [&](Result<Events>&& ran) -> Status {
    if (!ran) {
      return tl::unexpected(std::move(ran.error()).with_context(copy_context(copy.bytes)));
    }
    events = std::move(*ran);
    return {};
  };
  switch (copy.plan.strategy) {
    case Strategy::kNone:
      return {};
    case Strategy::kHostCopy:
      ACCO_RETURN_IF_ERROR(copy_host(core, copy.dst, copy.src, copy.bytes, copy.record),
                           copy_context(copy.bytes));
      return {};
    case Strategy::kZeroCopy:
      ACCO_RETURN_IF_ERROR(copy_zero_copy(core, copy.dst, copy.src, copy.bytes, copy.record),
                           copy_context(copy.bytes));
      return {};
    case Strategy::kDirect:
      return finish(
          copy_direct(core, copy.dst, copy.src, copy.bytes, copy.plan.queues, copy.record));
    case Strategy::kPipelined:
      return finish(copy_pipelined(core, copy.dst, copy.src, copy.bytes, copy.record));
    case Strategy::kBatched:
      return fail(Errc::kInternal, "batched plan for a single copy");
  }
  return {};
}

// "acco copy h2d 4 MiB pipelined": the copy's profiler range, built only under a profiler.
[[gnu::cold]] std::string range_name(const PendingCopy& copy) {
  const char* direction = "h2h";
  switch (copy.record.direction) {
    case Direction::kHostToHost:
      break;
    case Direction::kHostToDevice:
      direction = "h2d";
      break;
    case Direction::kDeviceToHost:
      direction = "d2h";
      break;
    case Direction::kDeviceToDevice:
      direction = "d2d";
      break;
  }
  return fmt::format("acco copy {} {} {}", direction, units::format_bytes(copy.bytes),
                     to_string(copy.record.strategy));
}

}  // namespace
}  // namespace detail

Result<Transfer> Engine::copy(void* dst, const void* src, std::size_t bytes,
                              const CopyOptions& options) {
  if (bytes == 0) {  // complete at once, whatever the pointers
    CopyRecord record;
    record.items = 1;
    return Transfer(record, {});
  }
  ACCO_RETURN_IF_ERROR(detail::validate_copy(dst, src, bytes));
  detail::PendingCopy pending = detail::classify_copy(*core_, dst, src, bytes, options);
  ACCO_RETURN_IF_ERROR(detail::choose_plan(*core_, pending, options));
  const device::TraceRange range =
      device::TraceRange::lazy([&] { return detail::range_name(pending); });
  detail::Events events;
  ACCO_RETURN_IF_ERROR(detail::dispatch_copy(*core_, pending, events));
  core_->counters.add(pending.record.direction, bytes, 1);
  return Transfer(pending.record, std::move(events));
}

}  // namespace acco::transfer
