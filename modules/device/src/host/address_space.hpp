// Which addresses the host backend's devices know: device allocations, pinned and mapped host
// buffers and registrations, as disjoint ranges. One per backend, like the unified virtual address
// space of a CUDA process: host kinds are recognised by every device, and device memory of one
// device is known to the others (for copies between devices).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>

#include "acco/core/result.hpp"
#include "acco/device/device.hpp"

namespace acco::device::host {

struct DeviceCore;

class AddressSpace {
 public:
  struct Range {
    std::uintptr_t start = 0;
    std::size_t size = 0;
    MemoryKind kind = MemoryKind::kPageable;
    // The device that allocated or registered it; kept alive while the range exists.
    std::shared_ptr<DeviceCore> owner;

    [[nodiscard]] std::uintptr_t end() const { return start + size; }
  };

  // kInvalidArgument when [ptr, ptr + size) overlaps a known range. Thread-safe.
  [[nodiscard]] Status insert(const void* ptr, std::size_t size, MemoryKind kind,
                              std::shared_ptr<DeviceCore> owner);
  // Forgets the range starting at `ptr`. Thread-safe.
  void erase(const void* ptr);
  // The range holding `ptr`, if any. Thread-safe.
  [[nodiscard]] std::optional<Range> find(const void* ptr) const;

 private:
  mutable std::shared_mutex mutex_;
  std::map<std::uintptr_t, Range> ranges_;  // by start
};

}  // namespace acco::device::host
