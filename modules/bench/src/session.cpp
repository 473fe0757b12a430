#include "acco/bench/session.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "acco/bench/history.hpp"
#include "acco/bench/report.hpp"
#include "acco/core/file.hpp"

namespace acco::bench {

Result<Session> run_session(const SessionOptions& options, const topo::Machine* machine,
                            const Progress& progress) {
  Session s;
  ACCO_ASSIGN_OR_RETURN(s.run, run_benchmarks(options.run, machine, progress));
  if (options.run.stop && options.run.stop()) {
    s.interrupted = true;
    return s;
  }
  if (options.history) {
    auto recorded = record_run(*options.history, s.run, options.compare);
    if (!recorded) {
      s.notes += fmt::format("acco: {}\n", recorded.error().message);
      s.failure = std::move(recorded.error());
    } else {
      s.notes += recorded->warnings;
      s.comparisons = std::move(recorded->comparisons);
      s.had_previous = recorded->had_previous;
    }
  }
  if (!options.html.empty()) {
    if (auto w = core::write_file_atomic(options.html, html_report(s.run, s.comparisons)); !w) {
      // Checked before the run, failed now (a full disk): the results still stand.
      Error e = std::move(w.error()).with_context("--html");
      e.code = Errc::kCannotWrite;
      s.notes += fmt::format("acco: {}\n", e.message);
      s.failure = std::move(e);
    } else {
      s.notes += fmt::format("acco: HTML report written to {}\n", options.html);
    }
  }
  s.failed_cases = static_cast<std::size_t>(
      std::count_if(s.run.results.begin(), s.run.results.end(),
                    [](const BenchResult& r) { return r.status == kStatusError; }));
  return s;
}

}  // namespace acco::bench
