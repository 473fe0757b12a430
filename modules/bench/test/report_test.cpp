#include "acco/bench/report.hpp"

#include <regex>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "acco/core/units.hpp"

#include "format.hpp"
#include "runs.hpp"

namespace acco::bench {
namespace {

using testing::sample_run;

// The blocks rendered by the one text reporter, as acco bench prints them.
std::string text_table(std::span<const BenchResult> results) {
  report::Document doc;
  doc.add(results_table(results));
  return report::render_text(doc);
}
std::string text_report(const BenchRun& run) {
  return report::render_text(run_report(run));
}
std::string text_comparison(std::span<const Comparison> comparisons) {
  report::Document doc;
  add_comparison(doc, comparisons);
  return report::render_text(doc);
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) {
    ++n;
  }
  return n;
}

// Every opened element is closed, in order. Self-closing tags and HTML void elements stand
// alone; <!DOCTYPE> is skipped. Returns the first problem, or "" when balanced.
std::string unbalanced(const std::string& html) {
  static const std::set<std::string> kVoid = {"meta", "br", "hr", "img", "input", "link"};
  static const std::regex kTag(R"(<(/?)([a-zA-Z][a-zA-Z0-9-]*)[^>]*?(/?)>)");
  std::vector<std::string> open;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), kTag); it != std::sregex_iterator();
       ++it) {
    const auto& m = *it;
    const std::string name = m[2];
    if (m[3] == "/" || kVoid.contains(name)) {
      continue;
    }
    if (m[1] == "/") {
      if (open.empty() || open.back() != name) {
        return "unexpected </" + name + "> with " + (open.empty() ? "nothing" : open.back()) +
               " open";
      }
      open.pop_back();
    } else {
      open.push_back(name);
    }
  }
  return open.empty() ? "" : "<" + open.back() + "> never closed";
}

// The <svg> element whose <title> starts with `title`; "" when there is none.
std::string svg_titled(const std::string& html, const std::string& title) {
  const auto at = html.find("<title>" + title);
  if (at == std::string::npos) {
    return "";
  }
  const auto begin = html.rfind("<svg", at);
  const auto end = html.find("</svg>", at);
  return html.substr(begin, end + 6 - begin);
}

BenchRun two_sweeps() {
  auto run = sample_run();
  auto unknown_peak = testing::measured("host_memcpy_sweep", 12e9, 0, "host");
  unknown_peak.sweep = {{4096, 2e9}, {1 << 20, 10e9}, {1 << 30, 12e9}};
  unknown_peak.strategy = "";
  run.results.push_back(unknown_peak);
  return run;
}

TEST(TextReportTest, TableMatchesGolden) {
  EXPECT_EQ(text_table(sample_run().results),
            "case              device        size         median     min        max        CoV   "
            "peak       eff.  verdict  strategy\n"
            "h2d_pinned_ce     0000:18:00.0  512 MiB      55.3 GB/s  54.7 GB/s  55.9 GB/s  0.5%  "
            "63.0 GB/s  88%   ok       direct\n"
            "h2d_pinned_sweep  0000:18:00.0  4 KiB-1 GiB  54.9 GB/s  54.4 GB/s  55.4 GB/s  0.5%  "
            "63.0 GB/s  87%   ok       direct\n"
            "h2d_latency       0000:18:00.0  4 B          2.40 us    -          -          0.5%  "
            "-          -     unknown  direct\n"
            "p2p_read_ce       0000:18:00.0  waived: needs two GPUs, found one\n");
}

TEST(TextReportTest, ReportHasHeaderTableAndSweepLine) {
  const auto text = text_report(sample_run());
  EXPECT_EQ(text.rfind("acco bench on gpu-node-7 at 2025-03-01T12:00:00Z (machine "
                       "gpu-node-7-00000000deadbeef)\n",
                       0),
            0U);
  EXPECT_NE(text.find(text_table(sample_run().results)), std::string::npos);
  EXPECT_NE(text.find("h2d_pinned_sweep on 0000:18:00.0: 19 points; half of the link's peak "
                      "(63.0 GB/s) reached at "),
            std::string::npos)
      << text;
}

