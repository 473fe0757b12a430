#include "svg_charts.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>

#include <fmt/format.h>

#include "acco/core/units.hpp"

#include "format.hpp"

namespace acco::bench::detail {
namespace {

constexpr double kChartWidth = 720;
constexpr double kChartLeft = 72;
constexpr double kChartRight = 24;
constexpr double kChartTop = 52;  // the title and the legend
constexpr double kChartPlotHeight = 240;
constexpr double kChartPlotWidth = kChartWidth - kChartLeft - kChartRight;

// Room under the plot for category labels turned by 35 degrees (about 3.8 px of height per
// character at 11 px) and the axis label below them.
double label_room(const std::vector<std::string>& categories) {
  std::size_t longest = 0;
  for (const auto& c : categories) {
    longest = std::max(longest, c.size());
  }
  return std::max(60.0, 40 + 3.8 * static_cast<double>(longest));
}
double chart_height(const std::vector<std::string>& categories) {
  return kChartTop + kChartPlotHeight + label_room(categories);
}

// Colours that stay apart for colour-blind readers (Okabe and Ito's palette).
constexpr std::array<const char*, 6> kSeriesColours = {"#0072b2", "#e69f00", "#009e73",
                                                       "#cc79a7", "#56b4e9", "#d55e00"};

const char* colour(std::size_t series) {
  return kSeriesColours.at(series % kSeriesColours.size());
}

std::string open_svg(const std::string& title, double width, double height) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" viewBox=\"0 0 {:g} {:g}\" "
      "width=\"{:g}\" height=\"{:g}\" role=\"img\" aria-label=\"{}\">\n<title>{}</title>\n"
      "<text class=\"chart-title\" x=\"{:g}\" y=\"18\">{}</text>\n",
      width, height, width, height, escape(title), escape(title), kChartLeft, escape(title));
}

// One legend entry per item, left to right under the title: a swatch drawn by `swatch` (given
// its x and y) and the label.
struct LegendItem {
  std::string label;
  std::string swatch;  // SVG of the mark, drawn at (0, 0) and moved into place
};
std::string legend(const std::vector<LegendItem>& items) {
  std::string out = "<g class=\"legend\">\n";
  double x = kChartLeft;
  for (const LegendItem& item : items) {
    out += fmt::format(
        "<g transform=\"translate({:.1f} 36)\">{}<text x=\"18\" y=\"4\">{}</text></g>\n", x,
        item.swatch, escape(item.label));
    // An estimate of the label's width at 11 px: enough room that entries never overlap.
    x += 30 + 6.5 * static_cast<double>(item.label.size());
  }
  return out + "</g>\n";
}

std::string box_swatch(const char* fill) {
  return fmt::format("<rect x=\"0\" y=\"-5\" width=\"12\" height=\"10\" fill=\"{}\"/>", fill);
}

// The y axis from 0 to a nice top above `highest`: grid lines, their values and the label.
struct YAxis {
  double top = 1;
  double step = 1;

  [[nodiscard]] double y(double value) const {
    return kChartTop + kChartPlotHeight - value / top * kChartPlotHeight;
  }
};
YAxis y_axis(double highest) {
  YAxis axis;
  const double top = std::max(highest, 1e-9) * 1.1;
  axis.step = nice_step(top);
  axis.top = std::ceil(top / axis.step) * axis.step;
  return axis;
}
std::string draw_y_axis(const YAxis& axis, const std::string& label) {
  std::string out;
  const auto ticks = static_cast<int>(std::lround(axis.top / axis.step));
  for (int tick = 0; tick <= ticks; ++tick) {
    const double v = axis.step * tick;
    const double y = axis.y(v);
    out += fmt::format(
        "<line class=\"grid\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>\n"
        "<text class=\"yt\" x=\"{:.1f}\" y=\"{:.1f}\">{:g}</text>\n",
        kChartLeft - 6, y, kChartLeft + kChartPlotWidth, y, kChartLeft - 10, y + 4, v);
  }
  out += fmt::format(
      "<rect class=\"frame\" x=\"{:g}\" y=\"{:g}\" width=\"{:g}\" height=\"{:g}\"/>\n"
      "<text class=\"axis\" transform=\"translate(18 {:.1f}) rotate(-90)\">{}</text>\n",
      kChartLeft, kChartTop, kChartPlotWidth, kChartPlotHeight, kChartTop + kChartPlotHeight / 2,
      escape(label));
  return out;
}

