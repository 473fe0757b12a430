// Host copies: both ends in host memory, so no device and no queue is involved; the engine's host
// copy threads share a large copy, and a small one stays on the caller.
#include "engine_core.hpp"

namespace acco::transfer::detail {

Status copy_host(EngineCore& core, void* dst, const void* src, std::size_t bytes,
                 CopyRecord& record) {
  core.copier->copy(dst, src, bytes);
  record.host_threads = core.copier->threads_for(bytes);
  return {};  // complete on return
}

}  // namespace acco::transfer::detail