BenchResult latency_result() {
  auto r = testing::measured("latency_h2d", 0);
  r.bytes = 8;
  r.min_bytes_per_second = 0;
  r.max_bytes_per_second = 0;
  r.latency_seconds = 12.5e-6;
  r.latency_min_seconds = 9.75e-6;
  r.latency_max_seconds = 310.2e-6;
  r.latency_p99_seconds = 41.0e-6;
  r.timer = kTimerHostClock;
  r.strategy = "plain async copy + wait";
  return r;
}

// The issue-33 run printed "latency_h2d 8 B 302.1 kB/s": a latency case is a time per copy.
TEST(TextReportTest, LatencyCasesShowMicrosecondsNotRates) {
  const std::vector<BenchResult> results = {latency_result()};
  EXPECT_EQ(text_table(results),
            "case         device        size  median    min      max        CoV   peak  eff.  "
            "verdict  strategy\n"
            "latency_h2d  0000:18:00.0  8 B   12.50 us  9.75 us  310.20 us  0.5%  -     -     "
            "unknown  plain async copy + wait\n");
  BenchRun run = testing::sample_run();
  run.results = results;
  EXPECT_NE(text_report(run).find("latency_h2d on 0000:18:00.0: time per 8 B copy, median 12.50 "
                                  "us, min 9.75 us, max 310.20 us, p99 41.00 us\n"),
            std::string::npos)
      << text_report(run);
}

TEST(TextReportTest, ReBasedEmulatedPeaksAreListed) {
  BenchRun run = testing::sample_run();
  auto fine = testing::measured("h2d_pinned_plain", 15e9, 19e9, "host 0");
  fine.verdict = "emulated";
  fine.peak_source = "the lower of the emulated link (31.5 GB/s) and ...";
  fine.bytes = 1 << 20;
  auto rebased = testing::measured("h2d_pinned_engine", 20e9, 20e9, "host 0");
  rebased.verdict = "emulated";
  rebased.peak_source = "re-based to the fastest rate measured at 512 MiB ...";
  auto same = rebased;
  same.case_key = "h2d_pinned_plain";
  run.results = {fine, rebased, same};
  const auto text = text_report(run);
  EXPECT_NE(text.find("peak on emulated devices: the lower of the emulated link and this host's "
                      "own copy"),
            std::string::npos)
      << text;
  const std::string line = "  peak re-based to the fastest rate measured at 512 MiB ...\n";
  ASSERT_NE(text.find(line), std::string::npos) << text;
  EXPECT_EQ(text.find(line, text.find(line) + 1), std::string::npos) << text;  // once a size
}

// Issue 33: h2d_pageable_engine 9.8 GB/s beside h2d_pageable_plain 14.7 GB/s went unremarked.
TEST(TextReportTest, EachEngineCaseIsSetAgainstItsPlainTwinWithItsNoiseBand) {
  BenchRun run = testing::sample_run();
  auto plain = testing::measured("h2d_pageable_plain", 14.7e9, 0, "host 0");
  auto slower = testing::measured("h2d_pageable_engine", 9.8e9, 0, "host 0");
  auto d2h_plain = testing::measured("d2h_pageable_plain", 10e9, 0, "host 0");
  auto d2h_engine = testing::measured("d2h_pageable_engine", 10.1e9, 0, "host 0");
  auto other_device = testing::measured("h2d_pinned_engine", 9e9, 0, "host 1");
  run.results = {plain, slower, d2h_plain, d2h_engine, other_device};
  const std::string heading =
      "engine against the plain path (the engine's median rate; the ratio of engine to plain "
      "timed in alternating rounds on the same buffers, in brackets -/+ three standard errors; "
      "without paired rounds, the ratio of the two cases' medians with the band from both "
      "sides' min and max):\n";
  EXPECT_EQ(engine_vs_plain(run),
            heading +
                "  h2d_pageable_engine  host 0  9.80 GB/s  vs plain  14.7 GB/s  0.67x (0.65-0.68)  "
                "slower\n"
                "  d2h_pageable_engine  host 0  10.1 GB/s  vs plain  10.0 GB/s  1.01x (0.99-1.03)  "
                "same within noise\n");
  // An engine case timed in rounds alternating with the plain copy is judged by that pairing.
  run.results[1].against_plain = PairedRatio{
      .rounds = 5, .ratio = 0.97, .low = 0.91, .high = 1.03, .verdict = "same within noise"};
  EXPECT_NE(
      engine_vs_plain(run).find("  h2d_pageable_engine  host 0  9.80 GB/s  vs plain  paired, 5 "
                                "rounds  0.97x (0.91-1.03)  same within noise\n"),
      std::string::npos)
      << engine_vs_plain(run);
  EXPECT_NE(text_report(run).find(engine_vs_plain(run)), std::string::npos);
  EXPECT_NE(html_report(run, {}).find("<h2>Engine against the plain path</h2>\n<pre>engine "
                                      "against the plain path"),
            std::string::npos);
  EXPECT_EQ(engine_vs_plain(testing::sample_run()), "");
}

