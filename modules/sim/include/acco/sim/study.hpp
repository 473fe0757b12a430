// What `acco sim` runs, as a library call: a platform, one workload (acco's generators, Task
// Bench's patterns, a task graph file, or a data-parallel training step), each policy on it,
// over one or several seeds of a workload drawn at random, with the simulation's options (the
// thermal what-ifs, a runtime's per-task cost); the answer is the report `acco sim` renders.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/sched/policy.hpp"
#include "acco/sched/workload.hpp"
#include "acco/sim/platform.hpp"
#include "acco/sim/report.hpp"
#include "acco/sim/simulate.hpp"
#include "acco/sim/taskbench.hpp"
#include "acco/sim/training.hpp"

namespace acco::sim {

struct Study {
  Platform platform;
  // The workload, the first of these that is set: a training step (no policy places it), a
  // Task Bench graph, a task graph file (acco.dag/1 or STG), else acco's generator.
  std::optional<TrainingSpec> training = std::nullopt;
  std::optional<TaskBenchSpec> taskbench = std::nullopt;
  std::string dag = {};
  sched::WorkloadSpec workload = {};
  std::vector<sched::PolicyKind> policies = {sched::PolicyKind::kDmda};
  // Draws of a workload drawn at random: the seeds from its own seed on (1-1000).
  int seeds = 1;
  // Every run's options (cooling, power limit, governor, task overhead); the policy and record
  // are the study's.
  SimOptions options = {};
  // The first run keeps its records (for a trace or a page).
  bool record_first = false;
};

// The workload of the `index`th seed of `study` (its own seed + index), and its line in the
// report ("cholesky (8 x 8 tiles, sirocco kernels)"). Errors of the generator or the file,
// with "--workload" or "--dag" as context.
[[nodiscard]] Result<sched::Workload> study_workload(const Study& study, int index,
                                                     std::string* text = nullptr);

// Runs the study: every policy on the first seed's workload (the training step alone for a
// training workload), then, with seeds > 1, on each other seed's, whose makespans go beside
// the first's. The report's platform, cooling, power limit and governor are the study's. Errors
// as simulate()'s and study_workload()'s.
[[nodiscard]] Result<SimReport> run_study(const Study& study);

}  // namespace acco::sim
