// The host half of the sensors: CPU times, memory, pressure stall information, disks, network,
// InfiniBand port counters, hwmon temperatures and RAPL energy, read from /proc and /sys through
// a core::Fs, so a generated or recorded sysroot reads exactly as the live machine would.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "acco/core/fs.hpp"
#include "acco/power/sensor_source.hpp"

namespace acco::power {

struct HostSourceOptions {
  // USER_HZ, the unit of /proc/stat's times. The kernel fixes it at 100 on every architecture
  // acco builds for; a live root can pass clock_ticks_per_second() to ask sysconf. Must be > 0.
  long ticks_per_second = 100;
  // Nanoseconds since the Unix epoch, stamped on each sample; empty: std::chrono::system_clock.
  std::function<std::int64_t()> clock;
};

// sysconf(_SC_CLK_TCK), or 100 when sysconf cannot say.
[[nodiscard]] long clock_ticks_per_second();

// A HostSource over `fs`, which must outlive it. read() is not thread-safe (one read at a time).
// read() fails (kNotFound, kUnavailable, kInvalidArgument as Fs::read_file) only when /proc/stat
// cannot be read. Any other file that is absent gives an empty list or map entry; a file that
// exists but cannot be read or parsed adds one line to HostSample::issues and the read goes on.
// A RAPL zone whose energy_uj only root may read (Linux 5.10 and later) is left out without an
// issue: that is how every non-root reader sees it.
[[nodiscard]] std::unique_ptr<HostSource> make_host_source(const core::Fs& fs,
                                                           HostSourceOptions options = {});

}  // namespace acco::power
