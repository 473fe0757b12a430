#include "acco/cluster/collective_history.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "acco/bench/history.hpp"
#include "acco/bench/machine_summary.hpp"
#include "acco/core/clock.hpp"

namespace acco::cluster {

bench::BenchRun history_run(const CollectiveRun& run, const topo::Machine& machine) {
  bench::BenchRun b;
  b.created = core::utc_timestamp(std::chrono::system_clock::now());
  b.host = machine.hostname;
  b.fingerprint = bench::machine_fingerprint(machine);
  b.machine = bench::machine_summary(machine);
  for (const OpResult& op : run.ops) {
    bench::BenchResult r;
    r.case_key = fmt::format(
        "collective_{}_{}r{}n{}", to_string(op.op), run.ranks, run.nodes,
        run.path == DataPath::kHost ? std::string() : fmt::format("_{}", to_string(run.path)));
    r.device = run.data_path;
    r.bytes = op.points.empty() ? 0 : op.points.back().bytes;
    r.median_bytes_per_second = op.summary.plateau_busbw;
    r.min_bytes_per_second = op.summary.plateau_busbw;
    r.max_bytes_per_second = op.summary.plateau_busbw;
    r.peak_bytes_per_second = op.summary.expected_busbw;
    r.efficiency = op.summary.efficiency;
    // The history's verdicts are the copy suite's: the three judged ones share their names.
    const Verdict v = op.summary.verdict;
    const bool judged = v == Verdict::kOk || v == Verdict::kLow || v == Verdict::kVeryLow;
    r.verdict = judged ? to_string(v) : "unknown";
    r.strategy = run.backend;
    r.timer = bench::kTimerHostClock;
    r.latency_seconds = op.summary.small_latency_seconds;
    for (const SizePoint& p : op.points) {
      r.sweep.push_back({p.bytes, run.ranks > 1 ? p.busbw : p.algbw});
    }
    b.results.push_back(std::move(r));
  }
  return b;
}

Result<SavedFusion> save_fusion_threshold(const CollectiveRun& run, const topo::Machine* machine,
                                          std::string_view tune_dir) {
  const auto op = std::find_if(run.ops.begin(), run.ops.end(),
                               [](const OpResult& r) { return r.op == Op::kAllReduce; });
  if (op == run.ops.end() || !op->fit || op->fusion_threshold == 0) {
    return fail(Errc::kUnavailable,
                "the allreduce times did not fit alpha + S / beta; nothing saved");
  }
  if (machine == nullptr) {
    return fail(Errc::kUnavailable, "this machine could not be probed, so it has no profile name");
  }
  ACCO_ASSIGN_OR_RETURN(const std::string dir, tune::tune_directory_or(tune_dir));
  SavedFusion saved;
  saved.path = tune::profile_path(dir, bench::machine_fingerprint(*machine));
  tune::TuneProfile profile;
  if (auto existing = tune::load_tune_profile(saved.path); existing) {
    profile = std::move(*existing);
  } else if (existing.error().code == Errc::kNotFound) {
    profile.fingerprint = bench::machine_fingerprint(*machine);
    profile.created = core::utc_timestamp(std::chrono::system_clock::now());
  } else {
    return tl::unexpected(std::move(existing.error()));
  }
  tune::FusionTuning& f = saved.fusion;
  f.link_class = run.nodes > 1 ? "inter-node" : "intra-node";
  f.ranks = run.ranks;
  f.alpha_seconds = op->fit->alpha_seconds;
  f.beta_bytes_per_second = op->fit->beta_bytes_per_second;
  f.threshold_bytes = op->fusion_threshold;
  f.measured = core::utc_timestamp(std::chrono::system_clock::now());
  tune::set_fusion(profile, f);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (auto written = tune::save_tune_profile(saved.path, profile); !written) {
    Error e = std::move(written.error());
    e.code = Errc::kCannotWrite;
    return tl::unexpected(std::move(e));
  }
  return saved;
}

}  // namespace acco::cluster
