// `acco doctor`, the main job, as a library call: the probe's report, a quick measurement of the
// data paths on the live machine, whether acco tune has a profile for it, and what to fix first;
// its JSON (acco.probe/1 with the doctor's fields) and its text as report blocks.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "acco/bench/result.hpp"
#include "acco/bench/runner.hpp"
#include "acco/core/result.hpp"
#include "acco/doctor/live_machine.hpp"
#include "acco/report/document.hpp"
#include "acco/topo/checks.hpp"
#include "acco/topo/machine.hpp"
#include "acco/topo/probe.hpp"

namespace acco::doctor {

struct Options {
  // The machine to assess, as topo::probe takes it. On the live machine with a data directory,
  // O_DIRECT and io_uring are tried there first (try_direct_io).
  topo::ProbeRequest probe;
  // Set: the quick bench is not run, and its note says "skipped (WHY)". The quick bench only
  // ever measures the live machine: a sysroot, snapshot or hwloc XML is someone else's.
  std::optional<std::string> skip_bench;
  bench::Progress progress;  // lines while the quick bench runs
  // Where acco tune saved its profiles (the tune-dir setting); empty: tune::tune_directory().
  std::string tune_dir;
};

struct Report {
  topo::Machine machine;
  // The probe's findings, then on the live machine "tune-profile-missing" when acco tune has no
  // profile for it (tune_profile_finding).
  std::vector<topo::Finding> findings;
  bool live = false;                        // is_live(Options::probe)
  std::optional<CudaDriver> cuda;           // the live machine's CUDA driver
  std::optional<bench::BenchRun> measured;  // the quick bench, when it ran
  // What the quick bench measured ("pinned and pageable copies on ..."), "skipped (WHY)" or
  // "failed: WHY".
  std::string bench_note;
};

// The probe, then the quick bench and the tune profile's finding on the live machine. A failed
// bench is the report's note, not an error; errors: topo::probe's.
[[nodiscard]] Result<Report> run(Options options);

// Info when acco tune saved no profile for `machine` in `tune_dir` (empty: tune_directory()):
// the transfer engine then runs on its defaults. A profile for another fingerprint in the
// directory means the machine changed since the last tune. None when there is one, or the directory
// cannot be read.
[[nodiscard]] std::optional<topo::Finding> tune_profile_finding(const topo::Machine& machine,
                                                                std::string_view tune_dir = {});

// The doctor's summary in one line: "Nothing to fix: ..." or "N problem(s) to fix, from M
// rule(s); start with RULE, RULE, RULE" (topo::fix_first's order, the first topo::kFixFirst).
[[nodiscard]] std::string summary_line(const std::vector<topo::Finding>& findings);

// `acco doctor --json`: topo::probe_json, then "cuda_driver" (live only), "quick_bench"
// {"note", "results"}, "fix_first" (the first topo::kFixFirst rules of topo::fix_first) and
// "summary" (summary_line).
[[nodiscard]] nlohmann::ordered_json to_json(const Report& report);

// `acco doctor`'s text: topo::probe_report (with the CUDA driver's line when live), the
// measured paths' heading and table, and the "start with" summary.
[[nodiscard]] report::Document doctor_report(const Report& report);

}  // namespace acco::doctor
