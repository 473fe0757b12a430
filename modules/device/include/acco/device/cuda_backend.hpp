// The CUDA backend: real GPUs through the CUDA driver API. The driver (libcuda.so.1) is loaded at
// run time, so every build of acco has the backend and runs where no driver is installed; only
// ACCO_WITH_CUDA=OFF leaves it out.
#pragma once

#include <memory>
#include <string>

#include "acco/core/result.hpp"
#include "acco/device/device.hpp"

namespace acco::device {

// True when this build includes the CUDA backend.
[[nodiscard]] bool cuda_compiled();

// The driver library the backend loads by default: $ACCO_CUDA_LIBRARY when set and not empty
// (a name the dynamic loader searches for, or a path), else "libcuda.so.1".
[[nodiscard]] std::string cuda_library();

// What the loaded driver says about itself.
struct CudaDriverInfo {
  std::string library;  // as named to the loader
  // cuDriverGetVersion: the highest CUDA version the driver supports, 1000 * major + 10 * minor
  // (12080 is CUDA 12.8).
  int version = 0;
  std::string cuda_version;  // "12.8"
  int device_count = 0;
  bool operator==(const CudaDriverInfo&) const = default;
};

// Loads and initialises the driver `library`. kUnsupported when built without CUDA;
// kUnavailable naming the reason when the library cannot be loaded (no NVIDIA driver), is the
// CUDA toolkit's stub library, lacks an entry point acco needs (an old driver: the message names
// the entry point and the driver's version) or finds no device.
[[nodiscard]] Result<CudaDriverInfo> cuda_driver_info(const std::string& library = cuda_library());

// The backend on driver `library`: one Device per GPU the driver sees (CUDA_VISIBLE_DEVICES
// applies), each in its primary context. Errors as cuda_driver_info. Thread-safe.
[[nodiscard]] Result<std::unique_ptr<Backend>> make_cuda_backend(
    const std::string& library = cuda_library());

}  // namespace acco::device
