#include "acco/device/device.hpp"

namespace acco::device {

const char* to_string(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kDevice:
      return "device";
    case MemoryKind::kPageable:
      return "pageable";
    case MemoryKind::kPinned:
      return "pinned";
    case MemoryKind::kRegistered:
      return "registered";
    case MemoryKind::kMapped:
      return "mapped";
  }
  return "unknown";
}

}  // namespace acco::device
