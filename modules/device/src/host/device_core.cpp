#include "host/device_core.hpp"

#include <atomic>
#include <utility>

#include <fmt/format.h>

namespace acco::device::host {
namespace {

std::uint64_t next_device_id() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

DeviceCore::DeviceCore(DeviceInfo device_info, const EmulatedLink& link)
    : id(next_device_id()),
      info(std::move(device_info)),
      to_device(link.bytes_per_second, link.latency, info.copy_engines),
      to_host(link.bytes_per_second, link.latency, info.copy_engines) {}

Status DeviceCore::reserve_memory(std::size_t bytes) {
  const std::lock_guard lock(mutex_);
  if (bytes > info.memory_bytes - used_bytes_) {
    return fail(Errc::kDeviceError,
                fmt::format("out of device memory: {} bytes requested, {} of {} bytes in use on {}",
                            bytes, used_bytes_, info.memory_bytes, info.name));
  }
  used_bytes_ += bytes;
  return {};
}

void DeviceCore::release_memory(std::size_t bytes) {
  const std::lock_guard lock(mutex_);
  used_bytes_ -= bytes;
}

}  // namespace acco::device::host
