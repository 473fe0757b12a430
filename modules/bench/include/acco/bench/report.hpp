// How a bench run reads for people: a text table for the terminal and one self-contained HTML
// page (inline CSS and SVG plots, no scripts, no external resources) that shows every rate beside
// its link's peak, the verdicts, the change since the last run and a bandwidth-against-size plot
// per swept case. Pure functions returning strings; the caller writes them where it wants.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "acco/bench/compare.hpp"
#include "acco/bench/result.hpp"

namespace acco::bench {

// Columns: case, device, size, median, min, max, CoV, peak, eff., verdict, strategy. Rates in
// decimal units (format_rate), sizes in binary units; "-" where unknown. A latency-only case
// shows its times per copy in microseconds in the median, min and max columns. A waived or
// failed case shows its status and reason after the device. Ends with a newline; empty input
// gives the header only.
[[nodiscard]] std::string text_table(std::span<const BenchResult> results);

// One header line (host, time, fingerprint), the table, what the peak of emulated devices is
// (and every re-based one), per latency case its times, each engine case against its plain twin
// on the same device (engine_vs_plain), then one line per swept case with the size reaching half
// of the peak.
[[nodiscard]] std::string text_report(const BenchRun& run);

// `acco bench`'s text: text_report, the CUDA driver the run found (when it found one), then the
// storage suite's verdicts against its peers (text_peer_verdicts).
[[nodiscard]] std::string text_run_report(const BenchRun& run);

// Every case, one line each: its key, its description and, outside the transfer suite, its
// suite (`acco bench --list`).
[[nodiscard]] std::string text_case_list();

// Each measured `*_engine` case beside its `*_plain` twin on the same device: the ratio of the
// medians with its noise band (peer_ratio), "same within noise" when the spreads overlap, else
// "faster" or "slower". Empty when no pair was measured; else a heading line, then one line a pair.
[[nodiscard]] std::string engine_vs_plain(const BenchRun& run);

// The comparison as a table: case, device, change, before, now, change %, threshold. Only the
// header for an empty list.
[[nodiscard]] std::string text_comparison(std::span<const Comparison> comparisons);

// The whole page. `comparisons` may be empty (no previous run): the section is left out. Every
// text from the run is HTML-escaped.
[[nodiscard]] std::string html_report(const BenchRun& run, std::span<const Comparison> comparisons);

}  // namespace acco::bench
