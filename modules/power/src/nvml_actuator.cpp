// NvmlActuator: the governor's power limit and SM clock locks applied through acco::nvml.
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "acco/nvml/library.hpp"
#include "acco/power/actuator.hpp"

namespace acco::power {
namespace {

using nvml::Device;
using nvml::Library;

constexpr double kMilliwattsPerWatt = 1e3;
constexpr double kHertzPerMegahertz = 1e6;

// `value` rounded to a whole unsigned int, or nullopt when NVML cannot take it (negative, not a
// number, past 32 bits).
std::optional<unsigned int> to_unsigned(double value) {
  const double rounded = std::round(value);
  if (!(rounded >= 0) || rounded > std::numeric_limits<unsigned int>::max()) {
    return std::nullopt;
  }
  return static_cast<unsigned int>(rounded);
}

// The GPU map is filled once and only read afterwards; every NVML call is serialised by
// acco::nvml, so the actuator may be used from several threads.
class NvmlActuator final : public Actuator {
 public:
  NvmlActuator(std::shared_ptr<Library> nvml, std::map<std::string, Device> gpus)
      : nvml_(std::move(nvml)), gpus_(std::move(gpus)) {}

  [[nodiscard]] std::string name() const override { return "nvml"; }

  [[nodiscard]] Status set_power_limit(const std::string& uuid, double watts) override {
    const std::string what = fmt::format("set power limit of {} to {:g} W", uuid, watts);
    ACCO_ASSIGN_OR_RETURN(const Device device, find(uuid), what);
    const std::optional<unsigned int> milliwatts = to_unsigned(watts * kMilliwattsPerWatt);
    if (!milliwatts.has_value()) {
      return fail(Errc::kInvalidArgument, what + ": not a power limit in milliwatts");
    }
    ACCO_RETURN_IF_ERROR(nvml_->set_power_management_limit_milliwatts(device, *milliwatts), what);
    return {};
  }

  [[nodiscard]] Status lock_sm_clocks(const std::string& uuid, double min_hertz,
                                      double max_hertz) override {
    const std::string what =
        fmt::format("lock SM clocks of {} to [{:g}, {:g}] MHz", uuid,
                    min_hertz / kHertzPerMegahertz, max_hertz / kHertzPerMegahertz);
    ACCO_ASSIGN_OR_RETURN(const Device device, find(uuid), what);
    const std::optional<unsigned int> min_mhz = to_unsigned(min_hertz / kHertzPerMegahertz);
    const std::optional<unsigned int> max_mhz = to_unsigned(max_hertz / kHertzPerMegahertz);
    if (!min_mhz.has_value() || !max_mhz.has_value()) {
      return fail(Errc::kInvalidArgument, what + ": not a clock range in MHz");
    }
    ACCO_RETURN_IF_ERROR(nvml_->set_gpu_locked_clocks_mhz(device, *min_mhz, *max_mhz), what);
    return {};
  }

  [[nodiscard]] Status unlock_sm_clocks(const std::string& uuid) override {
    const std::string what = fmt::format("unlock SM clocks of {}", uuid);
    ACCO_ASSIGN_OR_RETURN(const Device device, find(uuid), what);
    ACCO_RETURN_IF_ERROR(nvml_->reset_gpu_locked_clocks(device), what);
    return {};
  }

 private:
  [[nodiscard]] Result<Device> find(const std::string& uuid) const {
    const auto it = gpus_.find(uuid);
    if (it == gpus_.end()) {
      return fail(Errc::kNotFound, "no NVML GPU has this uuid");
    }
    return it->second;
  }

  std::shared_ptr<Library> nvml_;
  std::map<std::string, Device> gpus_;
};

}  // namespace

Result<std::unique_ptr<Actuator>> make_nvml_actuator(const std::string& library) {
  ACCO_ASSIGN_OR_RETURN(std::shared_ptr<Library> nvml, Library::open(library), "nvml actuator");
  ACCO_ASSIGN_OR_RETURN(const unsigned int count, nvml->device_count(), "nvml actuator");
  std::map<std::string, Device> gpus;
  for (unsigned int i = 0; i < count; ++i) {
    // A GPU lost at creation, or one without a uuid, cannot be addressed: its uuid is then
    // simply unknown (kNotFound), as the sensor source reports it lost.
    const Result<Device> device = nvml->device(i);
    if (!device.has_value()) {
      continue;
    }
    Result<std::string> uuid = nvml->uuid(*device);
    if (uuid.has_value() && !uuid->empty()) {
      gpus.emplace(*std::move(uuid), *device);
    }
  }
  return std::make_unique<NvmlActuator>(std::move(nvml), std::move(gpus));
}

}  // namespace acco::power
