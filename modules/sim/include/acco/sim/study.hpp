// What `acco sim` runs, as a library call: a platform, one workload (acco's generators, Task
// Bench's patterns, a task graph file, or a data-parallel training step), each policy on it,
// over one or several seeds of a workload drawn at random, with the simulation's options (the
// thermal what-ifs, a runtime's per-task cost); the answer is the report `acco sim` renders.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/sched/policy.hpp"
#include "acco/sched/workload.hpp"
#include "acco/sim/platform.hpp"
#include "acco/sim/report.hpp"
#include "acco/sim/simulate.hpp"
#include "acco/sim/taskbench.hpp"
#include "acco/sim/training.hpp"

namespace acco::sim {

struct Study {
  Platform platform;
  // The workload, the first of these that is set: a training step (no policy places it), a
  // Task Bench graph, a task graph file (acco.dag/1 or STG), else acco's generator.
  std::optional<TrainingSpec> training = std::nullopt;
  std::optional<TaskBenchSpec> taskbench = std::nullopt;
  std::string dag = {};
  sched::WorkloadSpec workload = {};
  std::vector<sched::PolicyKind> policies = {sched::PolicyKind::kDmda};
  // Draws of a workload drawn at random: the seeds from its own seed on (1-1000).
  int seeds = 1;
  // Every run's options (cooling, power limit, governor, task overhead); the policy and record
  // are the study's.
  SimOptions options = {};
  // The first run keeps its records (for a trace or a page).
  bool record_first = false;
};

// The workload of the `index`th seed of `study` (its own seed + index), and its line in the
// report ("cholesky (8 x 8 tiles, sirocco kernels)"). Errors of the generator or the file,
// with "--workload" or "--dag" as context.
[[nodiscard]] Result<sched::Workload> study_workload(const Study& study, int index,
                                                     std::string* text = nullptr);

// A study as a person asks for it, in the units of `acco sim`'s flags (one field a flag, the same
// defaults): what the CLI and a program fill in, and make_study checks.
struct StudyOptions {
  int nodes = 1;                         // 1-100000 nodes like the one given
  std::string fabric = "single-switch";  // parse_fabric's text
  double fabric_gbps = 400;              // each fabric link, per direction
  double fabric_latency_us = 2;          // each fabric link's latency
  int oversubscription = 1;              // a leaf's down-links over its up-links
  double task_overhead_us = 0;           // a runtime's cost per task (0-1e6)
  std::string workload = "cholesky";     // a generator, "train" or "taskbench:PATTERN"
  int tiles = 8;                         // cholesky, lu (1-200)
  int tasks = 1000;                      // independent, chain, random (1-1e7)
  std::string kernels = "sirocco";       // cholesky, lu: the kernel table
  std::uint64_t seed = 1;                // the generator's (and Task Bench's) seed
  int seeds = 1;                         // 1-1000 draws of a workload drawn at random
  std::string policy = "all";            // sched::parse_policies's list
  std::string dag;                       // a task graph file instead of --workload
  int width = 8;                         // taskbench: points per timestep (1-100000)
  int steps = 8;                         // taskbench: timesteps (1-100000)
  int radix = 3;                         // taskbench nearest, spread, random_* (1-width)
  double fraction = 0.25;                // taskbench random_* (0-1)
  std::string task_kernel = "compute_bound";
  double task_us = 1000;                 // taskbench: each task's time (0-1e9)
  double imbalance = 0.5;                // taskbench load_imbalance (0-1)
  std::string output_bytes = "1MiB";     // taskbench: each task's output (0-1TiB)
  int layers = 24;                       // train (1-10000)
  double layer_ms = 5;                   // train: one layer forward
  double params = 1.3e9;                 // train: the model's parameters
  double bucket_mb = 25;                 // train: DDP's bucket_cap_mb
  double batch_mb = 64;                  // train: each replica's input
  bool thermal = false;                  // power's thermal model on every device
  std::vector<std::string> failed_fans;  // "n0:GPU5" or "GPU5": implies thermal
  double fan_factor = 4;                 // a failed fan's factor (1-100)
  double power_limit = 0;                // watts on every device (200-700; 0: the model's)
  std::string governor;                  // thermal, energy or cap:W; implies thermal
};

// The study `options` ask for, every value checked; errors name the flag ("--width: '0' is not
// a whole number from 1 to 100000", kInvalidArgument). Without `node` the platform's node is left
// empty and the failed fans unchecked (a check before the node is probed); with it, the platform
// is checked (check_platform) and the failed fans found on it ("--failed-fan: ...").
[[nodiscard]] Result<Study> make_study(const StudyOptions& options,
                                       const NodeModel* node = nullptr);

// Runs the study: every policy on the first seed's workload (the training step alone for a
// training workload), then, with seeds > 1, on each other seed's, whose makespans go beside
// the first's. The report's platform, cooling, power limit and governor are the study's. Errors
// as simulate()'s and study_workload()'s.
[[nodiscard]] Result<SimReport> run_study(const Study& study);

// The files `acco sim` writes beside its report; an empty path: none.
struct StudyFiles {
  std::string trace;  // --trace: the first run as a Chrome trace (acco.trace/1)
  std::string html;   // --html: the report with the first run's plots (to_html)
};
// Before the study runs: each file's directory exists; kCannotWrite naming the flag ("--trace:
// cannot write PATH: directory D does not exist") otherwise. A study that writes files must keep
// its first run's records (Study::record_first).
[[nodiscard]] Status check_study_files(const StudyFiles& files);
// Writes them from `report`; the lines a person is told ("acco: trace of dmda written to PATH").
// kCannotWrite naming the flag.
[[nodiscard]] Result<std::string> write_study_files(const SimReport& report,
                                                    const StudyFiles& files);

}  // namespace acco::sim
