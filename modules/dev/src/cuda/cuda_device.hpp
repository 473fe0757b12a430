// One GPU seen through the CUDA runtime. Every call that depends on the calling thread's current
// device selects this one first (cudaSetDevice is per thread and cheap when unchanged).
#pragma once

#include <memory>

#include "acco/core/result.hpp"
#include "acco/dev/device.hpp"

#include "cuda/allocation_table.hpp"

namespace acco::dev::detail {

class CudaDevice final : public Device {
 public:
  // `info.index` is the CUDA device ordinal. `can_map_host`: cudaDeviceProp::canMapHostMemory.
  CudaDevice(DeviceInfo info, bool can_map_host, std::shared_ptr<AllocationTable> table);

  [[nodiscard]] const DeviceInfo& info() const override { return info_; }
  [[nodiscard]] Result<std::unique_ptr<Buffer>> allocate(std::size_t bytes) override;
  [[nodiscard]] Result<std::unique_ptr<Buffer>> allocate_host(std::size_t bytes,
                                                              MemoryKind kind) override;
  [[nodiscard]] Result<std::unique_ptr<Registration>> register_host(void* ptr,
                                                                    std::size_t bytes) override;
  [[nodiscard]] Result<std::unique_ptr<Queue>> create_queue() override;
  [[nodiscard]] Status copy(void* dst, const void* src, std::size_t bytes) override;
  [[nodiscard]] MemoryKind kind_of(const void* ptr) const override;
  [[nodiscard]] Status make_current() override { return select(); }

 private:
  [[nodiscard]] Status select() const;

  DeviceInfo info_;
  bool can_map_host_;
  std::shared_ptr<AllocationTable> table_;
};

}  // namespace acco::dev::detail
