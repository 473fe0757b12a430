#include "proc_readers.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "acco/core/units.hpp"

namespace acco::power::detail {
namespace {

constexpr const char* kStat = "/proc/stat";
constexpr const char* kMeminfo = "/proc/meminfo";
constexpr const char* kDiskstats = "/proc/diskstats";
constexpr const char* kNetDev = "/proc/net/dev";

// meminfo's keys and the names HostSample::memory_bytes gives them.
constexpr std::array<std::pair<std::string_view, const char*>, 7> kMeminfoKeys = {{
    {"MemTotal", "total"},
    {"MemFree", "free"},
    {"MemAvailable", "available"},
    {"Buffers", "buffers"},
    {"Cached", "cached"},
    {"SwapTotal", "swap_total"},
    {"SwapFree", "swap_free"},
}};

}  // namespace

// Documentation/filesystems/proc.rst, "Miscellaneous kernel statistics in /proc/stat": the
// first line sums every CPU, in USER_HZ ticks: user nice system idle iowait irq softirq steal
// guest guest_nice. Kernels before 2.6.11 stop after fewer columns; guest and guest_nice are
// already counted in user and nice, so they are not read.
Result<CpuTimes> read_cpu_times(core::SysfsReader& files, long ticks_per_second) {
  ACCO_ASSIGN_OR_RETURN(const auto text, files.fs().read_file(kStat));
  static constexpr std::array<const char*, 8> kModes = {"user",   "nice", "system",  "idle",
                                                        "iowait", "irq",  "softirq", "steal"};
  constexpr std::size_t kMinModes = 4;
  CpuTimes cpu;
  const auto all = lines(text);
  const auto first = all.empty() ? std::vector<std::string_view>() : words(all.front());
  std::map<std::string, double> seconds;
  bool ok = first.size() > kMinModes && first.front() == "cpu";
  for (std::size_t i = 0; ok && i < kModes.size() && i + 1 < first.size(); ++i) {
    const auto ticks = core::parse_u64(first[i + 1]);
    ok = ticks.has_value();
    if (ok) {
      seconds[kModes[i]] = static_cast<double>(*ticks) / static_cast<double>(ticks_per_second);
    }
  }
  if (ok) {
    cpu.seconds = std::move(seconds);
  } else {
    files.malformed(kStat, "'cpu' and at least 4 numbers", all.empty() ? "" : all.front());
  }
  for (const auto line : all) {
    const auto w = words(line);
    if (!w.empty() && numbered(w.front(), "cpu")) {
      ++cpu.cpus;
    }
  }
  return cpu;
}

// Documentation/filesystems/proc.rst, "meminfo": "MemTotal:       16318276 kB", where kB is
// 1024 bytes. MemAvailable is absent before Linux 3.14.
std::map<std::string, std::uint64_t> read_memory(core::SysfsReader& files) {
  const auto text = files.read(kMeminfo);
  if (!text) {
    return {};
  }
  constexpr std::uint64_t kKibibyte = 1024;
  std::map<std::string, std::uint64_t> bytes;
  std::optional<std::string_view> bad;
  for (const auto line : lines(*text)) {
    const auto colon = line.find(':');
    const auto* const key =
        std::find_if(kMeminfoKeys.begin(), kMeminfoKeys.end(),
                     [&](const auto& k) { return k.first == line.substr(0, colon); });
    if (colon == std::string_view::npos || key == kMeminfoKeys.end()) {
      continue;
    }
    const auto w = words(line.substr(colon + 1));
    const auto value = w.empty() ? std::nullopt : core::parse_u64(w.front());
    if (!value || w.size() != 2 || w[1] != "kB") {
      bad = bad.value_or(line);
      continue;
    }
    bytes[key->second] = *value * kKibibyte;
  }
  if (!bad && !bytes.contains("total")) {
    bad = units::trim(*text);
  }
  if (bad) {
    files.malformed(kMeminfo, "'<Key>: <n> kB' lines with MemTotal", *bad);
  }
  return bytes;
}

// Documentation/accounting/psi.rst: "some avg10=0.00 avg60=0.00 avg300=0.00 total=0" and a
// "full" line alike; avg10 is a percentage over 10 s, total is cumulative microseconds. The
// files are absent before Linux 4.20 and with psi=0. Linux 5.13 added a "full" line to the
// system-wide cpu file that is always zero ("undefined at the system level"), so it is dropped.
std::vector<PressureSample> read_pressure(core::SysfsReader& files) {
  constexpr double kMicrosecondsPerSecond = 1e6;
  constexpr double kPercent = 100.0;
  std::vector<PressureSample> out;
  for (const char* resource : {"cpu", "memory", "io"}) {
    const std::string path = std::string("/proc/pressure/") + resource;
    const auto text = files.read(path);
    if (!text) {
      continue;
    }
    std::optional<std::string_view> bad;
    bool any = false;
    for (const auto line : lines(*text)) {
      const auto w = words(line);
      if (w.empty()) {
        continue;
      }
      any = true;
      std::optional<double> avg10;
      std::optional<std::uint64_t> total;
      for (const auto word : w) {
        if (word.starts_with("avg10=")) {
          const auto v = units::parse_double(word.substr(6));
          avg10 = v ? std::optional<double>(*v) : std::nullopt;
        } else if (word.starts_with("total=")) {
          total = core::parse_u64(word.substr(6));
        }
      }
      if ((w.front() != "some" && w.front() != "full") || !avg10 || !total) {
        bad = bad.value_or(line);
        continue;
      }
      if (std::string_view(resource) == "cpu" && w.front() == "full") {
        continue;
      }
      out.push_back({resource, std::string(w.front()),
                     static_cast<double>(*total) / kMicrosecondsPerSecond, *avg10 / kPercent});
    }
    if (!any) {
      bad = *text;
    }
    if (bad) {
      files.malformed(path, "'some|full avg10=<percent> ... total=<microseconds>' lines", *bad);
    }
  }
  return out;
}

// Documentation/admin-guide/iostats.rst: "major minor name" then fields 1-11 (4.18 adds four
// discard fields, 5.5 two flush fields): 1 reads completed, 3 sectors read, 5 writes completed,
// 7 sectors written, 10 milliseconds spent doing I/O. A sector is 512 bytes whatever the
// device's block size (Documentation/block/stat.rst). Partitions are left out by listing only
// names /sys/block has; there a '/' in a name ("cciss/c0d0") is written '!'.
std::vector<DiskSample> read_disks(core::SysfsReader& files) {
  std::set<std::string> disks;
  for (auto& name : files.list("/sys/block")) {
    if (!name.starts_with("loop") && !name.starts_with("ram")) {
      disks.insert(std::move(name));
    }
  }
  if (disks.empty()) {
    return {};
  }
  const auto text = files.read(kDiskstats);
  if (!text) {
    return {};
  }
  constexpr std::size_t kFields = 11;
  constexpr std::uint64_t kSectorBytes = 512;
  constexpr double kMillisecondsPerSecond = 1e3;
  std::vector<DiskSample> out;
  std::optional<std::string_view> bad;
  for (const auto line : lines(*text)) {
    const auto w = words(line);
    if (w.empty()) {
      continue;
    }
    if (w.size() < 3) {
      bad = bad.value_or(line);
      continue;
    }
    std::string name(w[2]);
    std::string sys_name = name;
    std::replace(sys_name.begin(), sys_name.end(), '/', '!');
    if (!disks.contains(sys_name)) {
      continue;
    }
    std::array<std::uint64_t, kFields + 1> field{};  // 1-based, as the kernel documents them
    bool ok = w.size() >= 3 + kFields;
    for (std::size_t i = 1; ok && i <= kFields; ++i) {
      const auto v = core::parse_u64(w[2 + i]);
      ok = v.has_value();
      field[i] = v.value_or(0);
    }
    if (!ok) {
      bad = bad.value_or(line);
      continue;
    }
    // Documentation/ABI/stable/sysfs-block: slaves/ lists the devices a dm or md device is
    // built on, which also count the I/O that passes through it.
    auto members = files.list("/sys/block/" + sys_name + "/slaves");
    out.push_back({std::move(name), field[3] * kSectorBytes, field[7] * kSectorBytes, field[1],
                   field[5], static_cast<double>(field[10]) / kMillisecondsPerSecond,
                   std::move(members)});
  }
  if (bad) {
    files.malformed(kDiskstats, "'<major> <minor> <name>' and at least 11 numbers", *bad);
  }
  return out;
}

// net/core/net-procfs.c (dev_seq_printf_stats): two header lines, then "<name>:" and 16
// numbers: receive bytes packets errs drop fifo frame compressed multicast, transmit bytes
// packets errs drop fifo colls carrier compressed. Old kernels print no blank after the colon
// ("eth0:1234"), so the name ends at the colon, not at a blank.
std::vector<NetSample> read_proc_net_dev(core::SysfsReader& files) {
  const auto text = files.read(kNetDev);
  if (!text) {
    return {};
  }
  constexpr std::size_t kFields = 16;
  std::vector<NetSample> out;
  std::optional<std::string_view> bad;
  for (const auto line : lines(*text)) {
    const auto colon = line.find(':');
    if (line.find('|') != std::string_view::npos || units::trim(line).empty()) {
      continue;  // the two header lines
    }
    const auto w = colon == std::string_view::npos ? std::vector<std::string_view>()
                                                   : words(line.substr(colon + 1));
    const auto name = units::trim(line.substr(0, colon == std::string_view::npos ? 0 : colon));
    std::array<std::uint64_t, kFields> field{};
    bool ok = !name.empty() && w.size() >= kFields;
    for (std::size_t i = 0; ok && i < kFields; ++i) {
      const auto v = core::parse_u64(w[i]);
      ok = v.has_value();
      field.at(i) = v.value_or(0);
    }
    if (!ok) {
      bad = bad.value_or(line);
      continue;
    }
    if (name == "lo") {
      continue;
    }
    out.push_back({std::string(name), field[0], field[8], field[1], field[9], field[2], field[10],
                   field[3], field[11], false});
  }
  if (bad) {
    files.malformed(kNetDev, "'<interface>:' and 16 numbers", *bad);
  }
  return out;
}

}  // namespace acco::power::detail
