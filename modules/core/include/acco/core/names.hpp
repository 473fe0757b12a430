// Enumerations named by text: the value whose to_string() is a given word, and the list of the
// words for an error message, so each enum's parser is its to_string() and one line.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace acco::core {

// The value among `values` whose to_string(value) (found by argument-dependent lookup) is `text`.
template <typename E, std::size_t N>
[[nodiscard]] std::optional<E> find_named(std::string_view text, const std::array<E, N>& values) {
  for (const E value : values) {
    if (text == to_string(value)) {
      return value;
    }
  }
  return std::nullopt;
}

// "a, b or c": the values' names for "expected ..." in an error.
template <typename E, std::size_t N>
[[nodiscard]] std::string name_list(const std::array<E, N>& values) {
  std::string out;
  for (std::size_t i = 0; i < N; ++i) {
    if (i > 0) {
      out += i + 1 == N ? " or " : ", ";
    }
    out += to_string(values[i]);
  }
  return out;
}

}  // namespace acco::core
