// The first steps of Engine::copy: checking its arguments, and classifying it by the memory kinds
// at its ends and by what the engine knows of its host end (pinned by the engine, or seen before).
#include <fmt/format.h>

#include "copy_steps.hpp"

namespace acco::xfer::detail {

std::string copy_context(std::size_t bytes) {
  return fmt::format("copy of {} bytes", bytes);
}

Status validate_copy(void* dst, const void* src, std::size_t bytes) {
  if (dst == nullptr || src == nullptr) {
    return fail(Errc::kInvalidArgument, fmt::format("{}: null {}", copy_context(bytes),
                                                    dst == nullptr ? "destination" : "source"));
  }
  if (ranges_overlap(dst, src, bytes)) {
    return fail(Errc::kInvalidArgument, fmt::format("{}: source {} and destination {} overlap",
                                                    copy_context(bytes), src, dst));
  }
  return {};
}

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
  copy.host_end = to_device ? const_cast<void*>(src) : dst;
  const dev::MemoryKind host_kind = to_device ? record.src_kind : record.dst_kind;

  copy.shape = CopyShape{record.dst_kind, record.src_kind, bytes, 0};
  if (to_device || to_host) {
    bool covered = false;
    if (core.registrations.registered(copy.host_end, bytes, &covered)) {
      record.registered = covered;
      if (!covered) {
        // Our registration is shorter than this copy; the rest is pageable, so stage it all.
        (to_device ? copy.shape.src : copy.shape.dst) = dev::MemoryKind::kPageable;
      }
    } else if (host_kind == dev::MemoryKind::kPageable && core.profile.register_after_uses > 0 &&
               !options.strategy) {
      copy.shape.host_buffer_uses = core.registrations.note_use(copy.host_end, bytes);
    }
  }
  return copy;
}

}  // namespace acco::xfer::detail