TEST(TextReportTest, EmptyTableIsTheHeader) {
  EXPECT_EQ(text_table({}),
            "case  device  size  median  min  max  CoV  peak  eff.  verdict  strategy\n");
}

TEST(TextReportTest, WithoutAPreviousRunTheComparisonSaysSo) {
  report::Document doc;
  add_comparison(doc, {}, false);
  EXPECT_EQ(report::render_text(doc), "\nNo previous run on this machine to compare with.\n");
}

TEST(TextReportTest, ComparisonMatchesGolden) {
  auto before = sample_run();
  before.results[0].median_bytes_per_second = 60e9;
  before.results.push_back(testing::measured("d2h_pinned_ce", 50e9));
  EXPECT_EQ(text_comparison(compare(before, sample_run())),
            "\n"  // set apart from the run's report
            "case              device        change     before     now        change %  threshold\n"
            "h2d_pinned_ce     0000:18:00.0  regressed  60.0 GB/s  55.3 GB/s  -7.8%     5.0%\n"
            "h2d_pinned_sweep  0000:18:00.0  unchanged  54.9 GB/s  54.9 GB/s  +0.0%     5.0%\n"
            "h2d_latency       0000:18:00.0  unchanged  2.40 us    2.40 us    +0.0%     5.0%\n"
            "d2h_pinned_ce     0000:18:00.0  missing    50.0 GB/s  -          -         -\n");
}

TEST(FormatTest, SizesLatenciesAndPercentages) {
  EXPECT_EQ(detail::size_text(4096), "4 KiB");
  EXPECT_EQ(detail::size_text(1ULL << 30), "1 GiB");
  EXPECT_EQ(detail::size_text(512), "512 B");
  EXPECT_EQ(detail::size_text(3 << 20), "3.00 MiB");
  EXPECT_EQ(units::format_seconds(850e-9), "850 ns");
  EXPECT_EQ(units::format_seconds(5.2e-6), "5.20 us");
  EXPECT_EQ(units::format_seconds(1.3e-3), "1.30 ms");
  EXPECT_EQ(units::format_percent(0.8254), "83%");
  EXPECT_EQ(units::format_percent(0.0051, 1), "0.5%");
  EXPECT_EQ(detail::escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
}

TEST(HtmlReportTest, LatencyCasesShowMicroseconds) {
  BenchRun run = testing::sample_run();
  run.results = {latency_result()};
  const auto html = html_report(run, {});
  EXPECT_NE(html.find("<td class=\"num\">12.50 us</td><td class=\"num\">9.75 us</td><td "
                      "class=\"num\">310.20 us</td>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<h2>Latency</h2>"), std::string::npos);
  EXPECT_NE(html.find("p99 41.00 us"), std::string::npos);
  EXPECT_EQ(html.find("B/s</td>"), std::string::npos) << html;
}

TEST(HtmlReportTest, IsOneBalancedDocument) {
  const auto html = html_report(two_sweeps(), {});
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n<html lang=\"en\">", 0), 0U);
  EXPECT_EQ(html.substr(html.size() - 8), "</html>\n");
  EXPECT_EQ(unbalanced(html), "");
  EXPECT_EQ(count(html, "<html"), 1U);
  EXPECT_EQ(count(html, "<style>"), 1U);
}

