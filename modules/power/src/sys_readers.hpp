// Private: the /sys readers of the host source, one per device class.
#pragma once

#include <vector>

#include "acco/core/sysfs_reader.hpp"
#include "acco/power/sample.hpp"

#include "text_fields.hpp"

namespace acco::power::detail {

// /sys/class/net/<if>/statistics, every interface but lo, each marked physical or not.
[[nodiscard]] std::vector<NetSample> read_net(core::SysfsReader& files);
// /sys/class/infiniband/<dev>/ports/<n>/counters.
[[nodiscard]] std::vector<IbPortCounters> read_ib_ports(core::SysfsReader& files);
// /sys/class/hwmon/hwmon*/temp*_input.
[[nodiscard]] std::vector<HwmonTemperature> read_hwmon(core::SysfsReader& files);
// /sys/class/powercap/intel-rapl:*, packages and their sub-zones.
[[nodiscard]] std::vector<RaplEnergy> read_rapl(core::SysfsReader& files);

}  // namespace acco::power::detail
