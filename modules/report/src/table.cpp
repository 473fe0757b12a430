#include "acco/report/table.hpp"

#include <algorithm>
#include <utility>

namespace acco::report {
namespace {

constexpr const char* kReset = "\x1b[0m";

std::string padded(const std::string& text, std::size_t width, Align align) {
  const std::size_t fill = width > text.size() ? width - text.size() : 0;
  return align == Align::kLeft ? text + std::string(fill, ' ') : std::string(fill, ' ') + text;
}

}  // namespace

std::string render_table(const Table& table) {
  const bool has_header = std::any_of(table.columns.begin(), table.columns.end(),
                                      [](const Column& c) { return !c.header.empty(); });
  std::vector<std::vector<Cell>> lines;
  if (has_header) {
    std::vector<Cell> header;
    for (const auto& c : table.columns) {
      header.emplace_back(c.header, table.style.header_style);
    }
    lines.push_back(std::move(header));
  }
  lines.insert(lines.end(), table.rows.begin(), table.rows.end());

  std::size_t longest = table.columns.size();
  for (const auto& row : lines) {
    longest = std::max(longest, row.size());
  }
  std::vector<std::size_t> widths(longest, 0);
  for (const auto& row : lines) {
    const std::size_t counted = row.size() < longest && !row.empty() ? row.size() - 1 : row.size();
    for (std::size_t c = 0; c < counted; ++c) {
      widths[c] = std::max(widths[c], row[c].text.size());
    }
  }

  const auto align_of = [&](std::size_t c) {
    return c < table.columns.size() ? table.columns[c].align : Align::kLeft;
  };
  const std::string indent(table.style.indent, ' ');
  const std::string gap(table.style.gap, ' ');
  std::string out;
  for (const auto& row : lines) {
    // Built as plain text first so trailing blanks can be cut, then styled cell by cell.
    std::vector<std::string> cells;
    for (std::size_t c = 0; c < row.size(); ++c) {
      cells.push_back(c + 1 == row.size() && align_of(c) == Align::kLeft
                          ? row[c].text
                          : padded(row[c].text, widths[c], align_of(c)));
    }
    while (!cells.empty()) {
      auto& last = cells.back();
      last.erase(last.find_last_not_of(' ') + 1);
      if (!last.empty() || cells.size() == 1) {
        break;
      }
      cells.pop_back();
    }
    std::string line = indent;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) {
        line += gap;
      }
      if (table.style.colour && !row[c].style.empty()) {
        line += row[c].style + cells[c] + kReset;
      } else {
        line += cells[c];
      }
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

Table plain_table(const std::vector<std::vector<std::string>>& rows, TableStyle style) {
  Table table{.columns = {}, .rows = {}, .style = std::move(style)};
  for (const auto& row : rows) {
    table.rows.emplace_back(row.begin(), row.end());
  }
  return table;
}

}  // namespace acco::report
