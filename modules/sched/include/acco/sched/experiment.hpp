// A scheduling experiment: one workload run on the same devices under several policies in turn
// (each with its calibration runs, then the measured run), the performance models carried from
// one policy to the next through their file, and the result as a value with its JSON document
// (`acco schedule --json`, schema acco.schedule/1, docs/schemas/schedule.schema.json).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "acco/core/result.hpp"
#include "acco/device/device.hpp"
#include "acco/sched/policy.hpp"
#include "acco/sched/runtime.hpp"
#include "acco/sched/workload.hpp"
#include "acco/sched/workload_run.hpp"
#include "acco/transfer/profile.hpp"

namespace acco::sched {

inline constexpr const char* kScheduleSchema = "acco.schedule/1";

// The devices an experiment runs on, with what the workload and the report need of each.
struct ExperimentDevices {
  std::unique_ptr<device::Backend> backend;             // owns `devices`
  std::vector<std::unique_ptr<device::Device>> faulty;  // the fault-injecting wrappers in `devices`
  std::vector<device::Device*> devices;
  std::vector<DeviceModel> models;        // kind and speed per device (the workload's columns)
  std::string link;                       // the emulated link of host devices; empty: each its own
  std::uint64_t memory_budget_bytes = 0;  // per device; 0: the device's memory
  // Per device, the engine settings acco tune saved (its h2d_pinned entry); unset: the defaults.
  std::vector<std::optional<transfer::Profile>> transfer_profiles;
};

// The runtime's view of the devices: kind, memory budget, engine profile.
[[nodiscard]] std::vector<DeviceSpec> device_specs(const ExperimentDevices& devices);

// The most bytes one task of `workload` touches, and that task's type: a memory budget below it
// leaves the task nowhere to run. 0 and an empty type for a workload without data.
struct LargestTask {
  std::uint64_t bytes = 0;
  std::string type;
};
[[nodiscard]] LargestTask largest_task(const Workload& workload);

using ProgressLine = std::function<void(std::string_view line)>;

struct ExperimentOptions {
  WorkloadSpec spec;  // what the workload was made from, for the report
  std::vector<PolicyKind> policies = {PolicyKind::kDmda};
  int calibration_runs = 1;      // unmeasured runs before the measured one, per policy
  bool sorted_decision = false;  // PolicyKnobs::sorted_decision
  // Performance models loaded before each policy's runs and saved after them (so the next
  // policy starts from what this one learnt); empty: none.
  std::string models;
  // WorkloadRunOptions::observe for every run (a monitor polling the runtime's counters).
  std::function<void(Runtime*)> observe;
};

// One device as the report names it.
struct ExperimentDevice {
  std::string name;                  // DeviceInfo::name
  DeviceModel model;                 // kind and speed
  std::string link;                  // the emulated link, or the device's rate, or "unknown"
  double link_bytes_per_second = 0;  // the device's link; 0: unknown
};

struct Experiment {
  WorkloadSpec spec;
  std::string workload;  // Workload::name
  std::size_t tasks = 0;
  std::vector<ExperimentDevice> devices;
  std::string link;  // ExperimentDevices::link
  bool sorted_decision = false;
  std::vector<WorkloadOutcome> runs;  // one per policy, in the order asked
};

// The report's description of `devices` running `workload`, without runs.
[[nodiscard]] Experiment describe_experiment(const Workload& workload,
                                             const ExperimentDevices& devices,
                                             const ExperimentOptions& options);

// Runs `workload` (made from options.spec for devices.models) under each policy in turn, with
// a progress line before each. Errors: a run's (run_workload's, with the policy's name in
// front); kCannotWrite, with the write's own message, when the models file cannot be saved.
// A run with failed tasks is reported (WorkloadOutcome::failed), not an error.
[[nodiscard]] Result<Experiment> run_experiment(const Workload& workload,
                                                const ExperimentDevices& devices,
                                                const ExperimentOptions& options,
                                                const ProgressLine& progress = {});

// The acco.schedule/1 document: the workload, the devices, the first run's fields at the top
// level and every run under "runs" (one at least).
[[nodiscard]] nlohmann::ordered_json to_json(const Experiment& experiment);

}  // namespace acco::sched
