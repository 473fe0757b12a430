// The text of a scheduling experiment (`acco schedule`; its JSON is sched::to_json) as report
// blocks: the workload and devices, one row per policy against the schedule bound, the best
// policy; and the one line on a run's failed tasks.
#pragma once

#include <string>
#include <vector>

#include "acco/report/document.hpp"
#include "acco/sched/experiment.hpp"
#include "acco/sched/workload_run.hpp"

namespace acco::sched {

[[nodiscard]] report::Document experiment_report(const Experiment& experiment);

// "dmda: 2 of 40 tasks failed; first: potrf(0): <error>": the run's first failure.
[[nodiscard]] std::string failure_summary(const WorkloadOutcome& run);
// What failed underneath a run without failing its tasks: each device retired ("dmda: dev0 failed
// at +12.4 ms: why; 7 tasks moved to other devices") and the copies that failed. Empty when none.
[[nodiscard]] std::vector<std::string> fault_lines(const WorkloadOutcome& run);

}  // namespace acco::sched
