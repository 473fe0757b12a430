#include "acco/power/sensor_source.hpp"

#include <fmt/format.h>

namespace acco::power {

std::vector<DeviceSample> read_all(const std::vector<std::unique_ptr<SensorSource>>& sources,
                                   std::vector<std::string>& errors) {
  std::vector<DeviceSample> out;
  for (const auto& source : sources) {
    auto samples = source->read();
    if (!samples) {
      errors.push_back(fmt::format("{}: {}", source->name(), samples.error().message));
      continue;
    }
    out.insert(out.end(), samples->begin(), samples->end());
  }
  return out;
}

}  // namespace acco::power
