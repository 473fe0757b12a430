#include "sys_readers.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "acco/core/units.hpp"

namespace acco::power::detail {
namespace {

std::string trimmed(const std::optional<std::string>& text) {
  return text ? std::string(units::trim(*text)) : std::string();
}

}  // namespace

// Documentation/ABI/testing/sysfs-class-net-statistics. Entries without statistics/ (the
// bonding driver's bonding_masters file) are not interfaces.
std::vector<NetSample> read_net(core::SysfsReader& files) {
  const std::string base = "/sys/class/net";
  std::vector<NetSample> out;
  for (const auto& name : files.list(base)) {
    const std::string stats = fmt::format("{}/{}/statistics/", base, name);
    if (name == "lo" || !files.exists(stats)) {
      continue;
    }
    const auto get = [&](const char* counter) {
      return files.counter(stats + counter).value_or(0);
    };
    // A physical interface (PCI, USB, virtio) links to its device; virtual ones live under
    // /sys/devices/virtual/net and have none.
    const bool physical = files.exists(fmt::format("{}/{}/device", base, name));
    out.push_back({name, get("rx_bytes"), get("tx_bytes"), get("rx_packets"), get("tx_packets"),
                   get("rx_errors"), get("tx_errors"), get("rx_dropped"), get("tx_dropped"),
                   physical});
  }
  return out;
}

// Documentation/ABI/stable/sysfs-class-infiniband: port_rcv_data and port_xmit_data count
// octets divided by 4 (the IBTA's PortRcvData and PortXmitData are in 32-bit words).
std::vector<IbPortCounters> read_ib_ports(core::SysfsReader& files) {
  const std::string base = "/sys/class/infiniband";
  constexpr std::uint64_t kBytesPerWord = 4;
  std::vector<IbPortCounters> out;
  for (const auto& device : files.list(base)) {
    const std::string ports = fmt::format("{}/{}/ports", base, device);
    for (const auto& port : files.list(ports)) {
      const auto number = units::parse_int(port);
      if (!number || *number < 1 || *number > 255) {
        files.malformed(fmt::format("{}/{}", ports, port), "a port number 1-255", port);
        continue;
      }
      const std::string counters = fmt::format("{}/{}/counters/", ports, port);
      const auto get = [&](const char* counter) { return files.counter(counters + counter); };
      const auto words_to_bytes = [](std::optional<std::uint64_t> words) {
        return words ? std::optional<std::uint64_t>(*words * kBytesPerWord) : std::nullopt;
      };
      out.push_back({device, static_cast<int>(*number), words_to_bytes(get("port_rcv_data")),
                     words_to_bytes(get("port_xmit_data")), get("port_rcv_packets"),
                     get("port_xmit_packets"), get("symbol_error"), get("link_downed"),
                     get("port_rcv_errors")});
    }
  }
  return out;
}

// Documentation/hwmon/sysfs-interface.rst: temp[1-*]_input in millidegrees Celsius (signed),
// temp[1-*]_label optional. Drivers from before Linux 3.x put the attributes in the hwmon
// device's parent, hwmonN/device/.
std::vector<HwmonTemperature> read_hwmon(core::SysfsReader& files) {
  const std::string base = "/sys/class/hwmon";
  constexpr double kMillidegrees = 1000.0;
  std::vector<HwmonTemperature> out;
  for (const auto& hwmon : files.list(base)) {
    std::string dir = fmt::format("{}/{}", base, hwmon);
    if (!files.exists(dir + "/name") && files.exists(dir + "/device/name")) {
      dir += "/device";
    }
    const std::string chip = trimmed(files.read(dir + "/name"));
    std::vector<int> sensors;
    for (const auto& entry : files.list(dir)) {
      if (entry.ends_with("_input")) {
        if (const auto n = numbered(entry.substr(0, entry.size() - 6), "temp")) {
          sensors.push_back(*n);
        }
      }
    }
    std::sort(sensors.begin(), sensors.end());
    for (const int n : sensors) {
      const std::string input = dir + "/temp" + std::to_string(n) + "_input";
      const auto text = files.read(input);
      if (!text) {
        continue;
      }
      const auto millidegrees = units::parse_int(*text);
      if (!millidegrees) {
        files.malformed(input, "millidegrees Celsius", *text);
        continue;
      }
      std::string label = trimmed(files.read(dir + "/temp" + std::to_string(n) + "_label"));
      if (label.empty()) {
        label = "temp" + std::to_string(n);
      }
      out.push_back({chip, std::move(label), static_cast<double>(*millidegrees) / kMillidegrees});
    }
  }
  return out;
}

// Documentation/power/powercap/powercap.rst: each zone has name, energy_uj (microjoules) and
// constraint_N_power_limit_uw (microwatts); "intel-rapl:0" is a package, "intel-rapl:0:0" one of
// its sub-zones (core, uncore, dram). Since Linux 5.10 energy_uj is readable by root only
// (CVE-2020-8694), so a zone it cannot read is left out without an issue.
std::vector<RaplEnergy> read_rapl(core::SysfsReader& files) {
  const std::string base = "/sys/class/powercap";
  constexpr double kMicro = 1e-6;
  std::vector<RaplEnergy> out;
  for (const auto& zone : files.list(base)) {
    if (!zone.starts_with("intel-rapl:")) {
      continue;
    }
    const std::string dir = fmt::format("{}/{}", base, zone);
    const auto energy_text = files.read_if_permitted(dir + "/energy_uj");
    if (!energy_text) {
      continue;
    }
    const auto microjoules = core::parse_u64(*energy_text);
    if (!microjoules) {
      files.malformed(dir + "/energy_uj", "microjoules", *energy_text);
      continue;
    }
    std::optional<double> limit;
    const std::string limit_path = dir + "/constraint_0_power_limit_uw";
    if (const auto text = files.read_if_permitted(limit_path)) {
      if (const auto microwatts = core::parse_u64(*text)) {
        limit = static_cast<double>(*microwatts) * kMicro;
      } else {
        files.malformed(limit_path, "microwatts", *text);
      }
    }
    out.push_back({zone, trimmed(files.read(dir + "/name")),
                   static_cast<double>(*microjoules) * kMicro, limit});
  }
  return out;
}

}  // namespace acco::power::detail
