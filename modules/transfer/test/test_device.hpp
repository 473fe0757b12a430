// Test helpers: a host backend to run the engine on, a Device wrapper that counts and fails what
// the engine asks of the device, and patterned buffers to check copies with.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/device/device.hpp"
#include "acco/device/host_backend.hpp"

namespace acco::transfer::testing {

inline std::unique_ptr<device::Backend> make_backend(device::HostBackendOptions options = {}) {
  auto backend = device::make_host_backend(options);
  ACCO_CHECK(backend.has_value());
  return std::move(*backend);
}

// Forwards to a real device; counts allocations, pins and queues, and fails them on request.
class CountingDevice final : public device::Device {
 public:
  explicit CountingDevice(device::Device& inner) : inner_(inner) {}

  [[nodiscard]] const device::DeviceInfo& info() const override { return inner_.info(); }
  [[nodiscard]] Result<std::unique_ptr<device::Buffer>> allocate(std::size_t bytes) override {
    ++allocations;
    if (fail_allocate) {
      return fail(Errc::kDeviceError, "injected: out of device memory");
    }
    return inner_.allocate(bytes);
  }
  [[nodiscard]] Result<std::unique_ptr<device::Buffer>> allocate_host(
      std::size_t bytes, device::MemoryKind kind) override {
    ++host_allocations;
    if (fail_host) {
      return fail(Errc::kDeviceError, "injected: cannot pin host memory");
    }
    return inner_.allocate_host(bytes, kind);
  }
  [[nodiscard]] Result<std::unique_ptr<device::Registration>> register_host(
      void* ptr, std::size_t bytes) override {
    ++host_registrations;
    if (fail_host) {
      return fail(Errc::kDeviceError, "injected: cannot pin host memory");
    }
    return inner_.register_host(ptr, bytes);
  }
  [[nodiscard]] Result<std::unique_ptr<device::Queue>> create_queue() override {
    ++queues;
    return inner_.create_queue();
  }
  [[nodiscard]] Status copy(void* dst, const void* src, std::size_t bytes) override {
    return inner_.copy(dst, src, bytes);
  }
  [[nodiscard]] device::MemoryKind kind_of(const void* ptr) const override {
    return inner_.kind_of(ptr);
  }

  // Host memory pinned through this device: allocations plus registrations.
  [[nodiscard]] int pins() const { return host_allocations + host_registrations; }

  std::atomic<int> allocations{0};
  std::atomic<int> host_allocations{0};
  std::atomic<int> host_registrations{0};
  std::atomic<int> queues{0};
  std::atomic<bool> fail_allocate{false};
  std::atomic<bool> fail_host{false};

 private:
  device::Device& inner_;
};

// Deterministic bytes that differ from position to position and from seed to seed (xorshift64).
// Words are built in a word array and copied once: byte loops and per-word memcpy calls crawl
// under ThreadSanitizer, and 64 MiB buffers are part of the tests.
inline void fill_pattern(std::byte* data, std::size_t bytes, std::uint64_t seed) {
  std::vector<std::uint64_t> words((bytes + 7) / 8);
  std::uint64_t state = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (std::uint64_t& word : words) {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    word = state * 0x2545F4914F6CDD1DULL;
  }
  if (bytes > 0) {
    std::memcpy(data, words.data(), bytes);
  }
}

inline std::vector<std::byte> pattern(std::size_t bytes, std::uint64_t seed) {
  std::vector<std::byte> data(bytes);
  fill_pattern(data.data(), bytes, seed);
  return data;
}

}  // namespace acco::transfer::testing
