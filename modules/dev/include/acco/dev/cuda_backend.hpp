// The CUDA backend: real GPUs through the CUDA runtime, linked statically so acco runs where no
// driver is installed. Built whenever the CUDA toolkit is found (ACCO_WITH_CUDA=AUTO).
#pragma once

#include <memory>

#include "acco/core/result.hpp"
#include "acco/dev/device.hpp"

namespace acco::dev {

// True when this build includes the CUDA backend.
[[nodiscard]] bool cuda_compiled();

// kUnsupported when built without CUDA; kUnavailable (with the driver's reason) when no driver
// or no GPU is present.
[[nodiscard]] Result<std::unique_ptr<Backend>> make_cuda_backend();

}  // namespace acco::dev
