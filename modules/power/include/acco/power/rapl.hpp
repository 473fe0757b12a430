// CPU packages as governed devices: RAPL's package zones under /sys/class/powercap read as one
// DeviceSample each, and their long-term power limit set through an Actuator, so the governor
// treats a socket with the same rules as a GPU. Intel and AMD kernels both name the zones
// intel-rapl:N; the temperature comes from hwmon (coretemp's "Package id N", k10temp's Tctl).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "acco/core/fs.hpp"
#include "acco/power/actuator.hpp"
#include "acco/power/sensor_source.hpp"

namespace acco::power {

// The lowest long-term limit acco reports (power_limit_min_watts) and sets: this share of
// constraint_0_max_power_uw (the package's TDP). RAPL itself reports no minimum (intel_rapl has
// no constraint_0_min_power_uw); below about a quarter of TDP the uncore and idle cores alone
// come near the limit, so RAPL holds it only by running every core at its lowest frequency,
// which starves the host threads feeding the accelerators.
inline constexpr double kRaplFloorShareOfMax = 0.25;

// A source of one DeviceSample per package zone, /sys/class/powercap/intel-rapl:N whose `name`
// starts with "package" (sub-zones intel-rapl:N:M, psys and intel-rapl-mmio are not devices),
// read through `fs`, which must outlive it. `clock` gives nanoseconds since the Unix epoch for
// each read (empty: std::chrono::system_clock).
//
// Per sample: device = the zone's name ("package-0"), uuid = the zone directory ("intel-rapl:0",
// the actuator's address), model "RAPL package", source "rapl".
// - energy_joules: energy_uj, cumulative; power_watts: its change over the time since the
//   previous read of the same zone (absent on the first read), a counter that went back counted
//   as one wrap at max_energy_range_uj (absent when that file cannot be read). A counter wraps
//   every few minutes at full power (262 kJ at 350 W: 12 minutes), so read more often than that.
//   Since Linux 5.10 only root may read energy_uj: the sample then has no energy and no power but
//   still its limits.
// - power_limit_requested_watts: constraint_0_power_limit_uw, provided constraint_0_name (when
//   present) is "long_term"; power_limit_enforced_watts: the same, absent when the zone's
//   `enabled` is 0 (the limit is then not applied).
// - power_limit_max_watts: constraint_0_max_power_uw when present and non-zero;
//   power_limit_min_watts: kRaplFloorShareOfMax of it.
// - power_limit_default_watts: RAPL has no default limit, so this is the limit this source saw
//   when it first read the zone: the target a governor restores. A source created after
//   someone lowered the limit restores that lowered limit.
// - temperature_gpu_celsius: the hwmon coretemp sensor labelled "Package id N" for zone
//   "package-N" (temp*_max -> threshold_gpu_max_celsius, temp*_crit ->
//   threshold_slowdown_celsius); on AMD, k10temp's Tctl (one per socket, with no package number
//   to match) for package-0 only when the machine has one package zone and one Tctl. Die zones
//   ("package-0-die-1") get no temperature.
// Nothing is a sentinel: what cannot be read is nullopt; a file that holds no number is left out
// and counted in dropped_readings. read() fails (Fs errors) only when /sys/class/powercap
// exists but cannot be listed; without it (a VM) it answers no samples.
// Not thread-safe: one read() at a time (it keeps the previous energy of each zone).
[[nodiscard]] std::unique_ptr<SensorSource> make_rapl_source(
    const core::Fs& fs, std::function<std::int64_t()> clock = {});

// An actuator over <root>/sys/class/powercap ("/" for this machine; a sysroot in tests).
// set_power_limit(uuid, watts) writes llround(watts * 1e6) microwatts to
// <root>/sys/class/powercap/<uuid>/constraint_0_power_limit_uw with one plain write(2), as sysfs
// expects. The kernel rounds to the package's power unit (1/8 W on most parts): read the limit
// back through the source. Root is needed. Errors, one line naming the zone and the file:
// - kNotFound: no package zone with that uuid;
// - kInvalidArgument: watts outside [kRaplFloorShareOfMax * max, max] with max from
//   constraint_0_max_power_uw (nothing written);
// - kUnsupported: the zone has no long-term constraint_0, or no max_power_uw to bound it;
// - kUnavailable: EACCES/EPERM/EROFS (not root, or the limit is locked by the firmware), or a
//   zone whose `enabled` is 0 refusing the write;
// - kDeviceError: any other failed write.
// lock_sm_clocks and unlock_sm_clocks are kUnsupported: RAPL zones have no SM clocks.
// Keeps no state: its methods may be called from several threads at once.
[[nodiscard]] std::unique_ptr<Actuator> make_rapl_actuator(std::string root = "/");

}  // namespace acco::power
