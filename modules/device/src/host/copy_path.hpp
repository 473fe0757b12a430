// How the host backend moves a copy, decided from the memory kinds of its two ends the way a CUDA
// driver decides it: DMA at link speed for device-visible host memory, staging through a pinned
// bounce buffer for pageable memory, memcpy where no link is crossed.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>

#include "acco/core/result.hpp"

#include "host/address_space.hpp"
#include "host/device_core.hpp"

namespace acco::device::host {

struct CopyPlan {
  enum class Path {
    kMemcpy,          // host to host, or within one device
    kToDevice,        // DMA from pinned, registered or mapped memory
    kToHost,          // DMA into pinned, registered or mapped memory
    kStagedToDevice,  // pageable source, chunk by chunk through the bounce buffer
    kStagedToHost,    // pageable destination, likewise
    kBetweenDevices,  // device memory of two devices, through the host
  };
  Path path = Path::kMemcpy;
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t bytes = 0;
  std::shared_ptr<DeviceCore> src_device;  // set when src is device memory
  std::shared_ptr<DeviceCore> dst_device;  // set when dst is device memory
};

// kInvalidArgument for null pointers, overlapping ranges, or a range that runs past the end of a
// device, pinned or mapped allocation. A range running past a registration is pageable memory.
// bytes > 0.
[[nodiscard]] Result<CopyPlan> plan_copy(const AddressSpace& space, void* dst, const void* src,
                                         std::size_t bytes);

// Runs on a queue's worker. `bounce` is the queue's own pinned staging buffer. `source_consumed`
// is called once the source will not be read again (possibly before the copy completes).
void run_copy(const CopyPlan& plan, std::span<std::byte> bounce,
              const std::function<void()>& source_consumed);

}  // namespace acco::device::host
