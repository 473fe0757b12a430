// The host between two samples as a person reads it: CPU busy share, memory used of total, and
// the bytes per second the network interfaces and the disks moved, each summed once: loopback,
// virtual interfaces over physical ones, and dm or md devices over their disks are left out so
// no byte counts twice. The dashboard, the JSON API's host series and the series store share it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "acco/power/sample.hpp"

namespace acco::monitor {

struct HostRates {
  int cpus = 0;
  std::optional<double> cpu_busy_ratio;     // 0-1 since the previous sample (not idle, not iowait)
  std::optional<double> memory_used_bytes;  // MemTotal - MemAvailable
  std::optional<double> memory_total_bytes;
  // Summed over `interfaces`; nullopt without a previous sample or without an interface.
  std::optional<double> network_receive_bytes_per_second;
  std::optional<double> network_transmit_bytes_per_second;
  // Summed over `disks`; nullopt without a previous sample or without a disk.
  std::optional<double> disk_read_bytes_per_second;
  std::optional<double> disk_written_bytes_per_second;
  // What the sums cover and what they leave out, with why ("docker0: virtual").
  std::vector<std::string> interfaces;
  std::vector<std::string> interfaces_left_out;
  std::vector<std::string> disks;
  std::vector<std::string> disks_left_out;
  bool operator==(const HostRates&) const = default;
};

// The rates from `previous` to `now`; `previous` may be null (the first sample: no CPU share
// and no rates, the rest as read). Interfaces counted: the physical ones (not lo), or, when
// there are none (a container's veth, /proc/net/dev), every one but lo. Disks counted: those
// not built on other block devices (no members) and not memory (zram). An interface or disk
// absent from `previous`, or whose counters went backwards (a reset), is left out of that
// round's rate. Pure; thread-safe.
[[nodiscard]] HostRates host_rates(const power::HostSample& now, const power::HostSample* previous);

// The host readings served as series under device "host" (/api/v1/series, the store).
struct HostField {
  std::string_view name;  // "host_network_receive_bytes_per_second"
  std::string_view unit;  // "ratio", "bytes", "bytes_per_second"
  std::optional<double> HostRates::*value;
};
[[nodiscard]] const std::vector<HostField>& host_fields();
// nullptr when no host field has that name.
[[nodiscard]] const HostField* find_host_field(std::string_view name);

}  // namespace acco::monitor
