#include "rapl_zone.hpp"

#include <algorithm>
#include <cctype>

#include "acco/core/units.hpp"
#include "acco/power/rapl.hpp"

namespace acco::power::detail {

bool is_top_level_zone(std::string_view directory) {
  constexpr std::string_view kPrefix = "intel-rapl:";
  if (!directory.starts_with(kPrefix) || directory.size() == kPrefix.size()) {
    return false;
  }
  const auto number = directory.substr(kPrefix.size());
  return std::all_of(number.begin(), number.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

bool is_package_name(std::string_view name) {
  return name.starts_with("package");
}

std::string first_line(std::string_view text) {
  return std::string(units::trim(text.substr(0, text.find('\n'))));
}

double floor_watts(double max_watts) {
  return kRaplFloorShareOfMax * max_watts;
}

}  // namespace acco::power::detail
