// Task Bench's dependence patterns (Slaughter et al., SC20; StanfordLegion/task-bench core.cc):
// a grid of `steps` timesteps by `width` points, each task (t, p) writing its own output and
// reading the outputs of its dependencies at t - 1. The same graphs every Task Bench
// implementation runs, so a simulated schedule compares with published runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "acco/core/result.hpp"
#include "acco/sched/workload.hpp"

namespace acco::sim {

enum class Pattern {
  kTrivial,            // no dependencies
  kNoComm,             // (t-1, p)
  kStencil1d,          // (t-1, p-1..p+1) within the grid
  kStencil1dPeriodic,  // the same, wrapping around
  kDom,                // a diamond: (t-1, p-1..p), the width growing then shrinking
  kTree,               // (t-1, p/2), the width doubling each step from 1
  kFft,                // butterflies: (t-1, p - 2^s), (t-1, p), (t-1, p + 2^s), s cycling
  kAllToAll,           // every point of t-1
  kNearest,            // the `radix` points around p
  // `radix` points spread evenly over the width, all but p shifted by the dependence set
  // (t mod 3, Task Bench's default period)
  kSpread,
  // of the `radix` points around p, p itself and each other with probability `fraction`
  // (a hash of the timestep's dependence set, the point and the dependency: the same graph for
  // the same spec; acco's hash, so not Task Bench's own draw)
  kRandomNearest,
  // spread's `radix` points, p itself and each other with probability `fraction` (the same hash)
  kRandomSpread,
};
// Task Bench's names ("stencil_1d", "all_to_all", ...); kInvalidArgument listing them.
[[nodiscard]] Result<Pattern> parse_pattern(std::string_view name);
[[nodiscard]] std::string_view to_string(Pattern pattern);

// Task Bench's kernels as times: what a task costs, not what it computes. memory_bound (a
// time plus the bytes it streams) is not modelled: its time is compute_bound's.
enum class Kernel {
  kComputeBound,   // every task `seconds`
  kLoadImbalance,  // `seconds` x (1 - imbalance x u), u in [0, 1) a hash of the task's point
  kEmpty,          // no time: what the schedule and the copies cost alone
};
// "compute_bound", "load_imbalance", "empty"; kInvalidArgument listing them.
[[nodiscard]] Result<Kernel> parse_kernel(std::string_view name);
[[nodiscard]] std::string_view to_string(Kernel kernel);

struct TaskBenchSpec;
// Whether the spec's graph or times depend on its seed (random_nearest, random_spread, or the
// load_imbalance kernel).
[[nodiscard]] bool draws_at_random(const TaskBenchSpec& spec);

struct TaskBenchSpec {
  Pattern pattern = Pattern::kStencil1d;
  int width = 8;                                    // points per timestep
  int steps = 8;                                    // timesteps
  int radix = 3;                                    // nearest, spread, random_nearest
  double fraction = 0.25;                           // random_* (Task Bench's -fraction)
  std::uint64_t seed = 1;                           // random_* and load_imbalance: the draw
  Kernel kernel = Kernel::kComputeBound;            // Task Bench's -kernel
  double seconds = 1e-3;                            // a task's run time before the kernel's factor
  double imbalance = 0.5;                           // load_imbalance (Task Bench's -imbalance)
  std::size_t output_bytes = std::size_t{1} << 20;  // each task's output
};

// The graph as a workload (tasks in timestep order, one time for every device). kInvalidArgument
// naming the field for a width or steps below 1 or above 100000, more than 10 million tasks, a
// radix below 1 or above the width (nearest, spread, random_*), a fraction or an imbalance
// outside 0-1, or a negative or non-finite time.
[[nodiscard]] Result<sched::Workload> task_bench(const TaskBenchSpec& spec);

}  // namespace acco::sim
