// Rows of cells as aligned text, the last column left ragged (it holds the long explanations):
// each line indented by two spaces, cells separated by one.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace acco::core {

inline std::string aligned_rows(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (std::size_t c = 0; c + 1 < row.size(); ++c) {
      widths[c] = std::max(widths[c], row[c].size());
    }
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line = " ";
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += " " + row[c];
      if (c + 1 < row.size()) {
        line += std::string(widths[c] - row[c].size(), ' ');
      }
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace acco::core
