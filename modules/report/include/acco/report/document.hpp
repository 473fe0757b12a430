// A result's text as typed blocks (heading, fields, table, note, preformatted text) and the one
// text reporter that renders them, in the manner of google/benchmark's reporters: a flow returns
// values, its module says which blocks show them, and every command's text comes from here.
#pragma once

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "acco/report/table.hpp"

namespace acco::report {

// A section title. Separated from what came before by one blank line.
struct Heading {
  std::string text;
};

// Named values, one per line, names padded so the values line up: "  name:   value".
struct Fields {
  std::vector<std::pair<std::string, std::string>> fields;
  std::size_t indent = 2;
};

// A sentence about what was shown (a caveat, what could not be read, what to do next).
struct Note {
  std::string text;
  std::size_t indent = 2;
};

// Lines already formatted, kept as they are (each ends in a newline when rendered).
struct Preformatted {
  std::string text;
};

using Block = std::variant<Heading, Fields, Table, Note, Preformatted>;

struct Document {
  std::vector<Block> blocks;

  Document& add(Block block) {
    blocks.push_back(std::move(block));
    return *this;
  }
};

// The one text reporter. Pure.
[[nodiscard]] std::string render_text(const Document& document);

}  // namespace acco::report
