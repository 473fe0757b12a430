// `acco exec`'s flags as a request, for any program that binds itself or a child to one GPU the
// way acco exec does: checked, then the binding they ask for on a machine.
#pragma once

#include <string>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/exec/binding.hpp"
#include "acco/topo/machine.hpp"

namespace acco::exec {

struct ExecRequest {
  std::string device;           // --device: an index, PCI address or UUID (select_device)
  std::string local_rank;       // --local-rank: "auto" (device_for_rank) or empty
  std::string bind = "auto";    // --bind: auto or none
  std::string nic = "none";     // --nic: auto or none
  std::string report = "text";  // --report: text, json or none
  bool dry_run = false;         // --dry-run: plan, print, run nothing
  bool check = false;           // --check: this process as it is; no device or command
  std::vector<std::string> command;
};

// `request` checked; kInvalidArgument naming the flag ("--bind: 'x' is not one of auto, none")
// or the combination ("exec: give --device or --local-rank auto (one of them)").
[[nodiscard]] Status check_request(const ExecRequest& request);

// The binding `request` (checked, without --check) asks for on `machine` for a process with
// `env` and the inherited CPUs `cpus`: its device chosen by --device or by the launcher's local
// rank (how ranks share a device, when they do, is its first note). kInvalidArgument "exec:
// <why>" when --local-rank finds no launcher's rank (a flag given in the wrong place);
// select_device's and device_for_rank's kNotFound.
[[nodiscard]] Result<Binding> plan_request(const topo::Machine& machine, const Environment& env,
                                           const std::vector<int>& cpus,
                                           const ExecRequest& request);

}  // namespace acco::exec
