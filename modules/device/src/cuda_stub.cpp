// The CUDA backend's factory in a build configured with ACCO_WITH_CUDA=OFF.
#include <cstdlib>

#include "acco/device/cuda_backend.hpp"

namespace acco::device {

bool cuda_compiled() {
  return false;
}

std::string cuda_library() {
  const char* named = std::getenv("ACCO_CUDA_LIBRARY");  // NOLINT(concurrency-mt-unsafe)
  return named != nullptr && *named != '\0' ? named : "libcuda.so.1";
}

Result<CudaDriverInfo> cuda_driver_info(const std::string& /*library*/) {
  return fail(Errc::kUnsupported,
              "cuda: this build of acco has no CUDA backend (ACCO_WITH_CUDA=OFF)");
}

Result<std::unique_ptr<Backend>> make_cuda_backend(const std::string& /*library*/) {
  return fail(Errc::kUnsupported,
              "cuda: this build of acco has no CUDA backend (ACCO_WITH_CUDA=OFF)");
}

}  // namespace acco::device