// The highest value of a chart in its display unit (at least `floor`), for its y axis.
double highest_value(const std::vector<std::vector<std::optional<double>>>& values,
                     double unit_scale, double floor) {
  double highest = floor;
  for (const auto& row : values) {
    for (const auto& v : row) {
      highest = std::max(highest, v.value_or(0) / unit_scale);
    }
  }
  return highest;
}

// A legend entry with a coloured box per series, in the series' order.
std::vector<LegendItem> series_items(const std::vector<std::string>& series) {
  std::vector<LegendItem> items;
  for (std::size_t s = 0; s < series.size(); ++s) {
    items.push_back({series[s], box_swatch(colour(s))});
  }
  return items;
}

// Category names under the plot, turned so long case names fit, and the x axis' label.
std::string draw_categories(const std::vector<std::string>& categories,
                            const std::string& x_label) {
  std::string out;
  const double group =
      kChartPlotWidth / static_cast<double>(std::max<std::size_t>(categories.size(), 1));
  for (std::size_t c = 0; c < categories.size(); ++c) {
    const double x = kChartLeft + group * (static_cast<double>(c) + 0.5);
    out += fmt::format(
        "<text class=\"xl\" transform=\"translate({:.1f} {:.1f}) rotate(-35)\">{}</text>\n", x + 4,
        kChartTop + kChartPlotHeight + 14, escape(categories[c]));
  }
  out +=
      fmt::format("<text class=\"axis\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
                  kChartLeft + kChartPlotWidth / 2, chart_height(categories) - 8, escape(x_label));
  return out;
}

}  // namespace

double nice_step(double top) {
  const double raw = top / 8;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * magnitude >= raw) {
      return m * magnitude;
    }
  }
  return 10 * magnitude;
}

std::string svg_bars(const BarChart& chart) {
  const YAxis axis =
      y_axis(highest_value(chart.values, chart.unit_scale, chart.reference / chart.unit_scale));
  std::string svg = open_svg(chart.title, kChartWidth, chart_height(chart.categories));

  std::vector<LegendItem> items = series_items(chart.series);
  if (chart.reference > 0) {
    items.push_back({chart.reference_label,
                     "<line class=\"peak\" x1=\"0\" y1=\"0\" x2=\"12\" y2=\"0\" "
                     "stroke-dasharray=\"4 2\"/>"});
  }
  svg += legend(items);
  svg += draw_y_axis(axis, chart.y_label);

  const double group =
      kChartPlotWidth / static_cast<double>(std::max<std::size_t>(chart.categories.size(), 1));
  const double bar =
      group * 0.8 / static_cast<double>(std::max<std::size_t>(chart.series.size(), 1));
  for (std::size_t c = 0; c < chart.categories.size() && c < chart.values.size(); ++c) {
    for (std::size_t s = 0; s < chart.series.size() && s < chart.values[c].size(); ++s) {
      if (!chart.values[c][s]) {
        continue;
      }
      const double value = *chart.values[c][s] / chart.unit_scale;
      const double x =
          kChartLeft + group * static_cast<double>(c) + group * 0.1 + bar * static_cast<double>(s);
      const double y = axis.y(value);
      svg += fmt::format(
          "<rect class=\"bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
          "fill=\"{}\"><title>{}, {}: {}</title></rect>\n",
          x, y, std::max(bar - 1, 1.0), kChartTop + kChartPlotHeight - y, colour(s),
          escape(chart.categories[c]), escape(chart.series[s]),
          escape(units::format_rate(*chart.values[c][s])));
    }
  }
  if (chart.reference > 0) {
    const double y = axis.y(chart.reference / chart.unit_scale);
    svg += fmt::format(
        "<line class=\"peak\" x1=\"{:g}\" y1=\"{:.1f}\" x2=\"{:g}\" y2=\"{:.1f}\" "
        "stroke-dasharray=\"8 5\"/>\n",
        kChartLeft, y, kChartLeft + kChartPlotWidth, y);
  }
  svg += draw_categories(chart.categories, chart.x_label);
  return svg + "</svg>\n";
}

