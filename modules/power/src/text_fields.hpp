// Private: the pieces of the host's text files (/proc/stat, /proc/diskstats, hwmon and powercap
// names) the readers split and number; the files themselves are read with core::SysfsReader.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace acco::power::detail {

// Split on spaces and tabs, empty fields dropped.
[[nodiscard]] std::vector<std::string_view> words(std::string_view line);
// Lines without their '\n'; a final line without one is kept.
[[nodiscard]] std::vector<std::string_view> lines(std::string_view text);
// "name" is "prefix" followed by one or more digits: ("temp12", "temp") -> 12.
[[nodiscard]] std::optional<int> numbered(std::string_view name, std::string_view prefix);

}  // namespace acco::power::detail
