// CUDA runtime errors as acco errors: "cudaMalloc: out of memory" with kDeviceError. The only
// header besides the backend's sources that includes cuda_runtime.h; private to the backend.
#pragma once

#include <string_view>

#include <cuda_runtime.h>

#include "acco/core/result.hpp"

namespace acco::dev::detail {

// "<call>: <cudaGetErrorString(code)>". Also clears the calling thread's last-error slot so a
// non-sticky failure handled here does not surface again in an unrelated cudaGetLastError().
[[nodiscard]] Error cuda_error(std::string_view call, cudaError_t code,
                               Errc errc = Errc::kDeviceError);

// Success for cudaSuccess, else cuda_error(call, code).
[[nodiscard]] Status cuda_check(std::string_view call, cudaError_t code);

}  // namespace acco::dev::detail
