// A host backend device: memory from RAM within a budget, host buffers and registrations it
// recognises by address, queues run by threads, and a plain synchronous copy.
#pragma once

#include <memory>
#include <mutex>

#include "acco/device/device.hpp"
#include "acco/device/host_backend.hpp"

#include "host/address_space.hpp"
#include "host/device_core.hpp"
#include "host/host_queue.hpp"

namespace acco::device::host {

class HostDevice final : public Device {
 public:
  HostDevice(DeviceInfo info, const EmulatedLink& link, std::shared_ptr<AddressSpace> space);

  [[nodiscard]] const DeviceInfo& info() const override { return core_->info; }
  [[nodiscard]] Result<std::unique_ptr<Buffer>> allocate(std::size_t bytes) override;
  [[nodiscard]] Result<std::unique_ptr<Buffer>> allocate_host(std::size_t bytes,
                                                              MemoryKind kind) override;
  [[nodiscard]] Result<std::unique_ptr<Registration>> register_host(void* ptr,
                                                                    std::size_t bytes) override;
  [[nodiscard]] Result<std::unique_ptr<Queue>> create_queue() override;
  [[nodiscard]] Status copy(void* dst, const void* src, std::size_t bytes) override;
  [[nodiscard]] MemoryKind kind_of(const void* ptr) const override;

  // The emulated link's two directions, for tests that inspect the booking.
  [[nodiscard]] LinkChannel& to_device() { return core_->to_device; }
  [[nodiscard]] LinkChannel& to_host() { return core_->to_host; }

 private:
  const std::shared_ptr<DeviceCore> core_;
  const std::shared_ptr<AddressSpace> space_;

  std::mutex copy_mutex_;
  std::unique_ptr<HostQueue> copy_queue_;  // copy()'s queue, made on first use; destroyed first
};

}  // namespace acco::device::host