TEST(HtmlReportTest, OneSweepPlotPerSweptCase) {
  const std::string kSweepTitle =
      "<text class=\"chart-title\" x=\"72\" y=\"18\">Bandwidth against size";
  const auto html = html_report(two_sweeps(), {});
  EXPECT_EQ(count(html, kSweepTitle), 2U);
  EXPECT_EQ(count(html, "<svg"), count(html, "</svg>"));
  EXPECT_EQ(count(html, "<figure>"), count(html, "</figure>"));
  EXPECT_EQ(count(html_report(sample_run(), {}), kSweepTitle), 1U);
  auto no_sweeps = sample_run();
  no_sweeps.results.erase(no_sweeps.results.begin() + 1);
  EXPECT_EQ(count(html_report(no_sweeps, {}), kSweepTitle), 0U);
  EXPECT_EQ(count(html_report(no_sweeps, {}), "<h2>Bandwidth against size"), 0U);
}

TEST(HtmlReportTest, PlotHasAxesPeakLineAndHalfPeakMark) {
  const auto svg = svg_titled(html_report(sample_run(), {}), "h2d_pinned_sweep on ");
  ASSERT_NE(svg, "");
  EXPECT_EQ(count(svg, "<line class=\"peak\" x1=\"72.0\""), 1U);
  EXPECT_NE(svg.find("stroke-dasharray=\"8 5\"/>\n<text class=\"peak-label\""), std::string::npos);
  EXPECT_NE(svg.find(">link peak 63.0 GB/s</text>"), std::string::npos);
  EXPECT_EQ(count(svg, "<line class=\"half\" x1=\"0\""), 1U);  // the legend's mark
  EXPECT_EQ(count(svg, "<line class=\"half\""), 2U);           // and the plot's
  EXPECT_NE(svg.find(">half of peak at "), std::string::npos);
  EXPECT_NE(svg.find("<text class=\"xt\" x=\"72.0\" y=\"364.0\">4 KiB</text>"), std::string::npos);
  EXPECT_NE(svg.find(">1 GiB</text>"), std::string::npos);
  EXPECT_NE(svg.find(">transfer size (log2 scale)</text>"), std::string::npos);
  EXPECT_NE(svg.find(">bandwidth (GB/s)</text>"), std::string::npos);
  EXPECT_EQ(count(svg, "<circle class=\"point\""), 19U);
  EXPECT_EQ(count(svg, "<polyline class=\"curve\""), 1U);
  EXPECT_NE(svg.find("<g class=\"legend\">"), std::string::npos);
  EXPECT_NE(svg.find(">median rate</text>"), std::string::npos);
}

TEST(HtmlReportTest, UnknownPeakIsSaidAndHalfOfBestIsMarked) {
  const auto svg = svg_titled(html_report(two_sweeps(), {}), "host_memcpy_sweep on ");
  ASSERT_NE(svg, "");
  EXPECT_EQ(count(svg, "<line class=\"peak\""), 0U);
  EXPECT_NE(svg.find(">link peak unknown</text>"), std::string::npos);
  EXPECT_NE(svg.find(">half of best at "), std::string::npos);
  EXPECT_NE(svg.find(">half of the best rate</text>"), std::string::npos);
}

// Two devices, every family of chart: copies per direction against the peak, small copies,
// latency and P2P.
BenchRun two_devices() {
  BenchRun run = sample_run();
  run.results.clear();
  for (const std::string device : {"gpu0", "gpu1"}) {
    run.results.push_back(testing::measured("h2d_pinned_plain", 50e9, 63e9, device));
    run.results.push_back(testing::measured("h2d_pageable_engine", 30e9, 63e9, device));
    run.results.push_back(testing::measured("d2h_pinned_plain", 51e9, 63e9, device));
    run.results.push_back(testing::measured("bidir_pinned_h2d", 45e9, 63e9, device));
    run.results.push_back(testing::measured("small_copies_one_by_one", 1.5e9, 63e9, device));
    run.results.push_back(testing::measured("small_copies_batched", 3e9, 63e9, device));
    auto latency = testing::measured("latency_h2d", 0, 0, device);
    latency.bytes = 8;
    latency.latency_seconds = 6e-6;
    latency.latency_min_seconds = 5e-6;
    latency.latency_p99_seconds = 9e-6;
    latency.latency_max_seconds = 20e-6;
    run.results.push_back(latency);
  }
  run.results.push_back(testing::measured("p2p", 40e9, 0, "gpu0->gpu1"));
  run.results.push_back(testing::measured("p2p", 20e9, 0, "gpu1->gpu0"));
  run.results.push_back(testing::measured("host_memcpy", 10e9, 0, "host"));
  return run;
}

