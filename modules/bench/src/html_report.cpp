#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "acco/bench/report.hpp"
#include "acco/core/units.hpp"

#include "format.hpp"
#include "svg_charts.hpp"
#include "svg_plot.hpp"

namespace acco::bench {
namespace {

using detail::BarChart;
using detail::devices_of;
using detail::escape;
using detail::HeatMap;
using detail::index_of;
using detail::LineChart;
using detail::RangeChart;
using detail::svg_bars;
using detail::svg_heatmap;
using detail::svg_lines;
using detail::svg_ranges;

// Inline and small: the page must open anywhere, offline, with nothing fetched.
constexpr const char* kStyle = R"css(
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #1d2430;
       padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; margin-top: 1.8em; border-bottom: 1px solid #d0d7de; }
.meta { color: #57606a; margin-top: 0; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { padding: 0.3em 0.7em; border-bottom: 1px solid #e5e8eb; text-align: left; }
th { background: #f3f5f7; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.v-ok { color: #116329; font-weight: 600; }
.v-low { color: #9a6700; font-weight: 600; }
.v-very-low { color: #cf222e; font-weight: 600; }
.v-unknown { color: #6e7781; }
.c-regressed { color: #cf222e; font-weight: 600; }
.c-improved { color: #116329; font-weight: 600; }
.c-new, .c-missing { color: #9a6700; }
.s-waived, .s-error { color: #6e7781; }
figure { margin: 1.2em 0; }
figcaption { font-size: 0.9em; color: #57606a; }
svg.plot { background: #fff; max-width: 100%; height: auto; }
svg .frame { fill: none; stroke: #8c959f; }
svg .grid { stroke: #eaeef2; }
svg .tick { stroke: #8c959f; }
svg text { font-size: 11px; fill: #424a53; }
svg .chart-title { font-size: 13px; font-weight: 600; fill: #1d2430; }
svg .xl { text-anchor: end; }
svg .xs { text-anchor: start; }
svg .whisker { stroke: #424a53; stroke-width: 1.5; }
svg .median { stroke: #1d2430; stroke-width: 2.5; }
svg .cell { stroke: #ffffff; }
svg .cell-value { text-anchor: middle; fill: #1d2430; }
.notes { font-size: 0.9em; color: #57606a; max-width: 720px; }
svg .xt { text-anchor: middle; }
svg .yt { text-anchor: end; }
svg .axis { text-anchor: middle; font-size: 12px; }
svg .curve { fill: none; stroke: #0969da; stroke-width: 2; }
svg .point { fill: #0969da; }
svg .peak { stroke: #cf222e; stroke-width: 1.5; }
svg .peak-label { fill: #cf222e; text-anchor: end; }
svg .half { stroke: #8250df; }
svg .half-label { fill: #8250df; }
svg .note { fill: #6e7781; text-anchor: end; }
)css";

std::string css_class(std::string_view prefix, std::string_view value) {
  std::string out(prefix);
  for (const char c : value) {
    out += (c == ' ') ? '-' : c;
  }
  return escape(out);
}

std::string cell(std::string_view text, bool numeric = false) {
  return fmt::format("<td{}>{}</td>", numeric ? " class=\"num\"" : "", escape(text));
}

std::string rate_or_dash(double bytes_per_second) {
  return bytes_per_second > 0 ? units::format_rate(bytes_per_second) : "-";
}

std::string results_table(const BenchRun& run) {
  std::string out =
      "<table class=\"results\">\n<thead><tr><th>case</th><th>device</th><th>size</th>"
      "<th>median</th><th>min</th><th>max</th><th>CoV</th><th>link peak</th><th>efficiency</th>"
      "<th>verdict</th><th>strategy</th><th>timer</th></tr></thead>\n<tbody>\n";
  for (const auto& r : run.results) {
    out += "<tr>" + cell(r.case_key) + cell(r.device);
    if (r.status != kStatusOk) {
      out +=
          fmt::format("<td colspan=\"10\" class=\"{}\">{}{}</td></tr>\n", css_class("s-", r.status),
                      escape(r.status), r.reason.empty() ? "" : ": " + escape(r.reason));
      continue;
    }
    const std::string size = r.sweep.empty() ? (r.bytes > 0 ? detail::size_text(r.bytes) : "-")
                                             : fmt::format("sweep, {} sizes", r.sweep.size());
    out += cell(size, true) + cell(detail::median_text(r), true) + cell(detail::min_text(r), true) +
           cell(detail::max_text(r), true) + cell(units::format_percent(r.cov, 1), true) +
           cell(rate_or_dash(r.peak_bytes_per_second), true) +
           cell(r.efficiency > 0 ? units::format_percent(r.efficiency) : "-", true) +
           fmt::format("<td class=\"{}\">{}</td>", css_class("v-", r.verdict), escape(r.verdict)) +
           cell(r.strategy.empty() ? "-" : r.strategy) + cell(r.timer.empty() ? "-" : r.timer) +
           "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

std::string comparison_table(std::span<const Comparison> comparisons) {
  std::string out =
      "<table class=\"compare\">\n<thead><tr><th>case</th><th>device</th><th>change</th>"
      "<th>before</th><th>now</th><th>change %</th><th>threshold</th></tr></thead>\n<tbody>\n";
  for (const auto& c : comparisons) {
    const auto value = [&](double v) {
      return c.metric == "latency_seconds" ? units::format_seconds(v) : units::format_rate(v);
    };
    const bool both = c.change != Change::kNew && c.change != Change::kMissing;
    out += "<tr>" + cell(c.case_key) + cell(c.device) +
           fmt::format("<td class=\"{}\">{}</td>", css_class("c-", to_string(c.change)),
                       to_string(c.change)) +
           cell(c.change == Change::kNew ? "-" : value(c.previous), true) +
           cell(c.change == Change::kMissing ? "-" : value(c.current), true) +
           cell(both ? fmt::format("{:+.1f}%", c.relative_change * 100) : "-", true) +
           cell(both ? units::format_percent(c.threshold, 1) : "-", true) + "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

std::string machine_line(const BenchRun& run) {
  std::string text;
  if (const auto it = run.machine.find("kernel"); it != run.machine.end() && it->is_string()) {
    text += "kernel " + it->get<std::string>();
  }
  if (const auto it = run.machine.find("accelerators"); it != run.machine.end() && it->is_array()) {
    for (const auto& a : *it) {
      const auto name = a.value("name", std::string("?"));
      const auto pci = a.value("pci", std::string("?"));
      const auto link = a.value("link_current", std::string("unknown"));
      text += fmt::format("{}{} at {} ({})", text.empty() ? "" : "; ", name, pci, link);
    }
  }
  return escape(text);
}

std::string figure(const std::string& svg, const std::string& caption,
                   const std::vector<std::string>& notes) {
  std::string out = "<figure>\n" + svg + "<figcaption>" + escape(caption) + "</figcaption>\n";
  if (!notes.empty()) {
    out += "<ul class=\"notes\">\n";
    for (const auto& note : notes) {
      out += "<li>" + escape(note) + "</li>\n";
    }
    out += "</ul>\n";
  }
  return out + "</figure>\n";
}

// The notes that explain a chart of copies against the link's peak: where the peak of emulated
// devices comes from, and what one thread's memcpy reaches on this host.
std::vector<std::string> peak_notes(const BenchRun& run, bool differing_peaks) {
  std::vector<std::string> notes;
  if (differing_peaks) {
    notes.emplace_back(
        "The rows' peaks differ (each device's own link, or emulated peaks re-based to this "
        "host's copy rate): no one line is drawn; the table has each row's peak and "
        "efficiency.");
  }
  if (std::any_of(run.results.begin(), run.results.end(),
                  [](const BenchResult& r) { return r.verdict == "emulated"; })) {
    notes.emplace_back(
        "Peak on emulated devices: the lower of the emulated link and this host's own copy (what "
        "an emulated DMA does), measured after each case; no real link's band applies.");
  }
  for (const auto& r : run.results) {
    if (r.case_key == "host_memcpy" && r.status == kStatusOk) {
      notes.push_back(fmt::format(
          "One thread's memcpy on this host moved {}: a staged (pageable) copy needs several "
          "threads to go faster.",
          units::format_rate(r.median_bytes_per_second)));
    }
  }
  return notes;
}

bool is_direction_case(const BenchResult& r, std::string_view prefix) {
  return r.status == kStatusOk && r.sweep.empty() && !detail::is_latency(r) &&
         r.median_bytes_per_second > 0 &&
         (r.case_key.rfind(prefix, 0) == 0 ||
          r.case_key == fmt::format("bidir_pinned_{}", prefix.substr(0, 3)));
}

// One bar per case and device for one direction, against the link's peak.
std::string direction_chart(const BenchRun& run, std::string_view prefix,
                            const std::string& title) {
  BarChart chart;
  chart.title = title;
  chart.y_label = "bandwidth (GB/s)";
  chart.series = devices_of(run);
  std::optional<double> peak;
  bool differing = false;
  for (const auto& r : run.results) {
    if (!is_direction_case(r, prefix)) {
      continue;
    }
    const std::size_t c = index_of(chart.categories, r.case_key);
    chart.values.resize(chart.categories.size(),
                        std::vector<std::optional<double>>(chart.series.size()));
    const std::size_t s = index_of(chart.series, r.device);
    chart.values[c].resize(chart.series.size());
    chart.values[c][s] = r.median_bytes_per_second;
    if (r.peak_bytes_per_second > 0) {
      differing = differing || (peak && *peak != r.peak_bytes_per_second);
      peak = r.peak_bytes_per_second;
    }
  }
  if (chart.categories.empty()) {
    return {};
  }
  if (peak && !differing) {
    chart.reference = *peak;
    chart.reference_label = "link peak " + units::format_rate(*peak);
  }
  return figure(svg_bars(chart),
                title +
                    ": the median rate of each case on each device; the dashed line is the "
                    "peak of the link crossed.",
                peak_notes(run, differing));
}

std::string small_copies_chart(const BenchRun& run) {
  BarChart chart;
  chart.title = "Small copies: one by one and batched";
  chart.y_label = "bandwidth (GB/s)";
  chart.x_label = "device";
  for (const auto& r : run.results) {
    if (r.status != kStatusOk || r.case_key.rfind("small_copies_", 0) != 0) {
      continue;
    }
    const std::size_t c = index_of(chart.categories, r.device);
    const std::size_t s =
        index_of(chart.series, r.case_key == "small_copies_batched" ? "batched by the engine"
                                                                    : "one queued copy each");
    chart.values.resize(chart.categories.size());
    chart.values[c].resize(std::max(chart.values[c].size(), s + 1));
    chart.values[c][s] = r.median_bytes_per_second;
  }
  if (chart.categories.empty()) {
    return {};
  }
  for (auto& row : chart.values) {
    row.resize(chart.series.size());
  }
  return figure(svg_bars(chart),
                "Many 4 KiB host-to-device copies, each queued on its own and packed by the engine "
                "into few transfers, per device.",
                {});
}

std::string latency_chart(const BenchRun& run) {
  RangeChart chart;
  chart.title = "Latency per copy";
  for (const auto& r : run.results) {
    if (r.status != kStatusOk || !detail::is_latency(r) || !r.latency_seconds) {
      continue;
    }
    chart.categories.push_back(r.case_key + " " + r.device);
    const double median = *r.latency_seconds;
    chart.ranges.push_back({r.latency_min_seconds.value_or(median), median,
                            r.latency_p99_seconds.value_or(median),
                            r.latency_max_seconds.value_or(median)});
  }
  if (chart.categories.empty()) {
    return {};
  }
  return figure(svg_ranges(chart),
                "Time from submitting one small copy to its completion, as a distribution over "
                "the repetitions.",
                {});
}

// Rows the source device, columns the destination (nvbandwidth's layout).
std::string p2p_chart(const BenchRun& run) {
  const detail::PeerMatrix matrix = detail::peer_matrix(run);
  if (matrix.devices.empty()) {
    return {};
  }
  HeatMap map;
  map.title = "Peer-to-peer copies";
  map.row_label = "source device";
  map.column_label = "destination device";
  map.rows = matrix.devices;
  map.columns = matrix.devices;
  map.values = matrix.values;
  return figure(svg_heatmap(map),
                "Device-to-device copies between every pair (GB/s; a device to itself is not "
                "measured here: see d2d_local).",
                {});
}

// One chart per case and device with at least two runs in its trend: the comparison's metric
// over the machine's runs, this one last.
std::string trend_charts(std::span<const Comparison> comparisons) {
  std::string out;
  for (const Comparison& c : comparisons) {
    if (c.trend.size() < 2) {
      continue;
    }
    const bool latency = c.metric == "latency_seconds";
    LineChart chart;
    chart.title = fmt::format("Trend: {} on {}", c.case_key, c.device);
    chart.y_label = latency ? "time per copy (\u00b5s)" : "bandwidth (GB/s)";
    chart.unit_scale = latency ? 1e-6 : 1e9;
    chart.unit = latency ? "\u00b5s" : "GB/s";
    chart.x_label = "run (oldest first)";
    chart.series = {fmt::format("{} {}", c.case_key, latency ? "median latency" : "median rate")};
    chart.values.emplace_back();
    for (const TrendPoint& p : c.trend) {
      chart.categories.push_back(p.created);
      chart.values[0].emplace_back(p.value);
    }
    // A case missing now has no point for this run: its line ends on an older run, so the
    // caption says so instead of reading as this run's trend.
    const std::string caption =
        c.change == Change::kMissing
            ? fmt::format(
                  "{} on {} in this machine's last {} runs that measured it; this run "
                  "did not (missing), so the line ends on an older run.",
                  c.case_key, c.device, c.trend.size())
            : fmt::format(
                  "{} on {} in this machine's last {} runs that measured it, this one "
                  "last ({}).",
                  c.case_key, c.device, c.trend.size(), to_string(c.change));
    out += figure(svg_lines(chart), caption, {});
  }
  return out;
}

}  // namespace

std::string html_report(const BenchRun& run, std::span<const Comparison> comparisons) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>acco bench: {}</title>\n<style>{}</style>\n</head>\n<body>\n"
      "<h1>acco bench</h1>\n<p class=\"meta\">{} &middot; {} &middot; machine {}</p>\n"
      "<p class=\"meta\">{}</p>\n",
      escape(run.host), kStyle, escape(run.host), escape(run.created), escape(run.fingerprint),
      machine_line(run));

  out += "<h2>Results</h2>\n" + results_table(run);
  out +=
      "<p class=\"meta\">Rates are bytes copied per second in one direction (1 GB/s = 10<sup>9"
      "</sup> B/s), the median over repetitions. Efficiency is the median over the peak of the "
      "link crossed; the verdict compares it with published measurements of the same kind of "
      "path (docs/bench.md).</p>\n";

  std::string charts = direction_chart(run, "h2d", "Host to device") +
                       direction_chart(run, "d2h", "Device to host") + small_copies_chart(run) +
                       latency_chart(run) + p2p_chart(run);
  if (!charts.empty()) {
    out += "<h2>Charts</h2>\n" + charts;
  }

  std::string latencies;
  for (const auto& r : run.results) {
    if (r.status == kStatusOk && detail::is_latency(r)) {
      latencies += fmt::format("<li>{} on {}: time per {} copy, {}</li>\n", escape(r.case_key),
                               escape(r.device), escape(detail::size_text(r.bytes)),
                               escape(detail::latency_summary(r)));
    }
  }
  if (!latencies.empty()) {
    out += "<h2>Latency</h2>\n<ul class=\"latency\">\n" + latencies + "</ul>\n";
  }
  if (const std::string pairs = engine_vs_plain(run); !pairs.empty()) {
    out += "<h2>Engine against the plain path</h2>\n<pre>" + escape(pairs) + "</pre>\n";
  }

  if (!comparisons.empty()) {
    out += "<h2>Change since the last run</h2>\n" + comparison_table(comparisons);
    out +=
        "<p class=\"meta\">A change is flagged when it exceeds max(3 &times; the larger CoV, "
        "5%).</p>\n";
    if (const std::string trends = trend_charts(comparisons); !trends.empty()) {
      out += "<h2>Trend over the history</h2>\n" + trends;
    }
  }

  bool any_sweep = false;
  for (const auto& r : run.results) {
    if (r.status != kStatusOk || r.sweep.empty()) {
      continue;
    }
    if (!any_sweep) {
      out += "<h2>Bandwidth against size</h2>\n";
      any_sweep = true;
    }
    const double reference = detail::sweep_reference(r);
    const auto half = half_peak_bytes(r.sweep, reference);
    out += "<figure>\n" + detail::svg_plot(r) +
           fmt::format("<figcaption>{} on {}: {}; half of the {} ({}) {}.</figcaption>\n",
                       escape(r.case_key), escape(r.device),
                       escape(r.strategy.empty() ? std::string("-") : r.strategy),
                       r.peak_bytes_per_second > 0 ? "link's peak" : "best rate",
                       escape(units::format_rate(reference)),
                       half ? "reached at " + escape(units::format_bytes(*half))
                            : std::string("never reached")) +
           "</figure>\n";
  }
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace acco::bench
