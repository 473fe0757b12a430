// The user buffers the engine has seen as pageable host ends of copies, how often, and those it
// pinned in place because they kept coming back. Private to the xfer module.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>

#include "acco/core/result.hpp"
#include "acco/device/device.hpp"

namespace acco::transfer::detail {

// User buffers the engine has seen (pageable host ends of copies) and those it pinned in place.
class RegistrationCache {
 public:
  // Counts one more use of the buffer at `ptr` and returns the count (1 on first sight); a use
  // with a different size starts the count again.
  int note_use(const void* ptr, std::size_t bytes);
  // Pins [ptr, ptr + bytes) and keeps it pinned; returns what pinning cost. A failure is
  // remembered so the buffer is not tried again.
  [[nodiscard]] Result<std::chrono::nanoseconds> pin(device::Device& device, void* ptr,
                                                     std::size_t bytes);
  // True when `ptr` starts a registration of this cache; `covered` says whether it spans `bytes`.
  [[nodiscard]] bool registered(const void* ptr, std::size_t bytes, bool* covered) const;
  void forget(const void* ptr);
  [[nodiscard]] std::size_t registrations() const;

 private:
  struct Entry {
    std::size_t bytes = 0;
    int uses = 0;
    bool failed = false;
    std::unique_ptr<device::Registration> registration;
  };
  std::unordered_map<std::uintptr_t, Entry> entries_;
};

}  // namespace acco::transfer::detail
