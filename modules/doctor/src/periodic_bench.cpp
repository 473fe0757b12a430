#include "acco/doctor/periodic_bench.hpp"

#include <utility>

#include "acco/bench/history.hpp"
#include "acco/bench/run_setup.hpp"
#include "acco/tune/saved_profile.hpp"

namespace acco::doctor {

std::vector<monitor::BenchRegression> bench_regressions(
    const std::vector<bench::Comparison>& changes) {
  std::vector<monitor::BenchRegression> out;
  for (const bench::Comparison& c : changes) {
    if (c.change == bench::Change::kRegressed) {
      out.push_back({c.case_key, c.device, c.previous, c.current, c.relative_change, c.threshold});
    }
  }
  return out;
}

monitor::BenchFn periodic_bench(const std::string& history, const std::string& tune_dir) {
  return [history, tune_dir](const topo::Machine& machine) -> Result<monitor::BenchCheck> {
    monitor::BenchCheck check;
    ACCO_ASSIGN_OR_RETURN(
        auto quick, bench::quick_bench(machine, tune::saved_engine_profiles(machine, tune_dir)));
    check.note = std::move(quick.note);
    const bench::BenchRun& run = quick.run;
    check.results = run.results.size();
    auto path = history.empty() ? bench::default_history_path() : Result<std::string>(history);
    if (!path) {
      return check;
    }
    auto opened = bench::History::open(*path);
    if (!opened) {
      check.errors.push_back("the bench history could not be opened: " + opened.error().message);
      return check;
    }
    if (auto last = opened->last_run(run.fingerprint); last && *last) {
      check.regressions = bench_regressions(bench::compare(**last, run));
    }
    if (auto saved = opened->save(run); !saved) {
      check.errors.push_back("the bench history could not be written: " + saved.error().message);
    }
    return check;
  };
}

}  // namespace acco::doctor
