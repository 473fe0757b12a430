// What a host device shares with its buffers, queues and registrations: its description, its two
// link channels and its memory budget. Shared ownership, so a buffer or queue that outlives its
// Device (or the backend) stays valid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>

#include "acco/core/result.hpp"
#include "acco/device/device.hpp"
#include "acco/device/host_backend.hpp"

#include "host/emulated_link.hpp"

namespace acco::device::host {

struct DeviceCore {
  DeviceCore(DeviceInfo device_info, const EmulatedLink& link);
  DeviceCore(const DeviceCore&) = delete;
  DeviceCore& operator=(const DeviceCore&) = delete;

  // kDeviceError when `bytes` more would exceed info.memory_bytes. Thread-safe.
  [[nodiscard]] Status reserve_memory(std::size_t bytes);
  void release_memory(std::size_t bytes);

  const std::uint64_t id;  // unique in the process: tells events of different devices apart
  const DeviceInfo info;
  LinkChannel to_device;
  LinkChannel to_host;

 private:
  std::mutex mutex_;
  std::uint64_t used_bytes_ = 0;
};

}  // namespace acco::device::host
