// acco's one table renderer: rows of cells as aligned columns of text, for every table a command
// prints (the probe's sections, bench results, `top`, analyze, tune, power, schedule).
// Pure and thread-compatible: a `Table` is a value, `render_table` reads it and returns text.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace acco::report {

enum class Align {
  kLeft,
  kRight
};

struct Cell {
  Cell() = default;
  Cell(std::string t) : text(std::move(t)) {}  // NOLINT(google-explicit-constructor)
  Cell(const char* t) : text(t) {}             // NOLINT(google-explicit-constructor)
  Cell(std::string t, std::string s) : text(std::move(t)), style(std::move(s)) {}

  std::string text;
  // An ANSI SGR sequence (e.g. "\x1b[33m") put around the cell when the table is rendered in
  // colour; never counted in a column's width.
  std::string style;
};

struct Column {
  std::string header;
  Align align = Align::kLeft;
};

struct TableStyle {
  std::size_t indent = 2;    // blanks before every line
  std::size_t gap = 2;       // blanks between two columns
  bool colour = false;       // cells' styles on
  std::string header_style;  // around every header cell when in colour (e.g. bold)

  // Plain text laid out with `indent` blanks before every line and `gap` between columns.
  [[nodiscard]] static TableStyle layout(std::size_t indent, std::size_t gap) {
    TableStyle style;
    style.indent = indent;
    style.gap = gap;
    return style;
  }
};

// Rows are vectors of cells; the header line is printed when any column has a header. Rules:
// - a column is as wide as its widest cell (header included), padded per its alignment;
// - the last cell of a row is never padded and no line ends in blanks;
// - a row shorter than the longest one ends in free text (a waived case's reason, a note): its
//   last cell does not widen the column it starts in.
struct Table {
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
  TableStyle style;
};

[[nodiscard]] std::string render_table(const Table& table);

// Shorthand for a table without headers from rows of plain strings.
[[nodiscard]] Table plain_table(const std::vector<std::vector<std::string>>& rows,
                                TableStyle style = {});

}  // namespace acco::report
