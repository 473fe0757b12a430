// How a bench run reads for people: report blocks for the terminal and one self-contained HTML
// page (inline CSS and SVG plots, no scripts, no external resources) that shows every rate beside
// its link's peak, the verdicts, the change since the last run and a bandwidth-against-size plot
// per swept case. Pure functions; the caller renders the blocks (report::render_text) and writes
// the page where it wants.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "acco/bench/compare.hpp"
#include "acco/bench/result.hpp"
#include "acco/report/document.hpp"
#include "acco/report/table.hpp"

namespace acco::bench {

// Columns: case, device, size, median, min, max, CoV, peak, eff., verdict, strategy. Rates in
// decimal units (format_rate), sizes in binary units; "-" where unknown. A latency-only case
// shows its times per copy in microseconds in the median, min and max columns. A waived or
// failed case shows its status and reason after the device. Empty input gives the header only.
[[nodiscard]] report::Table results_table(std::span<const BenchResult> results);

// One header line (host, time, fingerprint), the table, what the peak of emulated devices is
// (and every re-based one), per latency case its times, the p2p matrix, each engine case against
// its plain twin on the same device (engine_vs_plain), then one line per swept case with the
// size reaching half of the peak.
[[nodiscard]] report::Document run_report(const BenchRun& run);

// `acco bench`'s text: run_report, the CUDA driver the run found (when it found one), then the
// storage suite's verdicts against its peers (add_peer_verdicts).
[[nodiscard]] report::Document bench_report(const BenchRun& run);

// Every case, one line each: its key, its description and, outside the transfer suite, its
// suite (`acco bench --list`).
[[nodiscard]] report::Document case_list_report();

// Each measured `*_engine` case beside its `*_plain` twin on the same device: the ratio of the
// medians with its noise band (peer_ratio), "same within noise" when the spreads overlap, else
// "faster" or "slower". Empty when no pair was measured; else a heading line, then one line a
// pair. The text run_report holds (the HTML page shows it as it is).
[[nodiscard]] std::string engine_vs_plain(const BenchRun& run);

// `--compare` after a run, appended to `document`: a blank line, then the comparison as a table
// (case, device, change, before, now, change %, threshold; only the header for an empty list),
// or, without a previous run to compare with, a line saying so.
void add_comparison(report::Document& document, std::span<const Comparison> comparisons,
                    bool had_previous = true);

// The whole page. `comparisons` may be empty (no previous run): the section is left out. Every
// text from the run is HTML-escaped.
[[nodiscard]] std::string html_report(const BenchRun& run, std::span<const Comparison> comparisons);

}  // namespace acco::bench