std::string svg_lines(const LineChart& chart) {
  const YAxis axis = y_axis(highest_value(chart.values, chart.unit_scale, 0));
  std::string svg = open_svg(chart.title, kChartWidth, chart_height(chart.categories));
  svg += legend(series_items(chart.series));
  svg += draw_y_axis(axis, chart.y_label);
  const double group =
      kChartPlotWidth / static_cast<double>(std::max<std::size_t>(chart.categories.size(), 1));
  for (std::size_t s = 0; s < chart.series.size() && s < chart.values.size(); ++s) {
    std::string points;
    std::string dots;
    for (std::size_t c = 0; c < chart.categories.size() && c < chart.values[s].size(); ++c) {
      if (!chart.values[s][c]) {
        continue;
      }
      const double value = *chart.values[s][c] / chart.unit_scale;
      const double x = kChartLeft + group * (static_cast<double>(c) + 0.5);
      const double y = axis.y(value);
      points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", x, y);
      dots += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"><title>{}, {}: {:.3g} "
          "{}</title></circle>\n",
          x, y, colour(s), escape(chart.series[s]), escape(chart.categories[c]), value,
          escape(chart.unit));
    }
    if (!points.empty()) {
      svg +=
          fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n",
                      points, colour(s));
    }
    svg += dots;
  }
  svg += draw_categories(chart.categories, chart.x_label);
  return svg + "</svg>\n";
}

std::string svg_ranges(const RangeChart& chart) {
  constexpr double kMicro = 1e6;
  double highest = 0;
  for (const Range& r : chart.ranges) {
    highest = std::max(highest, r.max * kMicro);
  }
  const YAxis axis = y_axis(highest);
  std::string svg = open_svg(chart.title, kChartWidth, chart_height(chart.categories));
  svg += legend({{"min to max", "<line class=\"whisker\" x1=\"6\" y1=\"-6\" x2=\"6\" y2=\"6\"/>"},
                 {"median to p99", box_swatch(colour(0))},
                 {"median", "<line class=\"median\" x1=\"0\" y1=\"0\" x2=\"12\" y2=\"0\"/>"}});
  svg += draw_y_axis(axis, "time per copy (\u00b5s)");
  const double group =
      kChartPlotWidth / static_cast<double>(std::max<std::size_t>(chart.categories.size(), 1));
  const double box = std::min(group * 0.5, 40.0);
  for (std::size_t c = 0; c < chart.categories.size() && c < chart.ranges.size(); ++c) {
    const Range& r = chart.ranges[c];
    const double mid = kChartLeft + group * (static_cast<double>(c) + 0.5);
    const double p99 = axis.y(r.p99 * kMicro);
    const double median = axis.y(r.median * kMicro);
    svg += fmt::format(
        "<g><title>{}: min {}, median {}, p99 {}, max {}</title>\n"
        "<line class=\"whisker\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>\n"
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"/>\n"
        "<line class=\"median\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/></g>\n",
        escape(chart.categories[c]), escape(units::format_seconds(r.min)),
        escape(units::format_seconds(r.median)), escape(units::format_seconds(r.p99)),
        escape(units::format_seconds(r.max)), mid, axis.y(r.max * kMicro), mid,
        axis.y(r.min * kMicro), mid - box / 2, p99, box, std::max(median - p99, 1.0), colour(0),
        mid - box / 2, median, mid + box / 2, median);
  }
  svg += draw_categories(chart.categories, "case and device");
  return svg + "</svg>\n";
}

