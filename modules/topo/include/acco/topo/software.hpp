// What the CUDA stack's versions mean for each other: dotted versions compared, and the oldest
// Linux driver each CUDA major family runs on (CUDA's minor version compatibility).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace acco::topo {

// "580.65.06" -> {580, 65, 6}; parsing stops at the first part that is not a number ("2.5.1+cu124"
// -> {2, 5, 1}); empty when the text does not start with a digit.
[[nodiscard]] std::vector<int> version_numbers(std::string_view version);

// <0, 0, >0 as a is older than, the same as or newer than b, part by part (a missing part is 0).
[[nodiscard]] int compare_versions(std::string_view a, std::string_view b);

// The oldest Linux driver on which every CUDA `major`.x runtime runs ("525.60.13" for 12, the
// 12.0 GA driver; "580.65.06" for 13; "450.80.02" for 11); empty for a major acco has no floor
// for (before 11, where each minor had its own, or after 13).
[[nodiscard]] std::string minimum_driver(int cuda_major);

// The major of a CUDA version ("12.4" -> 12, "13" -> 13); 0 when empty or not a number.
[[nodiscard]] int cuda_major(std::string_view cuda);

}  // namespace acco::topo
