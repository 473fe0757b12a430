#include <string>

#include <fmt/format.h>

#include "acco/device/cuda_backend.hpp"

namespace acco::device {

nlohmann::ordered_json cuda_driver_json() {
  const std::string library = cuda_library();
  const auto driver = cuda_driver_info(library);
  nlohmann::ordered_json j;
  j["library"] = library;
  if (driver.has_value()) {
    j["version"] = driver->version;
    j["cuda_version"] = driver->cuda_version;
    j["device_count"] = driver->device_count;
    j["error"] = nullptr;
  } else {
    j["version"] = nullptr;
    j["cuda_version"] = nullptr;
    j["device_count"] = nullptr;
    j["error"] = driver.error().message;
  }
  return j;
}

std::string cuda_driver_text() {
  const auto driver = cuda_driver_info();
  if (!driver.has_value()) {
    return fmt::format("CUDA driver: none usable ({})\n", driver.error().message);
  }
  return fmt::format("CUDA driver: {} (supports CUDA {}), {} device{}, {}\n", driver->version,
                     driver->cuda_version, driver->device_count,
                     driver->device_count == 1 ? "" : "s", driver->library);
}

}  // namespace acco::device
