// One simulated run: a workload's tasks placed by one of the scheduler's `Policy` objects, as
// the runtime asks it (the same SystemView: queue depths, expected ready times, run times, the
// time to bring missing inputs over the platform's links), executed on SimGrid: each task an
// execution on its device's host, each missing input a flow over the links of its route, which
// SimGrid's flow-level model (CM02, no TCP window) shares with every flow crossing them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "acco/core/result.hpp"
#include "acco/sched/policy.hpp"
#include "acco/sched/record.hpp"
#include "acco/sched/workload.hpp"
#include "acco/sim/platform.hpp"

namespace acco::sim {

struct SimOptions {
  sched::PolicyKind policy = sched::PolicyKind::kDmda;
  sched::PolicyKnobs knobs;
  // Keep each task's and each copy's virtual times (SimResult's records) for a trace.
  bool record = false;
  // Per task, the device (platform index) that runs it, as StarPU's
  // execute_on_a_specific_worker: the policy is not asked. Empty, or -1 for a task: the policy
  // places it. With pins, `heft` does not plan (its plan would place them elsewhere).
  std::vector<int> pinned = {};
  // Per datum, the node whose host memory holds it first. Empty: datum i on node i mod nodes.
  std::vector<int> home = {};
  // Per device, its cooling: the factor on its heatsink-to-air resistance (1 healthy, 4 a
  // failed fan). Non-empty: every device runs power's simulated H100-class device (RC thermal
  // model, power from load and clock, NVIDIA's throttling) on the virtual clock, a task's work
  // takes 1/clock share as long, and the run reports energy and temperatures. A cooled-down
  // device starts at its full-load heat (healthy: no throttling); one with a factor above 1 after
  // ten minutes of full load, as one that has been busy for a while. Empty: every device always
  // runs at its full clock.
  std::vector<double> cooling = {};
  // With `cooling`: every device's enforced power limit in watts (nvidia-smi -pl), within the
  // simulated device's range (power::SimulatedModel: 200-700 W); 0 keeps its default (700 W).
  double power_limit_watts = 0;
  // With `cooling`: power's governor on the virtual clock, in a mode of `acco power run`
  // ("thermal", "energy", "cap:W"; empty: the firmware alone). Every second (the governor's
  // period) it reads each device and acts as it does on a real machine: limits and clocks on the
  // simulated devices, its weight in the policy's view, "no new work" and "drain" closing a
  // device to new tasks (a drain moves its queued ones; a device takes new tasks anyway while
  // every device is closed).
  std::string governor = {};
  // What each task costs its device beyond its run time: a runtime's dispatch, wake-up and
  // completion (acco's runtime learns it per device: sched::DeviceRecord::overhead). The device
  // spends it before the task's inputs are fetched, and the policies' view counts it in when a
  // queue drains, as the runtime's does. 0: free dispatch.
  double task_overhead_seconds = 0;
  // Above this many devices, all alike (one time per task), dmda is asked about the devices of
  // the nodes holding a task's inputs and the 32 that free up first, not every device: the
  // decision's cost stops growing with the platform (its choice is the same where the devices
  // off the data's nodes cost the same to reach).
  int full_scan_devices = 1024;
  // From this many devices, copies are puts between actors on SimGrid mailboxes rather than
  // SimGrid's host-to-host comms, whose cost grows with the copies in flight (the engine's
  // copies.hpp). Same flows, same model. On Task Bench's stencil with one point a device the
  // comms are faster at 2,000 devices, the mailboxes 1.3 times as fast at 5,000 and twice as
  // fast at 10,000 (bench/sim_scale_bench.cpp, dmda-comms and dmda-boxes).
  int mailbox_copies_devices = 4096;
};

struct DeviceUse {
  std::string name;  // "n0 GPU3"
  double busy_seconds = 0;
  std::size_t tasks = 0;
  // With SimOptions::cooling: its energy over the run, its hottest junction, and its mean clock
  // share while busy (1: never throttled).
  double energy_joules = 0;
  double peak_celsius = 0;
  double clock_share = 0;
  bool operator==(const DeviceUse&) const = default;
};

struct LinkUse {
  std::string kind;  // "pcie", "nvlink", "nic", "fabric"
  double bytes = 0;  // every byte each link of the kind carried, summed over its links
  // The busiest link of the kind: its bytes over its bandwidth, as a share of the makespan.
  std::string busiest;
  double busiest_share = 0;
  bool operator==(const LinkUse&) const = default;
};

// One action the governor took during a run (SimOptions::governor), as `acco power run` logs it.
struct GovernorAction {
  double time_seconds = 0;  // virtual time
  std::string device;       // "n0 GPU5"
  std::string action;       // power::to_string(ActionKind): "set_power_limit", "no_new_work"...
  double value = 0;         // watts, hertz, the weight, 1/0
  std::string state;        // the device's state after it: "normal", "warm", "hot", "draining"
  std::string reason;       // "T 86 C >= 83 C (T_max 87 - 4)"
  bool operator==(const GovernorAction&) const = default;
};

// One direction of one link that carried bytes, for a heat map: the node it belongs to (-1: the
// fabric's spines), its name with the direction ("nic 0000:19:00.0 up", "fabric down") and its
// busy share (its bytes over its bandwidth over the makespan).
struct LinkLoad {
  int node = 0;
  std::string kind;
  std::string name;
  double share = 0;
  bool operator==(const LinkLoad&) const = default;
};

struct SimResult {
  std::string policy;
  double makespan = 0;  // seconds of virtual time
  // Lower bounds: the longest dependency path at each task's fastest device (no transfers),
  // and the work spread evenly over every device (the LP when devices differ).
  double critical_path = 0;
  double area = 0;
  // With every task pinned (a training step): the least time the fabric needs for the bytes
  // that must cross it (fabric_bound); 0 otherwise.
  double fabric = 0;
  std::size_t tasks = 0;
  std::size_t copies = 0;  // inputs brought to a device
  double bytes_moved = 0;
  std::vector<DeviceUse> devices;
  std::vector<LinkUse> links;  // by kind, in the order pcie, nvlink, nic, fabric (those used)
  std::string bottleneck;      // "device n0 GPU3 busy 97 %" or "link n0 nic busy 88 %"
  double energy_joules = 0;    // every device's, with SimOptions::cooling; 0 without
  std::string governor;        // SimOptions::governor
  std::vector<GovernorAction> governor_actions;  // with a governor, in time order
  // With SimOptions::record: every task (device d is the platform's device index, times in
  // nanoseconds of virtual time) and every copy (memory node 0 is host memory, whichever node's;
  // device d is d + 1, as in the runtime's records). Not part of acco.sim/1.
  std::vector<sched::TaskRecord> task_records;
  std::vector<sched::TransferRecord> transfer_records;
  std::vector<LinkLoad> link_loads;  // with SimOptions::record; not part of acco.sim/1
  [[nodiscard]] double bound() const {
    const double compute = critical_path > area ? critical_path : area;
    return fabric > compute ? fabric : compute;
  }
  // bound / makespan; 0 for an empty run.
  [[nodiscard]] double efficiency() const { return makespan > 0 ? bound() / makespan : 0; }
  bool operator==(const SimResult&) const = default;
};

// A governor mode the simulated devices take (SimOptions::governor): "thermal", "energy" or
// "cap:W" with W within the simulated device's 200-700 W. kInvalidArgument naming the forms or
// the range otherwise.
[[nodiscard]] Status check_governor(const std::string& mode);

// A lower bound on the makespan from the fabric, for a run whose every task is pinned to a device
// (`pinned`, as SimOptions::pinned; data first on `home`'s nodes, or datum i on node i mod
// nodes): each version of a datum that tasks on other nodes read must leave its node once and
// enter each reader's node once, over the node's fabric link (its ports together), and leave
// its fat-tree leaf or rail group once and enter each other one that reads it, over the leaf's
// or group's links to the spines (the oversubscription's taper). The largest of those times,
// bytes over bandwidth. 0 with one node, or when a task is not pinned (where it runs decides
// what crosses).
[[nodiscard]] double fabric_bound(const Platform& platform, const sched::Workload& workload,
                                  const std::vector<int>& pinned, const std::vector<int>& home);

// Runs the simulation in a child process (SimGrid's engine lives once per process), so one
// program may simulate many runs. `workload`'s tasks carry one time per device of the platform,
// or a single time that every device takes. kInvalidArgument when the workload's columns fit
// neither; kInternal when the child fails (its message).
[[nodiscard]] Result<SimResult> simulate(const Platform& platform, const sched::Workload& workload,
                                         const SimOptions& options);

// One run per policy, in the order given (`acco sim --policy LIST`); the first failure ends
// the comparison, named by its policy. Each run takes `base`'s options but its policy (and
// `record`). With `record_first`, the first run keeps its records
// (for `--trace`, as `acco schedule --trace` writes the first policy's run).
[[nodiscard]] Result<std::vector<SimResult>> simulate_policies(
    const Platform& platform, const sched::Workload& workload,
    const std::vector<sched::PolicyKind>& policies, const SimOptions& base = {},
    bool record_first = false);

// A recorded run as the runtime's RunRecord: one device record per simulated device (its name,
// kind "sim", busy time and tasks), the task and copy records, the makespan as elapsed; what
// sched::chrome_trace writes as a Chrome trace (acco.trace/1).
[[nodiscard]] sched::RunRecord run_record(const SimResult& result);

// {"policy", "makespan_seconds", ...} and back (the child's answer; part of acco.sim/1).
[[nodiscard]] nlohmann::json to_json(const SimResult& result);
[[nodiscard]] Result<SimResult> result_from_json(const nlohmann::json& json);

}  // namespace acco::sim
