#include "cuda/allocation_table.hpp"

#include <string>

namespace acco::device::detail {
namespace {

std::uintptr_t address(const void* ptr) {
  return reinterpret_cast<std::uintptr_t>(ptr);
}

Status check_range(const AllocationTable& table, const void* ptr, std::size_t bytes,
                   const char* which) {
  const auto entry = table.find(ptr);
  if (!entry) {
    return {};
  }
  const std::size_t offset = address(ptr) - address(entry->begin);
  if (bytes > entry->size - offset) {
    return fail(Errc::kInvalidArgument,
                std::string(which) + " range of " + std::to_string(bytes) + " bytes at offset " +
                    std::to_string(offset) + " runs past the end of its " + to_string(entry->kind) +
                    " allocation of " + std::to_string(entry->size) + " bytes");
  }
  return {};
}

}  // namespace

void AllocationTable::insert(const Entry& entry) {
  const std::scoped_lock lock(mutex_);
  entries_[address(entry.begin)] = entry;
}

void AllocationTable::erase(const void* begin) {
  const std::scoped_lock lock(mutex_);
  entries_.erase(address(begin));
}

std::optional<AllocationTable::Entry> AllocationTable::find(const void* ptr) const {
  const std::scoped_lock lock(mutex_);
  auto it = entries_.upper_bound(address(ptr));
  if (it == entries_.begin()) {
    return std::nullopt;
  }
  --it;
  if (address(ptr) - it->first < it->second.size) {
    return it->second;
  }
  return std::nullopt;
}

std::optional<AllocationTable::Entry> AllocationTable::find_overlap(const void* ptr,
                                                                    std::size_t bytes,
                                                                    MemoryKind kind) const {
  const std::scoped_lock lock(mutex_);
  const std::uintptr_t begin = address(ptr);
  const std::uintptr_t end = begin + bytes;
  // Entries do not overlap each other, so only the one starting at or before `begin` and those
  // starting inside [begin, end) can intersect the range.
  auto it = entries_.upper_bound(begin);
  if (it != entries_.begin()) {
    --it;
  }
  for (; it != entries_.end() && it->first < end; ++it) {
    const bool intersects = it->first + it->second.size > begin;
    if (intersects && it->second.kind == kind) {
      return it->second;
    }
  }
  return std::nullopt;
}

Status validate_copy(const AllocationTable& table, const void* dst, const void* src,
                     std::size_t bytes) {
  if (dst == nullptr || src == nullptr) {
    return fail(Errc::kInvalidArgument, "copy: null pointer");
  }
  const std::uintptr_t d = address(dst);
  const std::uintptr_t s = address(src);
  if (bytes > 0 && d < s + bytes && s < d + bytes) {
    return fail(Errc::kInvalidArgument, "copy: source and destination ranges overlap");
  }
  ACCO_RETURN_IF_ERROR(check_range(table, dst, bytes, "destination"), "copy");
  ACCO_RETURN_IF_ERROR(check_range(table, src, bytes, "source"), "copy");
  return {};
}

}  // namespace acco::device::detail
