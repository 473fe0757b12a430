// Buffers and registrations of the CUDA backend. Each one records itself in the backend's
// AllocationTable while it lives, so kind_of and the copy checks know its kind and extent.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>

#include "acco/core/result.hpp"
#include "acco/dev/device.hpp"

#include "cuda/allocation_table.hpp"

namespace acco::dev::detail {

// Device memory (cudaMalloc) on device `device`. kDeviceError when the runtime refuses.
[[nodiscard]] Result<std::unique_ptr<Buffer>> allocate_device_buffer(
    std::shared_ptr<AllocationTable> table, int device, std::size_t bytes);

// Host memory of kind kPageable (aligned_alloc), kPinned (cudaHostAlloc, portable) or kMapped
// (cudaHostAlloc, portable and mapped), page-aligned, preferring NUMA node `numa_node` (-1: no
// preference). The caller has made its device current.
[[nodiscard]] Result<std::unique_ptr<Buffer>> allocate_host_buffer(
    std::shared_ptr<AllocationTable> table, std::size_t bytes, MemoryKind kind, int numa_node);

// cudaHostRegister (portable) of user memory, timed. kInvalidArgument when it overlaps a
// registration.
[[nodiscard]] Result<std::unique_ptr<Registration>> register_host_memory(
    std::shared_ptr<AllocationTable> table, void* ptr, std::size_t bytes);

}  // namespace acco::dev::detail
