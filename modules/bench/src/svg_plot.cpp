#include "svg_plot.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "acco/core/units.hpp"

#include "format.hpp"
#include "svg_charts.hpp"

namespace acco::bench::detail {
namespace {

constexpr double kWidth = 720;
constexpr double kHeight = 400;
constexpr double kLeft = 72;
constexpr double kRight = 24;
constexpr double kTop = 48;  // the title and the legend
constexpr double kBottom = 56;
constexpr double kPlotWidth = kWidth - kLeft - kRight;
constexpr double kPlotHeight = kHeight - kTop - kBottom;
// The x axis always spans at least 4 KiB .. 1 GiB, so plots of different cases line up.
constexpr int kMinExponent = 12;
constexpr int kMaxExponent = 30;

struct Axes {
  int lo_exponent = kMinExponent;
  int hi_exponent = kMaxExponent;
  double top_gbps = 1;

  [[nodiscard]] double x(double bytes) const {
    const double e = std::log2(std::max(bytes, 1.0));
    return kLeft + (e - lo_exponent) / (hi_exponent - lo_exponent) * kPlotWidth;
  }
  [[nodiscard]] double y(double bytes_per_second) const {
    return kTop + kPlotHeight - bytes_per_second / 1e9 / top_gbps * kPlotHeight;
  }
};

}  // namespace

std::string svg_plot(const BenchResult& r) {
  std::vector<SweepPoint> points = r.sweep;
  std::sort(points.begin(), points.end(),
            [](const SweepPoint& a, const SweepPoint& b) { return a.bytes < b.bytes; });
  const double reference = sweep_reference(r);
  const bool link = r.peak_bytes_per_second > 0;

  Axes axes;
  double best = 0;
  for (const auto& p : points) {
    best = std::max(best, p.median_bytes_per_second);
    if (p.bytes > 0) {
      // floor(log2) and ceil(log2) of the size.
      axes.lo_exponent = std::min(axes.lo_exponent, static_cast<int>(std::bit_width(p.bytes)) - 1);
      axes.hi_exponent = std::max(axes.hi_exponent, static_cast<int>(std::bit_width(p.bytes - 1)));
    }
  }
  const double top = std::max({best, r.peak_bytes_per_second, 1e9}) * 1.1 / 1e9;
  const double step = nice_step(top);
  axes.top_gbps = std::ceil(top / step) * step;

  const auto title = fmt::format("{} on {}", r.case_key, r.device);
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" viewBox=\"0 0 {} {}\" "
      "width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"{}\">\n<title>{}</title>\n",
      kWidth, kHeight, kWidth, kHeight, escape(title), escape(title));
  // The visible title and the legend: the curve, the peak line and the half-peak mark.
  svg += fmt::format(
      "<text class=\"chart-title\" x=\"{:g}\" y=\"18\">Bandwidth against size: {}</text>\n"
      "<g class=\"legend\">"
      "<g transform=\"translate({:g} {:g})\"><line class=\"curve\" x1=\"0\" y1=\"0\" x2=\"14\" "
      "y2=\"0\"/><text x=\"18\" y=\"4\">median rate</text></g>"
      "<g transform=\"translate({:g} {:g})\"><line class=\"{}\" x1=\"0\" y1=\"0\" x2=\"14\" "
      "y2=\"0\" stroke-dasharray=\"4 2\"/><text x=\"18\" y=\"4\">{}</text></g>"
      "<g transform=\"translate({:g} {:g})\"><line class=\"half\" x1=\"0\" y1=\"0\" x2=\"14\" "
      "y2=\"0\" stroke-dasharray=\"3 3\"/><text x=\"18\" y=\"4\">half of the {}</text></g>"
      "</g>\n",
      kLeft, escape(title), kLeft, 34.0, kLeft + 110, 34.0, link ? "peak" : "note",
      link ? "link peak" : "link peak unknown", kLeft + 270, 34.0, link ? "peak" : "best rate");