std::string svg_heatmap(const HeatMap& map) {
  constexpr double kCellWidth = 110;
  constexpr double kCellHeight = 40;
  constexpr double kRowLabels = 190;
  constexpr double kColumnLabels = 96;
  const double width =
      std::max(kRowLabels + kCellWidth * static_cast<double>(map.columns.size()) + 24, 420.0);
  const double height =
      kChartTop + kColumnLabels + kCellHeight * static_cast<double>(map.rows.size()) + 56;
  double highest = 0;
  for (const auto& row : map.values) {
    for (const auto& v : row) {
      highest = std::max(highest, v.value_or(0));
    }
  }
  std::string svg = open_svg(map.title, width, height);
  // The colour scale: white for 0, the series colour for the largest value.
  svg += fmt::format(
      "<defs><linearGradient id=\"heat\"><stop offset=\"0\" stop-color=\"#ffffff\"/>"
      "<stop offset=\"1\" stop-color=\"{}\"/></linearGradient></defs>\n"
      "<g class=\"legend\"><rect x=\"{:g}\" y=\"30\" width=\"120\" height=\"10\" "
      "fill=\"url(#heat)\" stroke=\"#8c959f\"/><text x=\"{:g}\" y=\"39\" "
      "class=\"yt\">0</text><text x=\"{:g}\" y=\"39\">{}</text></g>\n",
      colour(0), kChartLeft, kChartLeft - 4, kChartLeft + 126, escape(units::format_rate(highest)));
  const double grid_top = kChartTop + kColumnLabels;
  for (std::size_t c = 0; c < map.columns.size(); ++c) {
    const double x = kRowLabels + kCellWidth * (static_cast<double>(c) + 0.5);
    svg += fmt::format(
        "<text class=\"xs\" transform=\"translate({:.1f} {:.1f}) rotate(-35)\">{}</text>\n", x - 10,
        grid_top - 8, escape(map.columns[c]));
  }
  for (std::size_t r = 0; r < map.rows.size(); ++r) {
    const double y = grid_top + kCellHeight * static_cast<double>(r);
    svg += fmt::format("<text class=\"yt\" x=\"{:g}\" y=\"{:.1f}\">{}</text>\n", kRowLabels - 8,
                       y + kCellHeight / 2 + 4, escape(map.rows[r]));
    for (std::size_t c = 0; c < map.columns.size(); ++c) {
      const double x = kRowLabels + kCellWidth * static_cast<double>(c);
      const auto value =
          r < map.values.size() && c < map.values[r].size() ? map.values[r][c] : std::nullopt;
      const double share = value && highest > 0 ? *value / highest : 0;
      svg += fmt::format(
          "<rect class=\"cell\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:g}\" height=\"{:g}\" "
          "fill=\"{}\" fill-opacity=\"{:.2f}\"><title>{} to {}: {}</title></rect>\n"
          "<text class=\"cell-value\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
          x, y, kCellWidth, kCellHeight, value ? colour(0) : "#eaeef2", value ? share : 1.0,
          escape(map.rows[r]), escape(map.columns[c]),
          value ? escape(units::format_rate(*value)) : "none", x + kCellWidth / 2,
          y + kCellHeight / 2 + 4, value ? fmt::format("{:.1f}", *value / 1e9) : "-");
    }
  }
  svg += fmt::format(
      "<text class=\"axis\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n"
      "<text class=\"axis\" transform=\"translate(18 {:.1f}) rotate(-90)\">{}</text>\n",
      kRowLabels + kCellWidth * static_cast<double>(map.columns.size()) / 2, height - 14,
      escape(map.column_label + " (GB/s in each cell)"),
      grid_top + kCellHeight * static_cast<double>(map.rows.size()) / 2, escape(map.row_label));
  return svg + "</svg>\n";
}

}  // namespace acco::bench::detail
