#include "cuda/numa_placement.hpp"

#include <climits>
#include <cstdint>

#include <sys/syscall.h>
#include <unistd.h>

namespace acco::device::detail {
namespace {

// From <linux/mempolicy.h>; spelled out so no kernel header is needed.
constexpr int kMpolDefault = 0;
constexpr int kMpolPreferred = 1;
constexpr std::size_t kBitsPerWord = sizeof(unsigned long) * CHAR_BIT;
// The kernel reads maxnode - 1 bits (an off-by-one kept for compatibility; libnuma passes +1).
constexpr unsigned long kMaxNode = kNodeMaskWords * kBitsPerWord + 1;

bool fill_mask(int node, unsigned long (&mask)[kNodeMaskWords]) {
  if (node < 0 || static_cast<std::size_t>(node) >= kNodeMaskWords * kBitsPerWord) {
    return false;
  }
  const auto bit = static_cast<std::size_t>(node);
  mask[bit / kBitsPerWord] = 1UL << (bit % kBitsPerWord);
  return true;
}

}  // namespace

void prefer_node(void* ptr, std::size_t bytes, int node) {
  unsigned long mask[kNodeMaskWords] = {};
  if (!fill_mask(node, mask)) {
    return;
  }
  static_cast<void>(syscall(SYS_mbind, ptr, bytes, kMpolPreferred, mask, kMaxNode, 0U));
}

ScopedPreferredNode::ScopedPreferredNode(int node) {
  unsigned long mask[kNodeMaskWords] = {};
  if (!fill_mask(node, mask)) {
    return;
  }
  if (syscall(SYS_get_mempolicy, &old_mode_, old_mask_, kMaxNode, nullptr, 0UL) != 0) {
    return;
  }
  active_ = syscall(SYS_set_mempolicy, kMpolPreferred, mask, kMaxNode) == 0;
}

ScopedPreferredNode::~ScopedPreferredNode() {
  if (!active_) {
    return;
  }
  if (syscall(SYS_set_mempolicy, old_mode_, old_mask_, kMaxNode) != 0) {
    static_cast<void>(syscall(SYS_set_mempolicy, kMpolDefault, nullptr, 0UL));
  }
}

}  // namespace acco::device::detail
