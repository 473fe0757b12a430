// `acco schedule`: runs a named workload (tiled Cholesky or LU, independent tasks, a chain, a
// random layered DAG) on emulated host devices or on the GPUs, under one or more policies, and
// reports makespan against the lower bounds, bytes moved and how busy each device was.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "acco/cli/app.hpp"
#include "acco/cluster/distributed_schedule.hpp"
#include "acco/device/host_backend.hpp"
#include "acco/monitor/runtime_server.hpp"
#include "acco/power/governor.hpp"
#include "acco/sched/policy.hpp"
#include "acco/sched/workload.hpp"

#include "profile_flags.hpp"
#include "schedule_distributed.hpp"

namespace acco::cli {

// Every flag checked and typed at parse time; what depends on the devices found (the GPU count)
// is checked at run.
struct ScheduleOptions {
  sched::WorkloadSpec workload;  // cholesky unless --workload says otherwise
  bool cuda = false;             // --devices cuda: every GPU; otherwise emulated host devices
  int devices = 4;               // host: emulated devices
  // Per device, or one entry for every device; empty: "gpu" and speed 1 for every device.
  std::vector<std::string> kinds;
  std::vector<double> speeds;
  device::EmulatedLink link;       // host: the emulated link
  std::uint64_t memory_bytes = 0;  // per-device budget; 0: the device's memory
  std::vector<sched::PolicyKind> policies = {sched::PolicyKind::kDmda};
  int calibrate = 1;  // unmeasured runs before the measured one, per policy
  // dmda, ws: count only the queued tasks of higher or equal priority (StarPU's dmdasd)
  bool sorted_decision = false;
  std::string models;  // performance models loaded before each run and saved after
  std::string trace;   // Chrome trace of the first policy's measured run
  // --serve: /metrics and the API with the runtime's counters while the runs last.
  std::optional<monitor::RuntimeServerOptions> serve;
  // --simulate-thermal: every kernel on simulated devices whose speed follows their clocks,
  // each policy run once per governor setting (nullopt: firmware throttling only).
  struct Thermal {
    double time_scale = 60;
    std::vector<double> cooling;  // per device, or one for all
    std::vector<std::pair<std::string, std::optional<power::GovernorOptions>>> governors;
  };
  std::optional<Thermal> thermal;
  // The engine profile acco tune saved (loaded by default, --profile FILE, --no-profile).
  ProfileFlags profile;
  // --distributed: over every rank of the MPI job (schedule_distributed.hpp); its workload,
  // local policy, sorted decision and calibration runs copied from the fields above.
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
