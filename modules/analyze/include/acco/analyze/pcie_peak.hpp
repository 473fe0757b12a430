// The peak a device's PCIe link can carry as it is trained now, which the verdicts, /metrics and
// `acco top` divide measured rates by.
#pragma once

#include "acco/power/sample.hpp"

namespace acco::analyze {

// Peak bytes per second of one direction of a device's current PCIe link, from the generation
// and width it reports; 0 when either is unknown. Pure; thread-safe.
[[nodiscard]] double pcie_peak_bytes_per_second(const power::DeviceSample& device);

}  // namespace acco::analyze
