#include "error_map.hpp"

#include <fmt/format.h>

#include "nvml_api.hpp"

namespace acco::nvml::detail {
namespace {

Errc code_for(int code) {
  switch (static_cast<nvmlReturn_t>(code)) {
    case NVML_ERROR_NOT_SUPPORTED:
      return Errc::kUnsupported;
    case NVML_ERROR_INVALID_ARGUMENT:
      return Errc::kInvalidArgument;
    case NVML_ERROR_NOT_FOUND:
      return Errc::kNotFound;
    // The library or driver is not usable here: the caller should look elsewhere.
    case NVML_ERROR_UNINITIALIZED:
    case NVML_ERROR_NO_PERMISSION:
    case NVML_ERROR_DRIVER_NOT_LOADED:
    case NVML_ERROR_LIBRARY_NOT_FOUND:
    case NVML_ERROR_FUNCTION_NOT_FOUND:
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return Errc::kUnavailable;
    default:
      return Errc::kDeviceError;
  }
}

}  // namespace

Error nvml_error(std::string_view call, int code, const char* text) {
  // The real library's text for GPU_IS_LOST is this too; fixing it lets is_gpu_lost() rely on it
  // whatever a driver's nvmlErrorString answers.
  if (code == NVML_ERROR_GPU_IS_LOST) {
    return Error{Errc::kDeviceError, fmt::format("{}: {} ({})", call, kGpuLostText, code)};
  }
  return Error{code_for(code),
               fmt::format("{}: {} ({})", call, text != nullptr ? text : "unknown error", code)};
}

Error missing_entry_point(std::string_view call) {
  return Error{Errc::kUnsupported, fmt::format("{}: not exported by this driver", call)};
}

}  // namespace acco::nvml::detail