TEST(HtmlReportTest, EveryChartHasATitleAxisLabelsWithUnitsAndALegend) {
  const auto html = html_report(two_devices(), {});
  EXPECT_EQ(unbalanced(html), "");
  for (const std::string title :
       {"Host to device", "Device to host", "Small copies: one by one and batched",
        "Latency per copy", "Peer-to-peer copies"}) {
    const auto svg = svg_titled(html, title);
    ASSERT_NE(svg, "") << title;
    EXPECT_NE(svg.find("<g class=\"legend\">"), std::string::npos) << title;
    EXPECT_TRUE(std::regex_search(
        svg, std::regex(R"(<text class="axis"[^>]*>[^<]*\((GB/s|µs)[^)]*\)</text>)")))
        << title << ": no axis label with a unit\n"
        << svg;
  }
}

TEST(HtmlReportTest, DirectionChartsHaveABarPerCaseAndDeviceAndThePeak) {
  const auto html = html_report(two_devices(), {});
  const auto h2d = svg_titled(html, "Host to device");
  EXPECT_EQ(count(h2d, "<rect class=\"bar\""), 6U);  // 3 cases (bidir's h2d half too) x 2 devices
  EXPECT_NE(h2d.find("<title>h2d_pageable_engine, gpu1: 30.0 GB/s</title>"), std::string::npos);
  EXPECT_NE(h2d.find(">link peak 63.0 GB/s</text>"), std::string::npos);
  EXPECT_EQ(count(svg_titled(html, "Device to host"), "<rect class=\"bar\""), 2U);
  // The note beside them: what one thread's memcpy reaches here.
  EXPECT_NE(html.find("One thread&#39;s memcpy on this host moved 10.0 GB/s"), std::string::npos)
      << html;
}

TEST(HtmlReportTest, PeersAreAMatrixFromRowToColumn) {
  const auto map = svg_titled(html_report(two_devices(), {}), "Peer-to-peer copies");
  EXPECT_NE(map.find("<title>gpu0 to gpu1: 40.0 GB/s</title>"), std::string::npos);
  EXPECT_NE(map.find("<title>gpu1 to gpu0: 20.0 GB/s</title>"), std::string::npos);
  EXPECT_NE(map.find("<title>gpu0 to gpu0: none</title>"), std::string::npos);
  EXPECT_EQ(count(map, "<rect class=\"cell\""), 4U);
}

