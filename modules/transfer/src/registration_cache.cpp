#include "registration_cache.hpp"

#include <algorithm>

namespace acco::transfer::detail {
namespace {

// Buffers seen but not pinned are forgotten beyond this many, so a stream of distinct buffers
// cannot grow the table without bound.
constexpr std::size_t kMaxTrackedBuffers = 4096;

}  // namespace

int RegistrationCache::note_use(const void* ptr, std::size_t bytes) {
  const auto key = reinterpret_cast<std::uintptr_t>(ptr);
  if (entries_.size() >= kMaxTrackedBuffers && !entries_.contains(key)) {
    std::erase_if(entries_, [](const auto& entry) { return entry.second.registration == nullptr; });
  }
  Entry& entry = entries_[key];
  if (entry.bytes != bytes && !entry.registration) {
    entry = Entry{bytes, 0, false, nullptr};
  }
  if (entry.failed || entry.registration) {
    return 0;  // never again a candidate
  }
  return ++entry.uses;
}

Result<std::chrono::nanoseconds> RegistrationCache::pin(device::Device& device, void* ptr,
                                                        std::size_t bytes) {
  Entry& entry = entries_[reinterpret_cast<std::uintptr_t>(ptr)];
  const auto start = std::chrono::steady_clock::now();
  auto registration = device.register_host(ptr, bytes);
  const auto pin_time = std::chrono::steady_clock::now() - start;
  if (!registration) {
    entry.failed = true;
    return tl::unexpected(std::move(registration.error()));
  }
  entry.bytes = bytes;
  entry.registration = std::move(*registration);
  return std::chrono::duration_cast<std::chrono::nanoseconds>(pin_time);
}

bool RegistrationCache::registered(const void* ptr, std::size_t bytes, bool* covered) const {
  const auto it = entries_.find(reinterpret_cast<std::uintptr_t>(ptr));
  if (it == entries_.end() || !it->second.registration) {
    return false;
  }
  *covered = bytes <= it->second.bytes;
  return true;
}

void RegistrationCache::forget(const void* ptr) {
  entries_.erase(reinterpret_cast<std::uintptr_t>(ptr));
}

std::size_t RegistrationCache::registrations() const {
  return static_cast<std::size_t>(
      std::count_if(entries_.begin(), entries_.end(),
                    [](const auto& entry) { return entry.second.registration != nullptr; }));
}

}  // namespace acco::transfer::detail
