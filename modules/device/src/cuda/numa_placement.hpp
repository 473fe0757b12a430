// Best-effort placement of host memory on a NUMA node, through the kernel's memory-policy system
// calls (no libnuma). Failures (no NUMA, a sandbox that refuses the call) leave the default
// first-touch placement, which is correct, only slower across sockets.
#pragma once

#include <cstddef>

namespace acco::device::detail {

// Node masks cover 1024 nodes, the kernel's default MAX_NUMNODES.
inline constexpr std::size_t kNodeMaskWords = 16;

// Prefers `node` for the pages of [ptr, ptr+bytes) not yet touched. No-op for node < 0.
void prefer_node(void* ptr, std::size_t bytes, int node);

// Makes the calling thread prefer `node` for new pages while it lives, then restores the previous
// policy. For allocations that the driver populates itself (cudaHostAlloc pins at once).
class ScopedPreferredNode {
 public:
  explicit ScopedPreferredNode(int node);
  ~ScopedPreferredNode();
  ScopedPreferredNode(const ScopedPreferredNode&) = delete;
  ScopedPreferredNode& operator=(const ScopedPreferredNode&) = delete;

 private:
  bool active_ = false;
  int old_mode_ = 0;
  unsigned long old_mask_[kNodeMaskWords] = {};
};

}  // namespace acco::device::detail
