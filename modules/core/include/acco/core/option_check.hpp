// Checks of an option's value for the modules whose typed options come from a command line, a
// config file or a program. Each error names the option as acco's command line spells it
// ("--width: '0' is not a whole number from 1 to 100000"), so a flag, a field and a keyword read
// the same everywhere; the code is kInvalidArgument (the CLI answers it with exit 64).
#pragma once

#include <concepts>
#include <string>
#include <string_view>

#include "acco/core/result.hpp"

namespace acco::core {

// "<name>: '<value>' is not <expected>".
[[nodiscard]] tl::unexpected<Error> bad_option(std::string_view name, std::string_view value,
                                               std::string_view expected);
// A value as the messages write it: 12, 0.25, 1e+09 (the shortest text that reads back).
[[nodiscard]] std::string option_text(double value);
[[nodiscard]] std::string option_text(long long value);

// `value` from `low` to `high`, both included, else bad_option; NaN is outside every range.
template <typename T>
requires std::integral<T> || std::floating_point<T>
[[nodiscard]] Status check_range(std::string_view name, T value, T low, T high,
                                 std::string_view expected) {
  if (value >= low && value <= high) {
    return {};
  }
  if constexpr (std::integral<T>) {
    return bad_option(name, option_text(static_cast<long long>(value)), expected);
  } else {
    return bad_option(name, option_text(static_cast<double>(value)), expected);
  }
}

}  // namespace acco::core
