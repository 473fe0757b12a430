// A bench session, as `acco bench` runs one: the cases, then (unless stopped) the run appended
// to its history and compared with the last run like it, and the HTML report written.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "acco/bench/compare.hpp"
#include "acco/bench/result.hpp"
#include "acco/bench/runner.hpp"
#include "acco/core/result.hpp"
#include "acco/report/document.hpp"
#include "acco/topo/machine.hpp"

namespace acco::bench {

struct SessionOptions {
  RunOptions run;                      // its `stop` ends the session between two cases
  std::optional<std::string> history;  // nullopt: none; empty: default_history_path()
  bool compare = false;                // compare with the history's last run like this one
  std::string html;                    // the HTML report's path; empty: none
};

struct Session {
  BenchRun run;
  // Stopped: `run` holds the cases that finished, and nothing was saved, compared or written
  // (the missing cases would read as regressions).
  bool interrupted = false;
  bool compared = false;  // asked to compare, and not interrupted
  std::vector<Comparison> comparisons;
  bool had_previous = true;  // a failed history still shows the (empty) comparison
  // Lines for stderr, in order: that the run was interrupted, or the history's, the report's,
  // and how many cases failed (when nothing else did).
  std::string notes;
  std::optional<Error> failure;  // the history or the report failed (the last one); the
                                 // measurements stand. kCannotWrite for the report.
  std::size_t failed_cases = 0;  // results with status error (a GPU lost mid-copy...)
};

// Errors: run_benchmarks'. The history's and the report's failures are in Session::failure.
[[nodiscard]] Result<Session> run_session(const SessionOptions& options,
                                          const topo::Machine* machine, const Progress& progress);

// acco.bench/1, with "comparisons" when compared.
[[nodiscard]] nlohmann::ordered_json to_json(const Session& session);
// bench_report with the comparison when compared; run_report alone when interrupted.
[[nodiscard]] report::Document session_report(const Session& session);

// The line a person is told before a storage run whose reader settings come from the tune
// profile ("acco: storage reader from the tune profile: block 1.00 MiB, depth 32, 2 thread(s)");
// empty otherwise.
[[nodiscard]] std::string reader_note(const RunOptions& options);

// The storage suite's test file (RunPlan::create_file), written when missing or smaller than
// RunPlan::create_bytes: the line for stderr that says so, else empty. fill_test_file's errors.
[[nodiscard]] Result<std::string> create_test_file(const std::string& path, std::uint64_t bytes);

}  // namespace acco::bench
