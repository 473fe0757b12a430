// What every fuzz target shares: libFuzzer's entry point, declared once, and the input as text.
// A target is one fuzz_<name>.cpp defining LLVMFuzzerTestOneInput; built with clang and
// -fsanitize=fuzzer it is a libFuzzer binary (scripts/fuzz), and built with any compiler beside
// replay_main.cpp it runs each corpus file once (ctest's fuzz.<name>, so a found crash stays
// fixed). A target must return 0 for every input: errors are values, never crashes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace acco::fuzz {

inline std::string_view text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data),
          size};  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
}

}  // namespace acco::fuzz
