// `acco schedule`: runs a named workload (tiled Cholesky or LU, independent tasks, a chain, a
// random layered DAG) on emulated host devices or on the GPUs, under one or more policies, and
// reports makespan against the lower bounds, bytes moved and how busy each device was.
#pragma once

#include <optional>
#include <string>

#include "acco/cli/app.hpp"
#include "acco/cluster/distributed_schedule.hpp"
#include "acco/monitor/schedule_run.hpp"
#include "acco/tune/saved_profile.hpp"

namespace acco::cli {

// Every flag checked and typed at parse time; what depends on the devices found (the GPU count)
// is checked at run. The one-node run (monitor::ScheduleSetup): the workload, --policy,
// --calibrate, --sorted-decision, --models; --devices, --kinds, --speeds, --link, --memory;
// --trace; --serve; --simulate-thermal.
struct ScheduleOptions : monitor::ScheduleSetup {
  // The engine profile acco tune saved (loaded by default, --profile FILE, --no-profile).
  tune::ProfileChoice profile;
  // --distributed: over every rank of the MPI job (schedule_distributed.hpp); its workload,
  // local policy, sorted decision and calibration runs copied from `experiment`.
  std::optional<cluster::DistributedScheduleOptions> distributed;
};

// Exit codes: 64 for a value that does not fit the devices found (list lengths with cuda, a
// memory budget smaller than a task's data), 65 for a malformed --models file, 69 when the
// devices are unavailable, 73 when --trace or --models cannot be written, 1 when a task of a
// measured run failed, 69 when --serve cannot bind its address.
class ScheduleCommand final : public Command {
 public:
  explicit ScheduleCommand(ScheduleOptions options) : options_(std::move(options)) {}
  [[nodiscard]] Result<Output> run(const Invocation& invocation) const override;
  [[nodiscard]] const ScheduleOptions& options() const { return options_; }

 private:
  ScheduleOptions options_;
};

}  // namespace acco::cli
