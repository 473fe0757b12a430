#include "acco/device/host_backend.hpp"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "host/address_space.hpp"
#include "host/host_device.hpp"

namespace acco::device {
namespace {

class HostBackend final : public Backend {
 public:
  explicit HostBackend(std::vector<std::unique_ptr<host::HostDevice>> devices)
      : devices_(std::move(devices)) {}

  [[nodiscard]] std::string name() const override { return "host"; }
  [[nodiscard]] std::vector<Device*> devices() override {
    std::vector<Device*> devices;
    devices.reserve(devices_.size());
    for (const auto& device : devices_) {
      devices.push_back(device.get());
    }
    return devices;
  }

 private:
  std::vector<std::unique_ptr<host::HostDevice>> devices_;
};

std::string link_label(const EmulatedLink& link) {
  if (!link.name.empty()) {
    return link.name;
  }
  return link.bytes_per_second > 0 ? fmt::format("{:g}GB/s", link.bytes_per_second / 1e9)
                                   : std::string("unlimited");
}

Status validate(const HostBackendOptions& options) {
  if (options.devices < 1) {
    return fail(Errc::kInvalidArgument,
                fmt::format("devices must be at least 1, not {}", options.devices));
  }
  if (options.copy_engines < 1) {
    return fail(Errc::kInvalidArgument,
                fmt::format("copy engines must be at least 1, not {}", options.copy_engines));
  }
  if (options.speed_factors.size() > static_cast<std::size_t>(options.devices)) {
    return fail(Errc::kInvalidArgument, fmt::format("{} speed factors for {} devices",
                                                    options.speed_factors.size(), options.devices));
  }
  for (const double factor : options.speed_factors) {
    if (!(factor > 0) || !std::isfinite(factor)) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("speed factor {} is not a positive number", factor));
    }
  }
  if (!(options.link.bytes_per_second >= 0) || !std::isfinite(options.link.bytes_per_second)) {
    return fail(Errc::kInvalidArgument, fmt::format("link bandwidth {} bytes/s is negative",
                                                    options.link.bytes_per_second));
  }
  if (options.link.latency.count() < 0) {
    return fail(Errc::kInvalidArgument, "link latency is negative");
  }
  return {};
}

}  // namespace

Result<std::unique_ptr<Backend>> make_host_backend(const HostBackendOptions& options) {
  ACCO_RETURN_IF_ERROR(validate(options), "host backend");
  auto space = std::make_shared<host::AddressSpace>();
  std::vector<std::unique_ptr<host::HostDevice>> devices;
  for (int i = 0; i < options.devices; ++i) {
    DeviceInfo info;
    info.index = i;
    info.name = fmt::format("host {} ({})", i, link_label(options.link));
    info.backend = "host";
    info.memory_bytes = options.memory_bytes_per_device;
    info.link_bytes_per_second = options.link.bytes_per_second;
    info.link_latency = options.link.latency;
    info.copy_engines = options.copy_engines;
    const auto index = static_cast<std::size_t>(i);
    info.speed_factor = index < options.speed_factors.size() ? options.speed_factors[index] : 1.0;
    devices.push_back(std::make_unique<host::HostDevice>(std::move(info), options.link, space));
  }
  return std::make_unique<HostBackend>(std::move(devices));
}

}  // namespace acco::device
