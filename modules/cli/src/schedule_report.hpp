// The text report of `acco schedule` (its JSON is sched::to_json, or monitor::to_json with
// --simulate-thermal) and the note on a run's failed tasks.
#pragma once

#include <string>
#include <vector>

#include "acco/monitor/thermal_run.hpp"
#include "acco/sched/experiment.hpp"
#include "acco/sched/workload_run.hpp"

namespace acco::cli {

// `thermal` (--simulate-thermal) holds one entry per run, in the order of experiment.runs.
[[nodiscard]] std::string schedule_text(const sched::Experiment& experiment,
                                        const std::vector<monitor::ThermalOutcome>& thermal = {});
// The first failure of a run, for the one-line note on standard error.
[[nodiscard]] std::string failure_note(const sched::WorkloadOutcome& run);

}  // namespace acco::cli
