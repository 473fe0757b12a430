// `acco sim --html`: the text report, then the first run drawn: a Gantt chart of its tasks (one
// row per device) for up to kGanttDevices devices, and a heat map of its links' busy shares per
// kind of link (a row per node, or per band of nodes past kHeatRows, a column per link of the
// node and direction; the fabric's spines in a row of their own).
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "acco/report/document.hpp"
#include "acco/report/html.hpp"
#include "acco/sim/report.hpp"

namespace acco::sim {
namespace {

constexpr std::size_t kGanttDevices = 64;
constexpr int kHeatRows = 64;
constexpr double kWidth = 960;  // the plots' drawing width in pixels
constexpr double kLabel = 80;   // the row labels' column

// A busy share from 0 (white) to 1 and above (dark red).
std::string heat(double share) {
  const double s = std::clamp(share, 0.0, 1.0);
  const auto channel = [s](double to) {
    return static_cast<int>(std::lround(255 - s * (255 - to)));
  };
  return fmt::format("rgb({},{},{})", channel(180), channel(20), channel(20));
}

constexpr std::array<std::string_view, 8> kPalette = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                                      "#76b7b2", "#edc948", "#b07aa1", "#9c755f"};

std::string gantt(const SimResult& run) {
  const std::size_t devices = run.devices.size();
  const double end_ns = std::max(run.makespan * 1e9, 1.0);
  constexpr double kRow = 14;
  const double height = kRow * static_cast<double>(devices) + 20;
  std::vector<std::string> types;
  std::string svg = fmt::format(
      "<svg class=\"gantt\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" "
      "height=\"{:.0f}\">\n",
      kLabel + kWidth, height);
  for (std::size_t d = 0; d < devices; ++d) {
    svg += fmt::format("<text x=\"0\" y=\"{:.0f}\">{}</text>\n", kRow * static_cast<double>(d) + 11,
                       report::html_escape(run.devices[d].name));
  }
  for (const auto& t : run.task_records) {
    auto at = std::find(types.begin(), types.end(), t.type);
    if (at == types.end()) {
      types.push_back(t.type);
      at = types.end() - 1;
    }
    const auto color = kPalette[static_cast<std::size_t>(at - types.begin()) % kPalette.size()];
    const double x = kLabel + kWidth * static_cast<double>(t.started.count()) / end_ns;
    const double w =
        std::max(0.5, kWidth * static_cast<double>((t.finished - t.started).count()) / end_ns);
    svg += fmt::format(
        "<rect class=\"task\" x=\"{:.1f}\" y=\"{:.0f}\" width=\"{:.1f}\" height=\"{:.0f}\" "
        "fill=\"{}\"><title>{} on {}: {:.3f}-{:.3f} ms</title></rect>\n",
        x, kRow * t.device + 1, w, kRow - 2, color, report::html_escape(t.name),
        t.device >= 0 && static_cast<std::size_t>(t.device) < devices
            ? report::html_escape(run.devices[static_cast<std::size_t>(t.device)].name)
            : std::string("?"),
        static_cast<double>(t.started.count()) / 1e6,
        static_cast<double>(t.finished.count()) / 1e6);
  }
  svg += fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\">0</text>", kLabel, height - 4);
  svg += fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"end\">{:.3f} ms</text>\n",
                     kLabel + kWidth, height - 4, run.makespan * 1e3);
  svg += "</svg>\n<p class=\"legend\">";
  for (std::size_t i = 0; i < types.size(); ++i) {
    svg += fmt::format("<span style=\"color:{}\">&#9632;</span> {} ", kPalette[i % kPalette.size()],
                       report::html_escape(types[i]));
  }
  return svg + "</p>\n";
}

