#include "host/address_space.hpp"

#include <mutex>
#include <utility>

#include <fmt/format.h>

namespace acco::device::host {

Status AddressSpace::insert(const void* ptr, std::size_t size, MemoryKind kind,
                            std::shared_ptr<DeviceCore> owner) {
  const auto start = reinterpret_cast<std::uintptr_t>(ptr);
  const std::unique_lock lock(mutex_);
  auto next = ranges_.lower_bound(start);
  const Range* clash = nullptr;
  if (next != ranges_.end() && next->first < start + size) {
    clash = &next->second;
  } else if (next != ranges_.begin() && std::prev(next)->second.end() > start) {
    clash = &std::prev(next)->second;
  }
  if (clash != nullptr) {
    return fail(Errc::kInvalidArgument,
                fmt::format("[{}, +{}) overlaps {} memory at [{:#x}, +{})", ptr, size,
                            to_string(clash->kind), clash->start, clash->size));
  }
  ranges_.emplace_hint(next, start, Range{start, size, kind, std::move(owner)});
  return {};
}

void AddressSpace::erase(const void* ptr) {
  const std::unique_lock lock(mutex_);
  ranges_.erase(reinterpret_cast<std::uintptr_t>(ptr));
}

std::optional<AddressSpace::Range> AddressSpace::find(const void* ptr) const {
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  const std::shared_lock lock(mutex_);
  auto after = ranges_.upper_bound(address);
  if (after == ranges_.begin()) {
    return std::nullopt;
  }
  const Range& range = std::prev(after)->second;
  if (address >= range.end()) {
    return std::nullopt;
  }
  return range;
}

}  // namespace acco::device::host
