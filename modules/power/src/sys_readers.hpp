// Private: the /sys readers of the host source, one per device class.
#pragma once

#include <vector>

#include "acco/power/sample.hpp"

#include "host_files.hpp"

namespace acco::power::detail {

// /sys/class/net/<if>/statistics, every interface but lo.
[[nodiscard]] std::vector<NetSample> read_net(HostFiles& files);
// /sys/class/infiniband/<dev>/ports/<n>/counters.
[[nodiscard]] std::vector<IbPortCounters> read_ib_ports(HostFiles& files);
// /sys/class/hwmon/hwmon*/temp*_input.
[[nodiscard]] std::vector<HwmonTemperature> read_hwmon(HostFiles& files);
// /sys/class/powercap/intel-rapl:*, packages and their sub-zones.
[[nodiscard]] std::vector<RaplEnergy> read_rapl(HostFiles& files);

}  // namespace acco::power::detail
