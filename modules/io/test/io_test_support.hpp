// Scratch files for the io tests: a directory on the disk the tests run from (the build tree),
// where O_DIRECT normally works, removed with everything in it.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sysroot_builder.hpp"

namespace acco::io::testing {

// A scratch directory on the build tree's disk, where O_DIRECT normally works.
using DiskDir = acco::testing::DiskTempDir;

// Byte i of a pattern file: depends on i's position and a seed, so misplaced blocks show.
inline unsigned char pattern_byte(std::uint64_t i, unsigned seed) {
  return static_cast<unsigned char>((i * 2654435761ULL >> 13) + i / 4096 + seed);
}

// `bytes` of the pattern as a string, as slurp() reads a pattern file back.
inline std::string pattern_string(std::uint64_t bytes, unsigned seed = 0) {
  std::string v(bytes, '\0');
  for (std::uint64_t i = 0; i < bytes; ++i) {
    v[i] = static_cast<char>(pattern_byte(i, seed));
  }
  return v;
}

inline std::string write_pattern(const std::filesystem::path& path, std::uint64_t bytes,
                                 unsigned seed = 0) {
  std::vector<char> data(bytes);
  for (std::uint64_t i = 0; i < bytes; ++i) {
    data[i] = static_cast<char>(pattern_byte(i, seed));
  }
  std::ofstream out(path, std::ios::binary);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  return path.string();
}

}  // namespace acco::io::testing
