// A bench session, as `acco bench` runs one: the cases, then (unless stopped) the run appended
// to its history and compared with the last run like it, and the HTML report written.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "acco/bench/compare.hpp"
#include "acco/bench/result.hpp"
#include "acco/bench/runner.hpp"
#include "acco/core/result.hpp"
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
  std::vector<Comparison> comparisons;
  bool had_previous = true;      // a failed history still shows the (empty) comparison
  std::string notes;             // lines for stderr, in order: the history's, the report's
  std::optional<Error> failure;  // the history or the report failed (the last one); the
                                 // measurements stand. kCannotWrite for the report.
  std::size_t failed_cases = 0;  // results with status error (a GPU lost mid-copy...)
};

// Errors: run_benchmarks'. The history's and the report's failures are in Session::failure.
[[nodiscard]] Result<Session> run_session(const SessionOptions& options,
                                          const topo::Machine* machine, const Progress& progress);

}  // namespace acco::bench
