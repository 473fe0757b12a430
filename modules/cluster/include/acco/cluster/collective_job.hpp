// `acco bench --collective` end to end, for any program: the benchmark on every rank of the job,
// then what rank 0 does with it (the bench history, the comparison with the last run like it,
// the fusion threshold saved in the tune profile) and the report.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "acco/cluster/collective_bench.hpp"
#include "acco/cluster/collective_history.hpp"
#include "acco/cluster/collective_request.hpp"
#include "acco/cluster/communicator.hpp"
#include "acco/core/result.hpp"

namespace acco::cluster {

struct CollectiveJobOptions {
  // Its `machine` also names the history's and the tune profile's machine (nullopt: neither).
  CollectiveBenchOptions bench;
  std::optional<std::string> history;  // nullopt: none kept; empty: bench's default file
  bool compare = false;                // with the history's last run like this one
  bool save_fusion = false;            // the allreduce fit's threshold into the tune profile
  std::string tune_dir;                // where that profile is; empty: tune::tune_directory()
};

struct CollectiveJob {
  CollectiveRun run;
  bool compare = false;
  CollectiveHistory history;            // empty without a history
  std::optional<SavedFusion> fusion;    // save_fusion, saved
  std::optional<Error> fusion_failure;  // save_fusion, not saved (save_fusion_threshold's error)
  // Lines for stderr, in order: the history's warnings, the threshold saved, the elements that
  // held a wrong value.
  std::string notes;
};

// Every rank calls it with the same options; rank 0 gets the job, the other ranks nullopt.
// Errors: run_collective_bench's, record_collective_run's.
[[nodiscard]] Result<std::optional<CollectiveJob>> run_collective_job(
    Communicator& comm, const CollectiveJobOptions& options, const ProgressLine& progress = {});

// acco.collective/1, with "comparisons" when compared.
[[nodiscard]] nlohmann::ordered_json to_json(const CollectiveJob& job);
// to_text(run), then the comparison (or why there is none) when compared.
[[nodiscard]] std::string to_text(const CollectiveJob& job);

}  // namespace acco::cluster
