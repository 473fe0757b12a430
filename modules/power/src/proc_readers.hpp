// Private: the /proc readers of the host source, one per file family.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/core/sysfs_reader.hpp"
#include "acco/power/sample.hpp"

#include "text_fields.hpp"

namespace acco::power::detail {

// /proc/stat. Fails only when the file cannot be read; a first line that does not parse is an
// issue and leaves `seconds` empty.
[[nodiscard]] Result<CpuTimes> read_cpu_times(core::SysfsReader& files, long ticks_per_second);
// /proc/meminfo in bytes, keyed as HostSample::memory_bytes.
[[nodiscard]] std::map<std::string, std::uint64_t> read_memory(core::SysfsReader& files);
// /proc/pressure/{cpu,memory,io}.
[[nodiscard]] std::vector<PressureSample> read_pressure(core::SysfsReader& files);
// /proc/diskstats, whole disks only (those under /sys/block), without loop and ram devices;
// each with the devices it is built on (/sys/block/<disk>/slaves).
[[nodiscard]] std::vector<DiskSample> read_disks(core::SysfsReader& files);
// /proc/net/dev, every interface but lo, none known to be physical: the host source's network
// where /sys/class/net is absent (a container without sysfs).
[[nodiscard]] std::vector<NetSample> read_proc_net_dev(core::SysfsReader& files);

}  // namespace acco::power::detail
