// Queues and events of the CUDA backend: a Queue is one non-blocking stream, an Event one CUDA
// event recorded in it.
#pragma once

#include <memory>

#include "acco/core/result.hpp"
#include "acco/device/device.hpp"

#include "cuda/allocation_table.hpp"
#include "cuda/primary_context.hpp"

namespace acco::device::detail {

// A stream in `context`, which the caller has made current. kDeviceError when the driver refuses.
[[nodiscard]] Result<std::unique_ptr<Queue>> create_cuda_queue(
    std::shared_ptr<const PrimaryContext> context, std::shared_ptr<const AllocationTable> table);

}  // namespace acco::device::detail
