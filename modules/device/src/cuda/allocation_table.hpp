// Which address ranges a CUDA backend handed out (device buffers, host buffers of each kind,
// registrations), shared by all devices of one backend. The CUDA driver can tell device from
// page-locked host memory but not pinned from mapped from registered, nor where an allocation
// ends; this table can, so kind_of and the copy range checks answer exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>

#include "acco/core/result.hpp"
#include "acco/device/device.hpp"

namespace acco::device::detail {

class AllocationTable {
 public:
  struct Entry {
    const std::byte* begin = nullptr;
    std::size_t size = 0;
    MemoryKind kind = MemoryKind::kPageable;
  };

  // Thread-safe. Entries never overlap: the driver never hands out overlapping allocations and
  // register_host checks registrations before inserting.
  void insert(const Entry& entry);
  void erase(const void* begin);
  // The entry whose range holds ptr, if any.
  [[nodiscard]] std::optional<Entry> find(const void* ptr) const;
  // The first entry of `kind` that overlaps [ptr, ptr+bytes), if any.
  [[nodiscard]] std::optional<Entry> find_overlap(const void* ptr, std::size_t bytes,
                                                  MemoryKind kind) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::uintptr_t, Entry> entries_;  // by begin address
};

// The argument checks every copy makes before reaching the driver: kInvalidArgument for null
// pointers, overlapping source and destination (all addresses are unified, so host and device
// ranges never alias), or a range that runs past the end of an allocation this backend knows.
[[nodiscard]] Status validate_copy(const AllocationTable& table, const void* dst, const void* src,
                                   std::size_t bytes);

}  // namespace acco::device::detail
