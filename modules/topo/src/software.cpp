#include "acco/topo/software.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace acco::topo {

std::vector<int> version_numbers(std::string_view version) {
  std::vector<int> out;
  std::size_t i = 0;
  while (i < version.size() && std::isdigit(static_cast<unsigned char>(version[i])) != 0) {
    int value = 0;
    std::size_t digits = 0;
    while (i < version.size() && std::isdigit(static_cast<unsigned char>(version[i])) != 0) {
      if (digits < 9) {  // a part longer than that is kept as its first nine digits
        value = value * 10 + (version[i] - '0');
      }
      ++digits;
      ++i;
    }
    out.push_back(value);
    if (i + 1 < version.size() && version[i] == '.' &&
        std::isdigit(static_cast<unsigned char>(version[i + 1])) != 0) {
      ++i;
    } else {
      break;
    }
  }
  return out;
}

int compare_versions(std::string_view a, std::string_view b) {
  const auto x = version_numbers(a);
  const auto y = version_numbers(b);
  for (std::size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    const int p = i < x.size() ? x[i] : 0;
    const int q = i < y.size() ? y[i] : 0;
    if (p != q) {
      return p < q ? -1 : 1;
    }
  }
  return 0;
}

std::string minimum_driver(int cuda_major) {
  // docs.nvidia.com/deploy/cuda-compatibility, "Minor Version Compatibility": each family's
  // GA driver (CUDA 11.1's 450.80.02 is the floor the guide names for the whole of 11.x).
  static constexpr std::array<std::pair<int, const char*>, 3> kFloors = {
      {{11, "450.80.02"}, {12, "525.60.13"}, {13, "580.65.06"}}};
  for (const auto& [major, driver] : kFloors) {
    if (major == cuda_major) {
      return driver;
    }
  }
  return {};
}

int cuda_major(std::string_view cuda) {
  const auto parts = version_numbers(cuda);
  return parts.empty() ? 0 : parts.front();
}

}  // namespace acco::topo
