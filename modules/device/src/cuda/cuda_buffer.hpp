// Buffers and registrations of the CUDA backend. Each one records itself in the backend's
// AllocationTable while it lives, so kind_of and the copy checks know its kind and extent.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>

#include "acco/core/result.hpp"
#include "acco/device/device.hpp"

#include "cuda/allocation_table.hpp"
#include "cuda/primary_context.hpp"

namespace acco::device::detail {

// Device memory (cuMemAlloc) in `context`'s device, which the caller has made current.
// kDeviceError when the driver refuses.
[[nodiscard]] Result<std::unique_ptr<Buffer>> allocate_device_buffer(
    std::shared_ptr<AllocationTable> table, std::shared_ptr<const PrimaryContext> context,
    std::size_t bytes);

// Host memory of kind kPageable (aligned_alloc), kPinned (cuMemHostAlloc, portable) or kMapped
// (cuMemHostAlloc, portable and mapped), page-aligned, preferring NUMA node `numa_node` (-1: no
// preference). The caller has made `context` current.
[[nodiscard]] Result<std::unique_ptr<Buffer>> allocate_host_buffer(
    std::shared_ptr<AllocationTable> table, std::shared_ptr<const PrimaryContext> context,
    std::size_t bytes, MemoryKind kind, int numa_node);

// cuMemHostRegister (portable) of user memory, timed; the caller has made `context` current.
// kInvalidArgument when it overlaps a registration.
[[nodiscard]] Result<std::unique_ptr<Registration>> register_host_memory(
    std::shared_ptr<AllocationTable> table, std::shared_ptr<const PrimaryContext> context,
    void* ptr, std::size_t bytes);

}  // namespace acco::device::detail
