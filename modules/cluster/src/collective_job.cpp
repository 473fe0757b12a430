#include "acco/cluster/collective_job.hpp"

#include <utility>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/bench/compare.hpp"
#include "acco/bench/report.hpp"
#include "acco/core/units.hpp"
#include "acco/report/document.hpp"

namespace acco::cluster {

Result<std::optional<CollectiveJob>> run_collective_job(Communicator& comm,
                                                        const CollectiveJobOptions& options,
                                                        const ProgressLine& progress) {
  ACCO_ASSIGN_OR_RETURN(auto run, run_collective_bench(comm, options.bench, progress));
  if (comm.rank() != 0) {
    return std::optional<CollectiveJob>();  // rank 0 reports for the job
  }
  CollectiveJob job;
  job.run = std::move(run);
  job.compare = options.compare;
  const std::optional<topo::Machine>& machine = options.bench.machine;
  if (options.history) {
    ACCO_ASSIGN_OR_RETURN(
        job.history, record_collective_run(job.run, machine, *options.history, options.compare));
    job.notes += job.history.warnings;
  }
  if (options.save_fusion) {
    auto saved = save_fusion_threshold(job.run, machine ? &*machine : nullptr, options.tune_dir);
    if (saved) {
      job.notes += fmt::format("acco: fusion threshold {} for {} links saved to {}\n",
                               units::format_bytes(saved->fusion.threshold_bytes),
                               saved->fusion.link_class, saved->path);
      job.fusion = std::move(*saved);
    } else {
      job.fusion_failure = std::move(saved.error());
    }
  }
  if (job.run.wrong > 0) {
    job.notes += fmt::format("acco: {} element(s) held a wrong value after the collectives\n",
                             job.run.wrong);
  }
  return std::optional(std::move(job));
}

nlohmann::ordered_json to_json(const CollectiveJob& job) {
  auto j = to_json(job.run);
  if (job.compare) {
    j["comparisons"] = bench::to_json(job.history.comparisons);
  }
  return j;
}

std::string to_text(const CollectiveJob& job) {
  std::string text = to_text(job.run);
  if (!job.compare) {
    return text;
  }
  if (!job.history.note.empty()) {
    return text + "\n" + job.history.note;
  }
  report::Document doc;
  bench::add_comparison(doc, job.history.comparisons);
  return text + report::render_text(doc);
}

}  // namespace acco::cluster
