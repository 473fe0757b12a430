// A scheduling experiment as `acco schedule`'s flags ask for it, in their text forms and with
// their defaults, checked into the typed setup (experiment_setup.hpp) that a program could also
// fill in itself. Unlike experiment_setup's parsers, errors here name the flag as the command
// line spells it ("--kinds: 'tpu' is not cpu or gpu", kInvalidArgument).
#pragma once

#include <string>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/sched/experiment_setup.hpp"
#include "acco/sched/workload.hpp"

namespace acco::sched {

// The limits of a run from the shell (make_workload's own guard only against overflow, wider).
inline constexpr int kMaxExperimentTiles = 100;
inline constexpr int kMaxExperimentTasks = 1'000'000;

struct DeviceRequest {
  std::string devices = "host:4";   // parse_device_spec
  std::string kinds;                // per device, or one for all: cpu or gpu (default gpu)
  std::string speeds;               // per device, or one for all: speed factors (default 1)
  std::string link;                 // host devices' emulated link; empty: pcie3x16
  std::string memory;               // per-device budget; empty: the device's memory
  std::vector<std::string> faults;  // parse_injected_fault's texts
};

// `request` checked into a setup (--devices, --kinds, --speeds, --link, --inject-fault,
// --memory). A list has one entry or one per device; with cuda the count is known only once the
// GPUs are found, so opening the devices checks it then. A link and kinds are refused with cuda.
[[nodiscard]] Result<DeviceSetup> device_setup(const DeviceRequest& request);

// The devices of `setup` opened, each with its kind and speed: with cuda the lists' lengths are
// checked against the GPUs found. Errors: the backend's (with cuda "--devices cuda: ..."), the
// lists' ("--speeds: ...", "--kinds: ..."), the injected faults' ("--inject-fault: ...").
[[nodiscard]] Result<ExperimentDevices> open_devices(const DeviceSetup& setup);

struct WorkloadRequest {
  std::string kind = "cholesky";  // parse_workload_kind
  WorkloadSpec spec;              // its kind is set from `kind`
  std::string tile_bytes;  // cholesky, lu: bytes of a tile (parse_data_bytes); empty: default
  std::string task_bytes;  // independent, chain: bytes of each task's data; empty: default
};

// `request` checked (--workload, --tiles, --tasks, --skew, --ccr, --alpha, --out-degree, --beta,
// --time-scale, --kernels, --tile-bytes, --task-bytes) into the spec make_workload takes.
[[nodiscard]] Result<WorkloadSpec> workload_spec(const WorkloadRequest& request);

}  // namespace acco::sched
