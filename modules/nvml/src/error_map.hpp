// How an NVML return code becomes an acco Error; kept apart from the loader so that the mapping
// is tested without a library.
#pragma once

#include <string_view>

#include "acco/core/result.hpp"

namespace acco::nvml::detail {

inline constexpr std::string_view kGpuLostText = "GPU is lost";

// `code` is an nvmlReturn_t other than NVML_SUCCESS; `text` is nvmlErrorString's answer or null.
// "nvmlDeviceGetPowerUsage: Not Supported (3)".
[[nodiscard]] Error nvml_error(std::string_view call, int code, const char* text);

// An optional entry point the loaded driver does not export: kUnsupported.
[[nodiscard]] Error missing_entry_point(std::string_view call);

}  // namespace acco::nvml::detail
