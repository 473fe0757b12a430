// The last step of Engine::copy: hands a planned copy to the body of its strategy, one file each
// (host_copy.cpp, zero_copy.cpp, direct_copy.cpp, pipelined_copy.cpp).
#include "copy_steps.hpp"

namespace acco::xfer::detail {

Result<Events> dispatch_copy(EngineCore& core, PendingCopy& copy) {
  Result<Events> events = Events{};
  switch (copy.plan.strategy) {
    case Strategy::kNone:
      break;
    case Strategy::kHostCopy:
      events = copy_host(core, copy.dst, copy.src, copy.bytes, copy.record);
      break;
    case Strategy::kZeroCopy:
      events = copy_zero_copy(core, copy.dst, copy.src, copy.bytes, copy.record);
      break;
    case Strategy::kDirect:
      events = copy_direct(core, copy.dst, copy.src, copy.bytes, copy.plan.queues, copy.record);
      break;
    case Strategy::kPipelined:
      events = copy_pipelined(core, copy.dst, copy.src, copy.bytes, copy.record);
      break;
    case Strategy::kBatched:
      return fail(Errc::kInternal, "batched plan for a single copy");
  }
  if (!events) {
    return tl::unexpected(std::move(events.error()).with_context(copy_context(copy.bytes)));
  }
  return events;
}

}  // namespace acco::xfer::detail
