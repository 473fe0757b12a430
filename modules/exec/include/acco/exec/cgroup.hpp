// Per-job limits in cgroup v2: a child cgroup of the caller's own (the subtree a systemd user
// scope with Delegate=yes, or a container's private /sys/fs/cgroup, lets its user write) with
// the job's CPU set and memory node (cpuset: a child cannot widen them, unlike an affinity
// mask), a memory limit (memory.max) and an I/O weight (io.weight). Where the unified hierarchy
// is missing (cgroup v1, hybrid) or not delegated, nothing is made and `skipped` says why and
// how to get it: the job still runs, bound by affinity and memory policy alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace acco::exec {

struct CgroupLimits {
  std::vector<int> cpus;                    // cpuset.cpus; empty: not set
  int memory_node = -1;                     // cpuset.mems; -1: not set
  std::optional<std::uint64_t> memory_max;  // memory.max in bytes
  std::optional<int> io_weight;             // io.weight "default N", 1-10000
  [[nodiscard]] bool any() const {
    return !cpus.empty() || memory_node >= 0 || memory_max.has_value() || io_weight.has_value();
  }
};

struct Cgroup {
  std::string path;                  // the job's cgroup directory; empty: none was made
  std::vector<std::string> applied;  // "memory.max 17179869184", in the order written
  std::vector<std::string> skipped;  // each limit or step that could not be done, and why
};

// The caller's cgroup v2 path from /proc/self/cgroup's text (the "0::/..." line); empty when
// there is none (cgroup v1 only).
[[nodiscard]] std::string own_cgroup(std::string_view proc_self_cgroup);

// Makes ROOT/OWN/NAME (ROOT: /sys/fs/cgroup; OWN: own_cgroup of `proc_self_cgroup`) and writes
// `limits` there, enabling the controllers they need in OWN's cgroup.subtree_control first.
// The kernel refuses that (EBUSY) while OWN itself holds processes, so a caller still in OWN
// first moves itself into the leaf OWN/acco-daemon; called again from there, the jobs still go
// into OWN/NAME beside it. Never fails as a whole: a limit that cannot be set is in `skipped`;
// with no cgroup made, `path` is empty and `skipped` says why.
[[nodiscard]] Cgroup make_cgroup(const std::string& root, std::string_view proc_self_cgroup,
                                 const std::string& name, const CgroupLimits& limits);

// Removes an emptied job cgroup (rmdir; the kernel refuses while a process is in it).
void remove_cgroup(const std::string& path);

}  // namespace acco::exec