  // Grid, ticks and labels. x: a tick per power of two, a label every second (every fourth on
  // a wide range).
  const int label_every = axes.hi_exponent - axes.lo_exponent > 20 ? 4 : 2;
  for (int e = axes.lo_exponent; e <= axes.hi_exponent; ++e) {
    const double x = axes.x(std::exp2(e));
    const bool labelled = (e - axes.lo_exponent) % label_every == 0;
    svg += fmt::format(
        "<line class=\"{}\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>\n",
        labelled ? "grid" : "tick", x, labelled ? kTop : kTop + kPlotHeight, x,
        kTop + kPlotHeight + (labelled ? 6 : 3));
    if (labelled) {
      svg += fmt::format("<text class=\"xt\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", x,
                         kTop + kPlotHeight + 20, escape(size_text(std::uint64_t{1} << e)));
    }
  }
  const auto ticks = static_cast<int>(std::lround(axes.top_gbps / step));
  for (int tick = 0; tick <= ticks; ++tick) {
    const double v = step * tick;
    const double y = axes.y(v * 1e9);
    svg += fmt::format(
        "<line class=\"grid\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>\n"
        "<text class=\"yt\" x=\"{:.1f}\" y=\"{:.1f}\">{:g}</text>\n",
        kLeft - 6, y, kLeft + kPlotWidth, y, kLeft - 10, y + 4, v);
  }
  svg += fmt::format(
      "<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n"
      "<text class=\"axis\" x=\"{:.1f}\" y=\"{:.1f}\">transfer size (log2 scale)</text>\n"
      "<text class=\"axis\" transform=\"translate(18 {:.1f}) rotate(-90)\">bandwidth "
      "(GB/s)</text>\n",
      kLeft, kTop, kPlotWidth, kPlotHeight, kLeft + kPlotWidth / 2, kHeight - 12,
      kTop + kPlotHeight / 2);

  if (link) {
    const double y = axes.y(r.peak_bytes_per_second);
    svg += fmt::format(
        "<line class=\"peak\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
        "stroke-dasharray=\"8 5\"/>\n<text class=\"peak-label\" x=\"{:.1f}\" y=\"{:.1f}\">link "
        "peak {}</text>\n",
        kLeft, y, kLeft + kPlotWidth, y, kLeft + kPlotWidth - 6, y - 6,
        escape(units::format_rate(r.peak_bytes_per_second)));
  } else {
    svg += fmt::format("<text class=\"note\" x=\"{:.1f}\" y=\"{:.1f}\">link peak unknown</text>\n",
                       kLeft + kPlotWidth - 6, kTop + 16);
  }

  if (const auto half = half_peak_bytes(points, reference); half) {
    const double x = axes.x(static_cast<double>(*half));
    svg += fmt::format(
        "<line class=\"half\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
        "stroke-dasharray=\"3 3\"/>\n<text class=\"half-label\" x=\"{:.1f}\" y=\"{:.1f}\">half "
        "of {} at {}</text>\n",
        x, kTop, x, kTop + kPlotHeight, x + 4, kTop + kPlotHeight - 8, link ? "peak" : "best",
        escape(units::format_bytes(*half)));
  }

  std::string line;
  for (const auto& p : points) {
    line += fmt::format("{}{:.1f},{:.1f}", line.empty() ? "" : " ",
                        axes.x(static_cast<double>(p.bytes)), axes.y(p.median_bytes_per_second));
  }
  svg += fmt::format("<polyline class=\"curve\" points=\"{}\"/>\n", line);
  for (const auto& p : points) {
    svg += fmt::format(
        "<circle class=\"point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\"><title>{}: {}</title>"
        "</circle>\n",
        axes.x(static_cast<double>(p.bytes)), axes.y(p.median_bytes_per_second),
        escape(size_text(p.bytes)), escape(units::format_rate(p.median_bytes_per_second)));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace acco::bench::detail
