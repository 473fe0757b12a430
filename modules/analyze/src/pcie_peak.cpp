#include "acco/analyze/pcie_peak.hpp"

#include "acco/topo/link_model.hpp"

namespace acco::analyze {

double pcie_peak_bytes_per_second(const power::DeviceSample& device) {
  if (!device.pcie_gen_current || !device.pcie_width_current) {
    return 0;
  }
  return topo::link_bytes_per_second(
      {topo::pcie_speed_of_generation(*device.pcie_gen_current), *device.pcie_width_current});
}

}  // namespace acco::analyze
