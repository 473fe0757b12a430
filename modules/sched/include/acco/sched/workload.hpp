// Named workloads as plain values: the data they touch, their tasks in submission order with
// access modes, flops and a per-device cost in seconds. `acco schedule`, the scheduler benchmarks
// and the bounds and HEFT code all read the same value, so a workload means the same everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/sched/access.hpp"

namespace acco::sched {

// One device as a workload sees it: which timing column it takes ("cpu", "gpu") and how much
// faster than that column it runs.
struct DeviceModel {
  std::string kind = "gpu";
  double speed = 1;  // seconds are divided by this
  bool operator==(const DeviceModel&) const = default;
};

struct WorkTask {
  std::string type;                                      // "potrf", "gemm", "task"
  std::string name;                                      // "gemm(3,2,1)"
  std::vector<std::pair<std::size_t, Access>> accesses;  // (index into Workload::data_bytes, mode)
  double flops = 0;
  std::vector<double> seconds;  // run time on each device of the DeviceModel list given
  bool operator==(const WorkTask&) const = default;
};

struct Workload {
  std::string name;                     // "cholesky", "lu", "independent", "chain", "random"
  std::vector<std::size_t> data_bytes;  // one entry per piece of data (a tile, a vector)
  std::vector<WorkTask> tasks;          // in submission order
  bool operator==(const Workload&) const = default;
};

// Per-kernel times in seconds for one tile size, per device kind, with the source of the figures.
struct KernelTable {
  std::string name;        // "sirocco", "mirage", "uniform"
  std::size_t tile = 960;  // b: tiles are b x b single-precision floats
  // (kernel, kind) -> seconds; kernels potrf, trsm, syrk, gemm, getrf.
  std::vector<std::pair<std::pair<std::string, std::string>, double>> seconds;
  // > 0: `seconds` is unused and every kernel on every kind takes flops / flops_per_second.
  double flops_per_second = 0;
  // Seconds of one call of `kernel` on a device of `kind`; `flops` is the call's flop count (read
  // only when flops_per_second > 0). kNotFound naming the kernel or kind and the table.
  [[nodiscard]] Result<double> lookup(const std::string& kernel, const std::string& kind,
                                      double flops) const;
};
// "sirocco" and "mirage": StarPU's calibrated b = 960 SP means (../shared/reference/scheduler.md
// c3), kinds "cpu" and "gpu", getrf taken as potrf's time x 2. "uniform": b = 960, every kernel
// costs flops / 1e9 seconds on every kind. kNotFound listing the names otherwise.
[[nodiscard]] Result<KernelTable> kernel_table(const std::string& name);

enum class WorkloadKind {
  kCholesky,     // tiled Cholesky factorisation (potrf, trsm, syrk, gemm)
  kLu,           // tiled LU factorisation without pivoting (getrf, trsm, gemm)
  kIndependent,  // tasks with no dependencies, costs skewed
  kChain,        // each task reads and writes one datum after the previous task
  kRandom,       // a layered random DAG (Topcuoglu et al. 2002)
};
// "cholesky", "lu", "independent", "chain", "random".
[[nodiscard]] const char* to_string(WorkloadKind kind);
// The kind named `name` ("cholesky", ...), or nullopt.
[[nodiscard]] std::optional<WorkloadKind> parse_workload_kind(std::string_view name);

struct WorkloadSpec {
  WorkloadKind kind = WorkloadKind::kCholesky;
  int tiles = 8;                     // cholesky, lu: t (t x t tiles)
  int tasks = 1000;                  // independent, chain, random: number of tasks
  std::uint64_t seed = 1;            // independent (cost skew), random (DAG shape and costs)
  double skew = 4;                   // independent: costs drawn log-uniform in [1, skew] x base
  double base_seconds = 1e-3;        // independent, chain, random: mean task time at speed 1
  std::size_t task_bytes = 1 << 20;  // independent, chain, random: bytes each task's data has
  // cholesky, lu: bytes of one tile; 0 = b x b single-precision floats of the kernel table.
  // Smaller tiles keep the kernel times but move less data (an emulation on a slow host).
  std::size_t tile_bytes = 0;
  // random (Topcuoglu et al. 2002): shape alpha, out-degree, communication-to-computation
  // ratio, heterogeneity beta.
  double alpha = 1;
  int out_degree = 3;
  double ccr = 1;
  double beta = 0.5;
  std::string kernels = "sirocco";  // cholesky, lu: the KernelTable
  double time_scale = 1;            // every cost multiplied by this
};

// Builds the workload for these devices. Task i's seconds[d] is its time on devices[d], already
// divided by devices[d].speed and multiplied by time_scale.
// - cholesky: right-looking tiled, lower triangle; data = the t(t+1)/2 tiles (i >= j) of
//   b x b x 4 bytes (b = KernelTable::tile). Per step k, as StarPU/Chameleon submit it:
//   potrf(k) RW (k,k); trsm(i,k) R (k,k) RW (i,k) for i > k; then for each j > k: syrk(j,k)
//   R (j,k) RW (j,j) followed by gemm(i,j,k) R (i,k) R (j,k) RW (i,j) for i > j.
//   t(t+1)(t+2)/6 tasks; flops potrf b^3/3, trsm b^3, syrk b^3, gemm 2b^3.
// - lu: without pivoting; data = all t x t tiles. Per step k: getrf(k) RW (k,k); trsm(i,k)
//   R (k,k) RW (i,k) for i > k; trsm(k,j) R (k,k) RW (k,j) for j > k; then for each j > k and
//   i > k: gemm(i,j,k) R (i,k) R (k,j) RW (i,j). t(t+1)(2t+1)/6 tasks; flops getrf 2b^3/3,
//   trsm b^3, gemm 2b^3. Kernel times come from KernelTable::lookup(kernel, device kind).
// - independent: `tasks` tasks, each RW on its own datum of task_bytes; task i costs
//   base_seconds x skew^u with u uniform in [0, 1) from std::mt19937_64(seed) (53 high bits of
//   each draw, so every standard library gives the same values), on every device kind.
// - chain: `tasks` tasks all RW on one datum of task_bytes, base_seconds each.
// - random: the generator of Topcuoglu et al. (reference c1). Tasks go in levels whose widths are
//   drawn uniformly from [1, 2 alpha sqrt(v) - 1] (mean alpha sqrt(v), so about sqrt(v) / alpha
//   levels; the last level is cut to make v tasks). A task in level l > 0 has k predecessors,
//   k uniform in [1, out_degree] (capped by the tasks available): one from level l - 1, the rest
//   distinct from any earlier level. w_bar_i ~ U[0, 2 base_seconds], at least base_seconds / 100;
//   w_i,d ~ U[w_bar_i (1 - beta/2), w_bar_i (1 + beta/2)] for each device d. Every task writes
//   (W) one output datum of max(1, ccr x base_seconds x 1e10) bytes, so that a 10 GB/s link moves
//   it in ccr x base_seconds on average (time_scale does not change bytes), and reads (R) the
//   outputs of its predecessors, which makes each DAG edge a read-after-write. Tasks are
//   submitted level by level.
// kInvalidArgument naming the field for a bad spec (unknown name, tiles < 1, tasks < 1,
// non-positive costs or speeds, skew < 1, alpha <= 0, out_degree < 1, ccr < 0, beta outside
// [0, 2), no devices), kNotFound for an unknown kernel table or a device kind it lacks.
// Deterministic for a given spec.
[[nodiscard]] Result<Workload> make_workload(const WorkloadSpec& spec,
                                             const std::vector<DeviceModel>& devices);

// A DAG made explicit: edges from the same inference rule the runtime uses (read after write
// carries the data's bytes; write after read and write after write carry 0 bytes). Per datum, in
// submission order: a reader depends on the last writer; a writer depends on every reader since
// the last writer, or on the last writer itself when there was none. One edge per (from, to)
// pair, keeping the largest bytes; edges sorted by (to, from).
struct Edge {
  std::size_t from = 0;
  std::size_t to = 0;
  std::size_t bytes = 0;
  bool operator==(const Edge&) const = default;
};
[[nodiscard]] std::vector<Edge> infer_edges(const Workload& workload);

}  // namespace acco::sched
