// The steps of Engine::copy, in order: validate the arguments, classify the copy (memory kinds,
// direction, what the engine knows of its host end), plan it (the profile's choice or a forced
// strategy, and pinning a host buffer that keeps coming back) and dispatch it to the body of its
// strategy. Private to the xfer module.
#pragma once

#include <cstddef>
#include <string>

#include "acco/core/result.hpp"
#include "acco/xfer/engine.hpp"
#include "acco/xfer/strategy.hpp"

#include "engine_core.hpp"

namespace acco::xfer::detail {

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

// "copy of N bytes", the context of every error of one copy. Called only on an error path: small
// copies are microseconds, a format is a good part of one.
[[nodiscard]] std::string copy_context(std::size_t bytes);

// kInvalidArgument for a null pointer or overlapping ranges. Only for bytes > 0: zero bytes
// complete at once, whatever the pointers.
[[nodiscard]] Status validate_copy(void* dst, const void* src, std::size_t bytes);

// The memory kinds and direction of the copy, whether the engine holds its host end pinned
// already and, unless `options` force a strategy, one more use of a pageable host end counted
// towards pinning it.
[[nodiscard]] PendingCopy classify_copy(EngineCore& core, void* dst, const void* src,
                                        std::size_t bytes, const CopyOptions& options);

// The profile's plan, or the forced strategy once it is known to move this copy (kInvalidArgument
// otherwise). Pins the host end when the plan says so and stages the copy instead (pipelined)
// when pinning fails.
[[nodiscard]] Status choose_plan(EngineCore& core, PendingCopy& copy, const CopyOptions& options);

// Runs the planned strategy; the events that complete the copy (none when it completed already).
[[nodiscard]] Result<Events> dispatch_copy(EngineCore& core, PendingCopy& copy);

}  // namespace acco::xfer::detail
