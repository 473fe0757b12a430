#include "acco/sim/study.hpp"

#include <cstdint>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "acco/core/units.hpp"
#include "acco/sim/dag_file.hpp"

namespace acco::sim {
namespace {

std::string seeds_text(std::uint64_t first, int seeds) {
  return seeds > 1
             ? fmt::format("seeds {}-{}", first, first + static_cast<std::uint64_t>(seeds) - 1)
             : fmt::format("seed {}", first);
}

std::string workload_text(const sched::WorkloadSpec& w, int seeds) {
  switch (w.kind) {
    case sched::WorkloadKind::kCholesky:
    case sched::WorkloadKind::kLu:
      return fmt::format("{} ({} x {} tiles, {} kernels)", sched::to_string(w.kind), w.tiles,
                         w.tiles, w.kernels);
    default:
      return fmt::format("{} ({} tasks, {})", sched::to_string(w.kind), w.tasks,
                         seeds_text(w.seed, seeds));
  }
}

// A Task Bench workload's line: its grid, its kernel when it is not the default, and the seed
// of a graph or times drawn at random.
std::string taskbench_text(const std::string& name, const TaskBenchSpec& tb, int seeds) {
  std::string text = fmt::format("{} ({} x {} tasks", name, tb.width, tb.steps);
  if (tb.kernel != Kernel::kComputeBound || tb.seconds != 1e-3 ||
      tb.output_bytes != std::size_t{1} << 20U) {
    text += fmt::format(", {} kernel of {}, {} outputs", to_string(tb.kernel),
                        units::format_seconds(tb.seconds), units::format_bytes(tb.output_bytes));
  }
  if (draws_at_random(tb)) {
    text += ", " + seeds_text(tb.seed, seeds);
  }
  return text + ")";
}

}  // namespace

Result<sched::Workload> study_workload(const Study& study, int index, std::string* text) {
  sched::Workload workload;
  const auto offset = static_cast<std::uint64_t>(index);
  if (study.taskbench) {
    TaskBenchSpec tb = *study.taskbench;
    tb.seed += offset;
    ACCO_ASSIGN_OR_RETURN(workload, task_bench(tb), "--workload");
    if (text != nullptr) {
      *text = taskbench_text(workload.name, tb, study.seeds);
    }
  } else if (!study.dag.empty()) {
    ACCO_ASSIGN_OR_RETURN(workload, load_dag(study.dag), "--dag");
    if (text != nullptr) {
      *text = fmt::format("{} ({} tasks from {})", workload.name, workload.tasks.size(), study.dag);
    }
  } else {
    sched::WorkloadSpec spec = study.workload;
    spec.seed += offset;
    ACCO_ASSIGN_OR_RETURN(workload, sched::make_workload(spec, {sched::DeviceModel{"gpu", 1}}),
                          "--workload");
    if (text != nullptr) {
      *text = workload_text(spec, study.seeds);
    }
  }
  return workload;
}

Result<SimReport> run_study(const Study& study) {
  SimReport report;
  report.platform = study.platform;
  report.cooling = study.options.cooling;
  report.power_limit_watts = study.options.power_limit_watts;
  report.governor = study.options.governor;
  if (study.training) {
    ACCO_ASSIGN_OR_RETURN(const auto step, training_step(study.platform, *study.training),
                          "--workload train");
    report.workload = step.text;
    SimOptions options = study.options;
    options.record = study.record_first;
    ACCO_ASSIGN_OR_RETURN(auto run, simulate_training(study.platform, step, options));
    report.runs.push_back(std::move(run));
    return report;
  }
  ACCO_ASSIGN_OR_RETURN(const auto workload, study_workload(study, 0, &report.workload));
  ACCO_ASSIGN_OR_RETURN(report.runs, simulate_policies(study.platform, workload, study.policies,
                                                       study.options, study.record_first));
  if (study.seeds < 2) {
    return report;
  }
  const std::uint64_t first = study.taskbench ? study.taskbench->seed : study.workload.seed;
  for (int i = 0; i < study.seeds; ++i) {
    report.seeds.push_back(first + static_cast<std::uint64_t>(i));
  }
  for (const auto& run : report.runs) {
    report.seed_makespans.push_back({run.makespan});
  }
  for (int i = 1; i < study.seeds; ++i) {
    ACCO_ASSIGN_OR_RETURN(const auto drawn, study_workload(study, i));
    ACCO_ASSIGN_OR_RETURN(const auto runs, simulate_policies(study.platform, drawn, study.policies,
                                                             study.options, false));
    for (std::size_t p = 0; p < runs.size() && p < report.seed_makespans.size(); ++p) {
      report.seed_makespans[p].push_back(runs[p].makespan);
    }
  }
  return report;
}

}  // namespace acco::sim
