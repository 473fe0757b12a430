#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "acco/bench/case.hpp"
#include "acco/bench/peer_verdicts.hpp"
#include "acco/bench/report.hpp"
#include "acco/core/units.hpp"
#include "acco/report/document.hpp"
#include "acco/report/table.hpp"

#include "format.hpp"

namespace acco::bench {
namespace {

using Row = std::vector<std::string>;

// Left-aligned columns two spaces apart. A row shorter than the header ends with one free text
// cell (a waived case's reason) that is not padded and does not widen the column it starts in.
report::Table left_table(const Row& header, const std::vector<Row>& rows) {
  report::Table table{.columns = {}, .rows = {}, .style = report::TableStyle::layout(0, 2)};
  for (const auto& h : header) {
    table.columns.push_back({.header = h, .align = report::Align::kLeft});
  }
  for (const auto& row : rows) {
    table.rows.emplace_back(row.begin(), row.end());
  }
  return table;
}

// A line of the report as it stands, not indented.
report::Note line(std::string text) {
  return report::Note{.text = std::move(text), .indent = 0};
}

std::string rate_or_dash(double bytes_per_second) {
  return bytes_per_second > 0 ? units::format_rate(bytes_per_second) : "-";
}

std::string size_column(const BenchResult& r) {
  if (!r.sweep.empty()) {
    const auto [lo, hi] = std::minmax_element(
        r.sweep.begin(), r.sweep.end(),
        [](const SweepPoint& a, const SweepPoint& b) { return a.bytes < b.bytes; });
    return fmt::format("{}-{}", detail::size_text(lo->bytes), detail::size_text(hi->bytes));
  }
  return r.bytes > 0 ? detail::size_text(r.bytes) : "-";
}

// The p2p rates as nvbandwidth prints them: rows the source, columns the destination, GB/s.
void add_peer_matrix(report::Document& doc, const BenchRun& run) {
  const detail::PeerMatrix matrix = detail::peer_matrix(run);
  if (matrix.devices.empty()) {
    return;
  }
  report::Table table{.columns = {{.header = "from \\ to", .align = report::Align::kLeft}},
                      .rows = {},
                      .style = report::TableStyle::layout(2, 2)};
  for (const auto& device : matrix.devices) {
    table.columns.push_back({.header = device, .align = report::Align::kRight});
  }
  for (std::size_t r = 0; r < matrix.devices.size(); ++r) {
    std::vector<std::string> row = {matrix.devices[r]};
    for (const auto& value : matrix.values[r]) {
      row.push_back(value ? fmt::format("{:.2f}", *value / 1e9) : "-");
    }
    table.rows.emplace_back(row.begin(), row.end());
  }
  doc.add(line("p2p in GB/s, rows the source device, columns the destination:"));
  doc.add(std::move(table));
}

// Each measured `*_engine` case beside its `*_plain` twin: a heading line, then one row a pair.
void add_engine_vs_plain(report::Document& doc, const BenchRun& run) {
  constexpr std::string_view kEngine = "_engine";
  std::vector<Row> rows;
  for (const auto& e : run.results) {
    const std::string& key = e.case_key;
    if (e.status != kStatusOk || key.size() <= kEngine.size() ||
        key.compare(key.size() - kEngine.size(), kEngine.size(), kEngine) != 0) {
      continue;
    }
    const std::string twin = key.substr(0, key.size() - kEngine.size()) + "_plain";
    if (const auto& a = e.against_plain; a && a->rounds > 0) {
      // Timed in alternating rounds with the plain copy: the ratio that judges the engine.
      rows.push_back({"  " + key, e.device, units::format_rate(e.median_bytes_per_second),
                      "vs plain", fmt::format("paired, {} rounds", a->rounds),
                      fmt::format("{:.2f}x ({:.2f}-{:.2f})", a->ratio, a->low, a->high),
                      a->verdict});
      continue;
    }
    for (const auto& p : run.results) {
      if (p.case_key != twin || p.device != e.device || p.status != kStatusOk ||
          p.median_bytes_per_second <= 0 || e.median_bytes_per_second <= 0) {
        continue;
      }
      const PeerRatio r = peer_ratio(e, p);
      rows.push_back({"  " + key, e.device, units::format_rate(e.median_bytes_per_second),
                      "vs plain", units::format_rate(p.median_bytes_per_second),
                      fmt::format("{:.2f}x ({:.2f}-{:.2f})", r.ratio, r.low, r.high),
                      r.within_noise ? "same within noise"
                      : r.ratio >= 1 ? "faster"
                                     : "slower"});
    }
  }
  if (rows.empty()) {
    return;
  }
  doc.add(line(
      "engine against the plain path (the engine's median rate; the ratio of engine to plain "
      "timed in alternating rounds on the same buffers, in brackets -/+ three standard errors; "
      "without paired rounds, the ratio of the two cases' medians with the band from both "
      "sides' min and max):"));
  doc.add(left_table(Row(7), rows));  // no header: the heading line says what the columns are
}

}  // namespace

report::Table results_table(std::span<const BenchResult> results) {
  const Row header = {"case", "device", "size", "median",  "min",     "max",
                      "CoV",  "peak",   "eff.", "verdict", "strategy"};
  std::vector<Row> rows;
  for (const auto& r : results) {
    if (r.status != kStatusOk) {
      rows.push_back({r.case_key, r.device,
                      r.reason.empty() ? r.status : fmt::format("{}: {}", r.status, r.reason)});
      continue;
    }
    rows.push_back({r.case_key, r.device, size_column(r), detail::median_text(r),
                    detail::min_text(r), detail::max_text(r), units::format_percent(r.cov, 1),
                    rate_or_dash(r.peak_bytes_per_second),
                    r.efficiency > 0 ? units::format_percent(r.efficiency) : "-", r.verdict,
                    r.strategy.empty() ? "-" : r.strategy});
  }
  return left_table(header, rows);
}

report::Document run_report(const BenchRun& run) {
  report::Document doc;
  doc.add(line(
      fmt::format("acco bench on {} at {} (machine {})", run.host, run.created, run.fingerprint)));
  doc.add(results_table(run.results));
  const auto emulated = std::find_if(run.results.begin(), run.results.end(),
                                     [](const BenchResult& r) { return r.verdict == "emulated"; });
  if (emulated != run.results.end() && !emulated->peak_source.empty()) {
    doc.add(line(
        "peak on emulated devices: the lower of the emulated link and this host's own copy "
        "(what an emulated DMA does: pinned host to device memory, at the row's size, on as many "
        "threads as copy engines) measured after each case; verdict \"emulated\": no real "
        "link's band applies"));
    std::vector<std::string> rebased;  // one line per size, not per row
    for (const auto& r : run.results) {
      if (r.verdict == "emulated" && r.peak_source.rfind("re-based", 0) == 0 &&
          std::find(rebased.begin(), rebased.end(), r.peak_source) == rebased.end()) {
        rebased.push_back(r.peak_source);
        doc.add(report::Note{.text = "peak " + r.peak_source, .indent = 2});
      }
    }
  }
  for (const auto& r : run.results) {
    if (r.status == kStatusOk && detail::is_latency(r)) {
      doc.add(line(fmt::format("{} on {}: time per {} copy, {}", r.case_key, r.device,
                               detail::size_text(r.bytes), detail::latency_summary(r))));
    }
  }
  add_peer_matrix(doc, run);
  add_engine_vs_plain(doc, run);
  for (const auto& r : run.results) {
    if (r.status != kStatusOk || r.sweep.empty()) {
      continue;
    }
    const double reference = detail::sweep_reference(r);
    const bool link = r.peak_bytes_per_second > 0;
    const auto half = half_peak_bytes(r.sweep, reference);
    doc.add(line(fmt::format("{} on {}: {} points; half of the {} ({}) {}", r.case_key, r.device,
                             r.sweep.size(), link ? "link's peak" : "best rate",
                             units::format_rate(reference),
                             half ? fmt::format("reached at {}", units::format_bytes(*half))
                                  : std::string("never reached"))));
  }
  return doc;
}

report::Document bench_report(const BenchRun& run) {
  report::Document doc = run_report(run);
  if (run.machine.contains("cuda_version")) {
    doc.add(line(fmt::format("CUDA driver {} (supports CUDA {})",
                             run.machine.value("cuda_driver_version", 0),
                             run.machine.value("cuda_version", ""))));
  }
  add_peer_verdicts(doc, peer_verdicts(run));
  return doc;
}

report::Document case_list_report() {
  report::Document doc;
  for (const auto& c : cases()) {
    const std::string suite = c->suite() == "transfer" ? "" : " [--suite " + c->suite() + "]";
    doc.add(line(fmt::format("{:<26} {}{}", c->key(), c->description(), suite)));
  }
  return doc;
}

std::string engine_vs_plain(const BenchRun& run) {
  report::Document doc;
  add_engine_vs_plain(doc, run);
  return report::render_text(doc);
}

void add_comparison(report::Document& doc, std::span<const Comparison> comparisons,
                    bool had_previous) {
  doc.add(report::Preformatted{.text = "\n"});  // a blank line after the run
  if (!had_previous) {
    doc.add(line("No previous run on this machine to compare with."));
    return;
  }
  const Row header = {"case", "device", "change", "before", "now", "change %", "threshold"};
  const auto value = [](const Comparison& c, double v) {
    return c.metric == "latency_seconds" ? units::format_seconds(v) : units::format_rate(v);
  };
  std::vector<Row> rows;
  for (const auto& c : comparisons) {
    const bool both = c.change != Change::kNew && c.change != Change::kMissing;
    rows.push_back({c.case_key, c.device, to_string(c.change),
                    c.change == Change::kNew ? "-" : value(c, c.previous),
                    c.change == Change::kMissing ? "-" : value(c, c.current),
                    both ? fmt::format("{:+.1f}%", c.relative_change * 100) : "-",
                    both ? units::format_percent(c.threshold, 1) : "-"});
  }
  doc.add(left_table(header, rows));
}

}  // namespace acco::bench
