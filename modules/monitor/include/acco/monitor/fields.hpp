// The numeric readings of a DeviceSample by name ("power_watts"), with their units: the one list
// the JSON API's series, the recorder and the analyzer share.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "acco/power/sample.hpp"

namespace acco::monitor {

struct DeviceField {
  std::string_view name;  // the DeviceSample member's name
  std::string_view unit;  // "celsius", "watts", "ratio", ...
  std::optional<double> (*get)(const power::DeviceSample&);
};

[[nodiscard]] const std::vector<DeviceField>& device_fields();
// nullptr when no field has that name.
[[nodiscard]] const DeviceField* find_device_field(std::string_view name);

}  // namespace acco::monitor
