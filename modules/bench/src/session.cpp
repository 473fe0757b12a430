#include "acco/bench/session.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/bench/history.hpp"
#include "acco/bench/report.hpp"
#include "acco/core/file.hpp"
#include "acco/core/units.hpp"
#include "acco/io/baseline.hpp"

namespace acco::bench {

Result<Session> run_session(const SessionOptions& options, const topo::Machine* machine,
                            const Progress& progress) {
  Session s;
  ACCO_ASSIGN_OR_RETURN(s.run, run_benchmarks(options.run, machine, progress));
  if (options.run.stop && options.run.stop()) {
    s.interrupted = true;
    s.notes += fmt::format(
        "acco: bench interrupted; {} result(s) finished, shown below, not saved to the "
        "history{}\n",
        s.run.results.size(), options.html.empty() ? "" : " nor to --html");
    return s;
  }
  s.compared = options.compare;
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
    if (auto w = core::write_output_file(options.html, html_report(s.run, s.comparisons)); !w) {
      // Checked before the run, failed now (a full disk): the results still stand.
      Error e = std::move(w.error()).with_context("--html");
      s.notes += fmt::format("acco: {}\n", e.message);
      s.failure = std::move(e);
    } else {
      s.notes += fmt::format("acco: HTML report written to {}\n", options.html);
    }
  }
  s.failed_cases = static_cast<std::size_t>(
      std::count_if(s.run.results.begin(), s.run.results.end(),
                    [](const BenchResult& r) { return r.status == kStatusError; }));
  if (s.failed_cases > 0 && !s.failure) {
    s.notes += fmt::format("acco: {} case(s) failed; the results say why\n", s.failed_cases);
  }
  return s;
}

nlohmann::ordered_json to_json(const Session& session) {
  auto j = to_json(session.run);
  if (session.compared) {
    j["comparisons"] = to_json(session.comparisons);
  }
  return j;
}

report::Document session_report(const Session& session) {
  if (session.interrupted) {
    return run_report(session.run);
  }
  auto doc = bench_report(session.run);
  if (session.compared) {
    add_comparison(doc, session.comparisons, session.had_previous);
  }
  return doc;
}

std::string reader_note(const RunOptions& options) {
  const auto& reader = options.defaults.reader_options;
  if (!reader || options.suite != "storage") {
    return {};
  }
  return fmt::format(
      "acco: storage reader from the tune profile: block {}, depth {}, {} thread(s)\n",
      units::format_bytes(reader->block_bytes), reader->depth, reader->threads);
}

Result<std::string> create_test_file(const std::string& path, std::uint64_t bytes) {
  if (path.empty()) {
    return std::string();
  }
  ACCO_ASSIGN_OR_RETURN(const bool created, io::fill_test_file(path, bytes));
  return created
             ? fmt::format("acco: wrote {} of test data to {}\n", units::format_bytes(bytes), path)
             : std::string();
}

}  // namespace acco::bench
