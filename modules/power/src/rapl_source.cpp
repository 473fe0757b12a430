// Reads RAPL package zones (Documentation/power/powercap/powercap.rst) and the hwmon sensors that
// give their temperature (Documentation/hwmon/coretemp.rst, k10temp.rst) into DeviceSamples.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "acco/core/clock.hpp"
#include "acco/core/sysfs_reader.hpp"
#include "acco/core/units.hpp"
#include "acco/power/rapl.hpp"

#include "rapl_zone.hpp"
#include "text_fields.hpp"

namespace acco::power {
namespace {

constexpr double kMillidegrees = 1000.0;
constexpr double kNanosPerSecond = 1e9;

// One sysfs attribute through the Fs: nullopt when absent or unreadable (energy_uj is root-only
// since Linux 5.10, CVE-2020-8694); a file that holds no number is nullopt and one more dropped
// reading of the device it belongs to.
class Attributes {
 public:
  explicit Attributes(const core::Fs& fs) : fs_(fs) {}

  [[nodiscard]] std::optional<std::string> text(const std::string& path) const {
    auto r = fs_.read_file(path);
    if (!r) {
      return std::nullopt;
    }
    return detail::first_line(*r);
  }

  [[nodiscard]] std::optional<std::uint64_t> unsigned_number(const std::string& path,
                                                             int& dropped) const {
    const auto t = text(path);
    if (!t) {
      return std::nullopt;
    }
    const auto value = core::parse_u64(*t);
    if (!value) {
      ++dropped;
    }
    return value;
  }

  // Millidegrees Celsius (signed: sensors read below zero) as degrees.
  [[nodiscard]] std::optional<double> celsius(const std::string& path, int& dropped) const {
    const auto t = text(path);
    if (!t) {
      return std::nullopt;
    }
    const auto value = units::parse_int(*t);
    if (!value) {
      ++dropped;
      return std::nullopt;
    }
    return static_cast<double>(*value) / kMillidegrees;
  }

  [[nodiscard]] const core::Fs& fs() const { return fs_; }

 private:
  const core::Fs& fs_;
};

struct PackageTemperature {
  std::optional<double> celsius;
  std::optional<double> max_celsius;
  std::optional<double> crit_celsius;
  int dropped = 0;
};

struct HwmonTemperatures {
  std::map<int, PackageTemperature> coretemp;  // by the N of "Package id N"
  std::vector<PackageTemperature> tctl;        // k10temp, one per socket, in hwmon order
};

PackageTemperature read_sensor(const Attributes& a, const std::string& prefix) {
  PackageTemperature t;
  t.celsius = a.celsius(prefix + "_input", t.dropped);
  t.max_celsius = a.celsius(prefix + "_max", t.dropped);
  t.crit_celsius = a.celsius(prefix + "_crit", t.dropped);
  return t;
}

// Documentation/hwmon/sysfs-interface.rst. Drivers from before Linux 3.x put the attributes in
// the hwmon device's parent, hwmonN/device/. k10temp labels its first sensor "Tctl" since Linux
// 4.16; before that temp1 is Tctl without a label.
HwmonTemperatures read_hwmon_temperatures(const Attributes& a) {
  const std::string base = "/sys/class/hwmon";
  HwmonTemperatures out;
  const auto hwmons = a.fs().list_dir(base);
  if (!hwmons) {
    return out;
  }
  for (const auto& hwmon : *hwmons) {
    std::string dir = fmt::format("{}/{}", base, hwmon);
    if (!a.fs().exists(dir + "/name") && a.fs().exists(dir + "/device/name")) {
      dir += "/device";
    }
    const auto chip = a.text(dir + "/name");
    if (!chip || (*chip != "coretemp" && *chip != "k10temp")) {
      continue;
    }
    const auto entries = a.fs().list_dir(dir);
    if (!entries) {
      continue;
    }
    std::vector<int> sensors;
    for (const auto& entry : *entries) {
      if (entry.ends_with("_input")) {
        if (const auto n = detail::numbered(entry.substr(0, entry.size() - 6), "temp")) {
          sensors.push_back(*n);
        }
      }
    }
    std::sort(sensors.begin(), sensors.end());
    for (const int n : sensors) {
      const std::string prefix = fmt::format("{}/temp{}", dir, n);
      const auto label = a.text(prefix + "_label");
      if (*chip == "coretemp") {
        constexpr std::string_view kPackageLabel = "Package id ";
        if (!label || !label->starts_with(kPackageLabel)) {
          continue;
        }
        const auto package = units::parse_int(label->substr(kPackageLabel.size()));
        if (package && *package >= 0) {
          out.coretemp[static_cast<int>(*package)] = read_sensor(a, prefix);
        }
      } else if (label ? *label == "Tctl" : n == 1) {
        out.tctl.push_back(read_sensor(a, prefix));
      }
    }
  }
  return out;
}

// "package-N" -> N; die zones ("package-0-die-1") and other names give nullopt.
std::optional<int> package_number(const std::string& name) {
  const auto n = detail::numbered(name, "package-");
  return n && *n >= 0 ? n : std::nullopt;
}

std::optional<double> watts(std::optional<std::uint64_t> microwatts) {
  if (!microwatts) {
    return std::nullopt;
  }
  return static_cast<double>(*microwatts) * detail::kMicro;
}

class RaplSource final : public SensorSource {
 public:
  RaplSource(const core::Fs& fs, std::function<std::int64_t()> clock)
      : attributes_(fs), clock_(std::move(clock)) {}

  [[nodiscard]] std::string name() const override { return "rapl"; }

