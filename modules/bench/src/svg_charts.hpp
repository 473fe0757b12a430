// The bench page's charts besides the size sweep, as inline SVG elements: grouped bars against a
// reference line (rates per case and device against the link's peak; small copies one by one
// against batched), ranges (latency: min, median, p99, max per case and device) and a heat map
// (P2P rates, rows the source device, columns the destination, as nvbandwidth lays them out).
// Every chart has a <title>, axis labels with units and a legend; nothing is fetched or run.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace acco::bench::detail {

// Bars in groups: one group per category, one bar per series in each group, in the series'
// colour. `values[c][s]` is category c's value of series s; unset draws no bar. Values are in
// base units (bytes per second) and plotted divided by `unit_scale` (1e9: GB/s).
struct BarChart {
  std::string title;
  std::string y_label;           // with its unit: "bandwidth (GB/s)"
  std::string x_label = "case";  // what the categories are
  double unit_scale = 1e9;
  std::vector<std::string> categories;
  std::vector<std::string> series;
  std::vector<std::vector<std::optional<double>>> values;
  // A dashed line across the plot (the link's peak) with its legend entry; none when 0.
  double reference = 0;
  std::string reference_label;
};

// Per category: min, median, p99 and max as a whisker from min to max, a box from median to p99
// and a tick at the median. Values in seconds, plotted in microseconds.
struct Range {
  double min = 0;
  double median = 0;
  double p99 = 0;
  double max = 0;
};
struct RangeChart {
  std::string title;
  std::vector<std::string> categories;
  std::vector<Range> ranges;  // one per category
};

// A matrix of rates: `values[r][c]` from rows[r] to columns[c], unset where there is none (a
// device to itself). Cells are shaded by their share of the largest value and print it in GB/s.
struct HeatMap {
  std::string title;
  std::string row_label;     // "source device"
  std::string column_label;  // "destination device"
  std::vector<std::string> rows;
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<double>>> values;
};

// A metric over successive runs: the categories are the runs (oldest first), one line with a dot
// per run for each series; `values[s][c]` is series s in run c, unset where that run did not
// measure it. Values in base units, plotted divided by `unit_scale`; tooltips print them with
// `unit` ("GB/s", "us") after that division.
struct LineChart {
  std::string title;
  std::string y_label;          // with its unit: "bandwidth (GB/s)"
  std::string x_label = "run";  // what the categories are
  double unit_scale = 1e9;
  std::string unit = "GB/s";
  std::vector<std::string> categories;
  std::vector<std::string> series;
  std::vector<std::vector<std::optional<double>>> values;
};

[[nodiscard]] std::string svg_bars(const BarChart& chart);
[[nodiscard]] std::string svg_lines(const LineChart& chart);
[[nodiscard]] std::string svg_ranges(const RangeChart& chart);
[[nodiscard]] std::string svg_heatmap(const HeatMap& map);

// A step of 1, 2, 2.5 or 5 times a power of ten that cuts [0, top] into at most 8 parts.
[[nodiscard]] double nice_step(double top);

}  // namespace acco::bench::detail