TEST(TextReportTest, PeersAreAMatrixFromRowToColumn) {
  const std::string text = text_report(two_devices());
  EXPECT_NE(text.find("p2p in GB/s, rows the source device, columns the destination:\n"
                      "  from \\ to   gpu0   gpu1\n"
                      "  gpu0           -  40.00\n"
                      "  gpu1       20.00      -\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text_report(sample_run()).find("p2p in GB/s"), std::string::npos);  // p2p waived
}

TEST(HtmlReportTest, LatencyIsADistribution) {
  const auto svg = svg_titled(html_report(two_devices(), {}), "Latency per copy");
  EXPECT_NE(svg.find("<title>latency_h2d gpu0: min 5.00 us, median 6.00 us, p99 9.00 us, max "
                     "20.00 us</title>"),
            std::string::npos)
      << svg;
  EXPECT_EQ(count(svg, "<line class=\"whisker\""), 3U);  // two ranges and the legend's
}

TEST(HtmlReportTest, SweepsBelow4KiBOrAbove1GiBWidenTheAxis) {
  auto run = sample_run();
  run.results[1].sweep = {{1, 1e6}, {4ULL << 30, 50e9}};
  const auto html = html_report(run, {});
  EXPECT_NE(html.find(">1 B</text>"), std::string::npos);
  EXPECT_NE(html.find(">4 GiB</text>"), std::string::npos);
  EXPECT_EQ(unbalanced(html), "");
}

TEST(HtmlReportTest, NoScriptsAndNoUrlsButTheSvgNamespace) {
  auto before = sample_run();
  before.results[0].median_bytes_per_second = 60e9;
  const auto html = html_report(two_sweeps(), compare(before, two_sweeps()));
  EXPECT_EQ(count(html, "<script"), 0U);
  EXPECT_EQ(count(html, "http"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_EQ(count(html, "url("), 0U);
  EXPECT_EQ(count(html, "@import"), 0U);
}

TEST(HtmlReportTest, ComparisonTableOnlyWithComparisons) {
  auto before = sample_run();
  before.results[0].median_bytes_per_second = 60e9;
  const auto with = html_report(sample_run(), compare(before, sample_run()));
  EXPECT_EQ(count(with, "<table"), 2U);
  EXPECT_EQ(count(with, "</table>"), 2U);
  EXPECT_NE(with.find("<td class=\"c-regressed\">regressed</td>"), std::string::npos);
  EXPECT_EQ(unbalanced(with), "");
  const auto without = html_report(sample_run(), {});
  EXPECT_EQ(count(without, "<table"), 1U);
  EXPECT_EQ(count(without, "Change since the last run"), 0U);
}

TEST(HtmlReportTest, AMissingCaseTrendSaysItEndsOnAnOlderRun) {
  Comparison gone{.case_key = "h2d_pinned",
                  .device = "GPU0",
                  .change = Change::kMissing,
                  .metric = "median_bytes_per_second",
                  .previous = 20e9};
  gone.trend = {{"2025-03-01T00:00:00Z", 21e9}, {"2025-03-02T00:00:00Z", 20e9}};
  Comparison kept = gone;
  kept.case_key = "d2h_pinned";
  kept.change = Change::kUnchanged;
  kept.current = 20e9;
  const std::vector<Comparison> comparisons{gone, kept};
  const auto html = html_report(sample_run(), comparisons);
  EXPECT_NE(html.find("h2d_pinned on GPU0 in this machine&#39;s last 2 runs that measured it; this "
                      "run did not (missing), so the line ends on an older run."),
            std::string::npos);
  EXPECT_NE(html.find("d2h_pinned on GPU0 in this machine&#39;s last 2 runs that measured it, this "
                      "one last (unchanged)."),
            std::string::npos);
}

TEST(HtmlReportTest, VerdictsAndWaivedCasesAreShown) {
  const auto html = html_report(sample_run(), {});
  EXPECT_NE(html.find("<td class=\"v-ok\">ok</td>"), std::string::npos);
  EXPECT_NE(html.find("<td colspan=\"10\" class=\"s-waived\">waived: needs two GPUs, found "
                      "one</td>"),
            std::string::npos);
  EXPECT_NE(html.find("NVIDIA H200 at 0000:18:00.0 (Gen5 x16)"), std::string::npos);
}

TEST(HtmlReportTest, EscapesEveryTextFromTheRun) {
  auto run = two_sweeps();
  run.host = "a&b";
  run.results[1].case_key = "<script>alert(1)</script>";
  run.results[1].strategy = "\"quoted\"";
  run.results[3].reason = "<b>bold</b>";
  run.machine["kernel"] = "<i>6.1</i>";
  const auto html = html_report(run, compare(sample_run(), run));
  EXPECT_EQ(count(html, "<script"), 0U);
  EXPECT_EQ(count(html, "<b>"), 0U);
  EXPECT_EQ(count(html, "<i>"), 0U);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("<title>acco bench: a&amp;b</title>"), std::string::npos);
  EXPECT_NE(html.find("&quot;quoted&quot;"), std::string::npos);
  EXPECT_EQ(unbalanced(html), "");
}

}  // namespace
}  // namespace acco::bench