  Result<std::vector<DeviceSample>> read() override {
    const std::string base(detail::kPowercapDir);
    auto listing = attributes_.fs().list_dir(base);
    if (!listing) {
      if (listing.error().code == Errc::kNotFound) {
        return std::vector<DeviceSample>{};
      }
      return tl::unexpected(std::move(listing.error()).with_context("rapl"));
    }
    const std::int64_t now = clock_();
    std::vector<std::pair<int, std::string>> zones;  // by number: intel-rapl:10 after :2
    for (const auto& zone : *listing) {
      if (detail::is_top_level_zone(zone)) {
        if (const auto n = detail::numbered(zone, "intel-rapl:")) {
          zones.emplace_back(*n, zone);
        }
      }
    }
    std::sort(zones.begin(), zones.end());

    std::vector<DeviceSample> out;
    for (const auto& [number, zone] : zones) {
      const auto zone_name = attributes_.text(fmt::format("{}/{}/name", base, zone));
      if (zone_name && detail::is_package_name(*zone_name)) {
        out.push_back(read_zone(zone, *zone_name, now));
      }
    }
    add_temperatures(out);
    return out;
  }

 private:
  struct ZoneState {
    std::optional<std::uint64_t> energy_uj;  // at the last read that could read it
    std::int64_t time_unix_nanos = 0;
    std::optional<double> first_limit_watts;
  };

  DeviceSample read_zone(const std::string& zone, const std::string& zone_name, std::int64_t now) {
    const std::string dir = fmt::format("{}/{}/", detail::kPowercapDir, zone);
    DeviceSample s;
    s.device = zone_name;
    s.uuid = zone;
    s.model = "RAPL package";
    s.source = "rapl";
    s.time_unix_nanos = now;
    ZoneState& state = zones_[zone];

    const auto energy = attributes_.unsigned_number(dir + "energy_uj", s.dropped_readings);
    if (energy) {
      s.energy_joules = static_cast<double>(*energy) * detail::kMicro;
      if (state.energy_uj && now > state.time_unix_nanos) {
        const auto range =
            attributes_.unsigned_number(dir + "max_energy_range_uj", s.dropped_readings);
        if (const auto joules = energy_delta_joules(*state.energy_uj, *energy, range)) {
          s.power_watts =
              *joules * kNanosPerSecond / static_cast<double>(now - state.time_unix_nanos);
        }
      }
      state.energy_uj = energy;
      state.time_unix_nanos = now;
    }

    // constraint_0 is the long-term limit (PL1) on every intel_rapl kernel; a zone whose first
    // constraint is something else has no limit acco reads or sets.
    const auto constraint = attributes_.text(dir + "constraint_0_name");
    if (!constraint || *constraint == detail::kLongTermName) {
      const auto limit = watts(
          attributes_.unsigned_number(dir + "constraint_0_power_limit_uw", s.dropped_readings));
      s.power_limit_requested_watts = limit;
      const auto enabled = attributes_.text(dir + "enabled");
      if (!enabled || *enabled != "0") {
        s.power_limit_enforced_watts = limit;
      }
      // A maximum of 0 is the driver saying it does not know (PKG_POWER_INFO left empty).
      const auto max_uw =
          attributes_.unsigned_number(dir + "constraint_0_max_power_uw", s.dropped_readings);
      if (max_uw && *max_uw > 0) {
        s.power_limit_max_watts = watts(max_uw);
        s.power_limit_min_watts = detail::floor_watts(*s.power_limit_max_watts);
      }
      if (!state.first_limit_watts) {
        state.first_limit_watts = limit;
      }
      s.power_limit_default_watts = state.first_limit_watts;
    }
    return s;
  }

  // The energy between two counter values; a counter that went back wrapped once at `range`.
  static std::optional<double> energy_delta_joules(std::uint64_t before, std::uint64_t after,
                                                   std::optional<std::uint64_t> range) {
    if (after >= before) {
      return static_cast<double>(after - before) * detail::kMicro;
    }
    if (!range || before > *range) {
      return std::nullopt;
    }
    return static_cast<double>(*range - before + after) * detail::kMicro;
  }

  void add_temperatures(std::vector<DeviceSample>& samples) const {
    if (samples.empty()) {
      return;
    }
    const auto temperatures = read_hwmon_temperatures(attributes_);
    for (auto& s : samples) {
      const auto package = package_number(s.device);
      if (!package) {
        continue;
      }
      const PackageTemperature* t = nullptr;
      if (const auto it = temperatures.coretemp.find(*package); it != temperatures.coretemp.end()) {
        t = &it->second;
      } else if (*package == 0 && samples.size() == 1 && temperatures.tctl.size() == 1) {
        // k10temp numbers no package: its one Tctl is package 0's only on a one-socket machine.
        t = temperatures.tctl.data();
      }
      if (t != nullptr) {
        s.temperature_gpu_celsius = t->celsius;
        s.threshold_gpu_max_celsius = t->max_celsius;
        s.threshold_slowdown_celsius = t->crit_celsius;
        s.dropped_readings += t->dropped;
      }
    }
  }

  Attributes attributes_;
  std::function<std::int64_t()> clock_;
  std::map<std::string, ZoneState> zones_;
};

}  // namespace

std::unique_ptr<SensorSource> make_rapl_source(const core::Fs& fs,
                                               std::function<std::int64_t()> clock) {
  if (!clock) {
    clock = core::now_unix_nanos;
  }
  return std::make_unique<RaplSource>(fs, std::move(clock));
}

}  // namespace acco::power
