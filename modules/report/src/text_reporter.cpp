#include <algorithm>
#include <string>

#include "acco/report/document.hpp"

namespace acco::report {
namespace {

std::string ended(std::string text) {
  if (!text.empty() && text.back() != '\n') {
    text += '\n';
  }
  return text;
}

struct Renderer {
  bool first;

  std::string operator()(const Heading& h) const { return (first ? "" : "\n") + h.text + "\n"; }

  std::string operator()(const Fields& f) const {
    std::size_t width = 0;
    for (const auto& [name, value] : f.fields) {
      width = std::max(width, name.size());
    }
    std::string out;
    for (const auto& [name, value] : f.fields) {
      std::string line(f.indent, ' ');
      line.append(name).append(":").append(width - name.size() + 1, ' ').append(value);
      line.erase(line.find_last_not_of(' ') + 1);
      out += line + "\n";
    }
    return out;
  }

  std::string operator()(const Table& t) const { return render_table(t); }

  std::string operator()(const Note& n) const { return ended(std::string(n.indent, ' ') + n.text); }

  std::string operator()(const Preformatted& p) const { return ended(p.text); }
};

}  // namespace

std::string render_text(const Document& document) {
  std::string out;
  for (std::size_t i = 0; i < document.blocks.size(); ++i) {
    out += std::visit(Renderer{.first = i == 0}, document.blocks[i]);
  }
  return out;
}

}  // namespace acco::report
