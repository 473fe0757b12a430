// What the governor's decisions are applied through: one Actuator per kind of device (NVML GPUs,
// simulated devices, RAPL packages), addressed by the uuid the device's samples carry. An
// actuator only changes settings; what the device reports afterwards comes back through its
// SensorSource, and the controller (controller.hpp) decides whether a change may be made at all.
#pragma once

#include <memory>
#include <string>

#include "acco/core/fs.hpp"
#include "acco/core/result.hpp"

namespace acco::power {

// Errors every method returns, one line naming the device:
// - kInvalidArgument: a limit outside the device's [min, max] (nothing changed);
// - kUnavailable: no permission (not root, or the driver refuses changes);
// - kDeviceError: the device is lost or the call failed on it;
// - kNotFound: no device with that uuid;
// - kUnsupported: the device has no such control (locked clocks before Volta, no RAPL limit).
class Actuator {
 public:
  virtual ~Actuator() = default;
  [[nodiscard]] virtual std::string name() const = 0;  // "nvml", "simulated", "rapl"
  // The power management limit (nvmlDeviceSetPowerManagementLimit, a RAPL long-term limit).
  [[nodiscard]] virtual Status set_power_limit(const std::string& uuid, double watts) = 0;
  // Holds the SM clock within [min, max] hertz (nvmlDeviceSetGpuLockedClocks).
  [[nodiscard]] virtual Status lock_sm_clocks(const std::string& uuid, double min_hertz,
                                              double max_hertz) = 0;
  // nvmlDeviceResetGpuLockedClocks.
  [[nodiscard]] virtual Status unlock_sm_clocks(const std::string& uuid) = 0;
};

// NVML's actuator over `library` ("libnvidia-ml.so.1" or a path): its own session, devices found
// by UUID once at creation. Watts are rounded to NVML's milliwatts, hertz to MHz.
// kUnavailable when the library cannot be loaded or initialised.
[[nodiscard]] Result<std::unique_ptr<Actuator>> make_nvml_actuator(const std::string& library);

}  // namespace acco::power
