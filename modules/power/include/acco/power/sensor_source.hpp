// The sources the sampler reads. A device source answers one DeviceSample per accelerator it
// knows; the host source answers one HostSample. read() fails only when the whole source is
// unusable (NVML's init failed); a single device that fails is a sample with `lost` set, and the
// read goes on with the others.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/power/sample.hpp"

namespace acco::power {

class SensorSource {
 public:
  virtual ~SensorSource() = default;
  [[nodiscard]] virtual std::string name() const = 0;  // "nvml", "simulated"
  [[nodiscard]] virtual Result<std::vector<DeviceSample>> read() = 0;
};

// Every source's samples in order; a source whose read fails adds "<name>: <message>" to
// `errors` and the others are still read.
[[nodiscard]] std::vector<DeviceSample> read_all(
    const std::vector<std::unique_ptr<SensorSource>>& sources, std::vector<std::string>& errors);

class HostSource {
 public:
  virtual ~HostSource() = default;
  [[nodiscard]] virtual Result<HostSample> read() = 0;
};

}  // namespace acco::power