// One heat map per kind of link: rows are nodes (bands of nodes past kHeatRows, each cell the
// band's busiest) and the spines, columns the node's links of that kind by name.
std::string heat_map(const SimReport& rep, const SimResult& run, const std::string& kind) {
  const int nodes = rep.platform.nodes;
  const int band = (nodes + kHeatRows - 1) / kHeatRows;
  std::vector<std::string> columns;
  std::map<std::pair<int, std::string>, double> cell;  // (row, column) -> share
  bool spines = false;
  for (const auto& l : run.link_loads) {
    if (l.kind != kind) {
      continue;
    }
    if (std::find(columns.begin(), columns.end(), l.name) == columns.end()) {
      columns.push_back(l.name);
    }
    const int row = l.node < 0 ? -1 : l.node / band;
    spines = spines || row < 0;
    auto& share = cell[{row, l.name}];
    share = std::max(share, l.share);
  }
  if (columns.empty()) {
    return "";
  }
  std::sort(columns.begin(), columns.end());
  const int rows = (nodes + band - 1) / band + (spines ? 1 : 0);
  const double w = std::max(4.0, std::min(40.0, kWidth / static_cast<double>(columns.size())));
  constexpr double kRow = 12;
  std::string svg = fmt::format(
      "<h3>{} links</h3>\n<svg class=\"heat\" xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"{:.0f}\" height=\"{:.0f}\">\n",
      report::html_escape(kind), kLabel + w * static_cast<double>(columns.size()), kRow * rows);
  for (int r = 0; r < rows; ++r) {
    const int row = spines && r == rows - 1 ? -1 : r;
    const std::string label =
        row < 0     ? std::string("spines")
        : band == 1 ? fmt::format("n{}", row)
                    : fmt::format("n{}-{}", row * band, std::min(nodes, (row + 1) * band) - 1);
    svg += fmt::format("<text x=\"0\" y=\"{:.0f}\">{}</text>\n", kRow * r + 10, label);
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const auto at = cell.find({row, columns[c]});
      if (at == cell.end()) {
        continue;
      }
      svg += fmt::format(
          "<rect class=\"cell\" x=\"{:.1f}\" y=\"{:.0f}\" width=\"{:.1f}\" height=\"{:.0f}\" "
          "fill=\"{}\" stroke=\"#ccc\"><title>{} {}: {:.0f} % busy</title></rect>\n",
          kLabel + w * static_cast<double>(c), kRow * r, w - 1, kRow - 1, heat(at->second), label,
          report::html_escape(columns[c]), 100 * at->second);
    }
  }
  return svg + "</svg>\n";
}

}  // namespace

std::string to_html(const SimReport& rep) {
  const report::Document doc = sim_document(rep);
  const std::string title = "acco sim";
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n"
      "<style>body{{font-family:sans-serif;margin:1.5em}}pre{{font-size:12px}}"
      "svg text{{font-size:10px;font-family:monospace}}</style>\n</head>\n<body>\n<h1>{}</h1>\n"
      "<pre>{}</pre>\n",
      title, title, report::html_escape(report::render_text(doc)));
  if (!rep.runs.empty()) {
    const auto& run = rep.runs.front();
    if (!run.task_records.empty() && run.devices.size() <= kGanttDevices) {
      html +=
          fmt::format("<h2>{}: the tasks on each device</h2>\n", report::html_escape(run.policy));
      html += gantt(run);
    }
    if (!run.link_loads.empty()) {
      html += fmt::format("<h2>{}: each link's busy share</h2>\n", report::html_escape(run.policy));
      html += fmt::format(
          "<p class=\"legend\">Each cell is one direction of one link: its bytes over its "
          "bandwidth over the makespan, from <span style=\"background:{}\">&nbsp;0 %&nbsp;"
          "</span> to <span style=\"background:{};color:white\">&nbsp;100 %&nbsp;</span>; "
          "hover for its name.</p>\n",
          heat(0), heat(1));
      for (const char* kind : {"pcie", "nvlink", "nic", "fabric"}) {
        html += heat_map(rep, run, kind);
      }
    }
  }
  return html + "</body>\n</html>\n";
}

}  // namespace acco::sim
