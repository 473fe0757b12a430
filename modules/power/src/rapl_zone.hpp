// Private: what the RAPL source and actuator agree on about powercap zones: where they live,
// which of them are packages, and the files of their long-term constraint.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace acco::power::detail {

inline constexpr std::string_view kPowercapDir = "/sys/class/powercap";
inline constexpr std::string_view kLongTermName = "long_term";
inline constexpr double kMicro = 1e-6;

// "intel-rapl:N": a top-level zone; "intel-rapl:N:M" (a sub-zone) and "intel-rapl-mmio:N" (the
// MMIO view of the same package) are not.
[[nodiscard]] bool is_top_level_zone(std::string_view directory);
// A zone `name` that makes a top-level zone a device: "package-0", "package-0-die-1".
[[nodiscard]] bool is_package_name(std::string_view name);
// The first line of `text` without surrounding blanks ("package-0\n" -> "package-0").
[[nodiscard]] std::string first_line(std::string_view text);
// The lowest limit acco sets on a package whose constraint_0_max_power_uw is `max_watts`.
[[nodiscard]] double floor_watts(double max_watts);

}  // namespace acco::power::detail
