#include "cuda/cuda_error.hpp"

#include <string>

namespace acco::dev::detail {

Error cuda_error(std::string_view call, cudaError_t code, Errc errc) {
  static_cast<void>(cudaGetLastError());
  return Error{errc, std::string(call) + ": " + cudaGetErrorString(code)};
}

Status cuda_check(std::string_view call, cudaError_t code) {
  if (code == cudaSuccess) {
    return {};
  }
  return tl::unexpected(cuda_error(call, code));
}

}  // namespace acco::dev::detail
