// A workload of the task runtime on simulated devices whose speed follows their clocks (a
// ThermalRig: compute-bound time grows as the clock falls, firmware throttling included), with
// or without the governor publishing to the runtime (power limits on the rig's devices; weights
// from temperature headroom, no new work and drain on the runtime). What `acco schedule
// --simulate-thermal` and the governor benchmark compare, policy by policy, on the same rig.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/power/governor.hpp"
#include "acco/power/thermal_rig.hpp"
#include "acco/sched/runtime.hpp"
#include "acco/sched/workload.hpp"
#include "acco/sched/workload_run.hpp"

namespace acco::monitor {

struct ThermalRunOptions {
  power::ThermalRigOptions rig;                    // rig.devices is set to the device count
  std::optional<power::GovernorOptions> governor;  // nullopt: firmware throttling only
  double period_seconds = 1;                       // simulated seconds between governor rounds
};

struct ThermalOutcome {
  sched::WorkloadOutcome outcome;
  std::vector<power::RigDeviceTotals> devices;  // over the whole run, calibration included
  double simulated_seconds = 0;
  double wall_seconds = 0;
  std::size_t tasks_run = 0;  // every run of the workload (calibration runs included)
  std::optional<power::GovernorStatus> governor;
  std::vector<power::Action> actions;  // what the governor did, in order
};

// Runs `workload` as run_workload does (calibration runs, then the measured run), every kernel
// on the rig. Errors as run_workload's, and the rig's (kInvalidArgument for a bad scale).
[[nodiscard]] Result<ThermalOutcome> run_thermal_workload(const sched::Workload& workload,
                                                          std::vector<sched::DeviceSpec> devices,
                                                          sched::RuntimeOptions options,
                                                          sched::WorkloadRunOptions run,
                                                          const ThermalRunOptions& thermal);

}  // namespace acco::monitor
