// The daemon's periodic bench as `acco serve --bench-every` runs it: the doctor's quick bench,
// kept in the bench history and compared with the previous run on this machine. The monitor
// says when to run it (monitor::PeriodicChecks) and logs what it found; the bench, the tune
// profile and the history live here, above the monitor.
#pragma once

#include <string>
#include <vector>

#include "acco/bench/compare.hpp"
#include "acco/monitor/checks.hpp"

namespace acco::doctor {

// The regressed cases of a comparison, in order; the unchanged, improved, new and missing ones
// are not regressions. Pure.
[[nodiscard]] std::vector<monitor::BenchRegression> bench_regressions(
    const std::vector<bench::Comparison>& changes);

// The quick bench on the latest probe's machine (with the tune profile saved for it in
// `tune_dir`, empty: tune::tune_directory()), saved in the bench history `history` (empty: the
// default one, and none when it has no default), its regressions against the previous run with
// the same fingerprint. A history that cannot be opened or written is a line of the check's
// errors; a failed bench is the function's error.
[[nodiscard]] monitor::BenchFn periodic_bench(const std::string& history,
                                              const std::string& tune_dir = {});

}  // namespace acco::doctor
