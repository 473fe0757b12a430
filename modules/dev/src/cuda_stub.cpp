// The CUDA backend's factory in a build without the CUDA toolkit (ACCO_WITH_CUDA=OFF, or AUTO
// where none was found).
#include "acco/dev/cuda_backend.hpp"

namespace acco::dev {

bool cuda_compiled() {
  return false;
}

Result<std::unique_ptr<Backend>> make_cuda_backend() {
  return fail(Errc::kUnsupported, "cuda: this build of acco has no CUDA backend (ACCO_WITH_CUDA)");
}

}  // namespace acco::dev
