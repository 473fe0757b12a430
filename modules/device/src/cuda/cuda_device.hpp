// One GPU seen through the CUDA driver. Every call that depends on the calling thread's current
// context makes this device's primary context current first (cuCtxSetCurrent is per thread and
// cheap when unchanged).
#pragma once

#include <memory>

#include "acco/core/result.hpp"
#include "acco/device/device.hpp"

#include "cuda/allocation_table.hpp"
#include "cuda/primary_context.hpp"

namespace acco::device::detail {

class CudaDevice final : public Device {
 public:
  // `info.index` is the CUDA device ordinal. `can_map_host`:
  // CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY.
  CudaDevice(DeviceInfo info, bool can_map_host, std::shared_ptr<const PrimaryContext> context,
             std::shared_ptr<AllocationTable> table);

  [[nodiscard]] const DeviceInfo& info() const override { return info_; }
  [[nodiscard]] Result<std::unique_ptr<Buffer>> allocate(std::size_t bytes) override;
  [[nodiscard]] Result<std::unique_ptr<Buffer>> allocate_host(std::size_t bytes,
                                                              MemoryKind kind) override;
  [[nodiscard]] Result<std::unique_ptr<Registration>> register_host(void* ptr,
                                                                    std::size_t bytes) override;
  [[nodiscard]] Result<std::unique_ptr<Queue>> create_queue() override;
  [[nodiscard]] Status copy(void* dst, const void* src, std::size_t bytes) override;
  [[nodiscard]] MemoryKind kind_of(const void* ptr) const override;
  [[nodiscard]] Status make_current() override { return context_->make_current(); }

 private:
  DeviceInfo info_;
  bool can_map_host_;
  std::shared_ptr<const PrimaryContext> context_;
  std::shared_ptr<AllocationTable> table_;
};

}  // namespace acco::device::detail
