#include "acco/core/option_check.hpp"

#include <fmt/format.h>

namespace acco::core {

tl::unexpected<Error> bad_option(std::string_view name, std::string_view value,
                                 std::string_view expected) {
  return fail(Errc::kInvalidArgument, fmt::format("{}: '{}' is not {}", name, value, expected));
}

std::string option_text(double value) {
  return fmt::format("{}", value);
}

std::string option_text(long long value) {
  return std::to_string(value);
}

}  // namespace acco::core
