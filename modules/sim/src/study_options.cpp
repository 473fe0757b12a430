// make_study: `acco sim`'s flags, as StudyOptions, checked into a Study. The messages name the
// flags, as the CLI has always printed them.
#include <string>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "acco/core/option_check.hpp"
#include "acco/core/units.hpp"
#include "acco/sim/study.hpp"

namespace acco::sim {
namespace {

using core::bad_option;
using core::check_range;

Result<Fabric> fabric_of(const StudyOptions& o) {
  ACCO_ASSIGN_OR_RETURN(Fabric fabric, parse_fabric(o.fabric));
  if (!(o.fabric_gbps > 0) || o.fabric_gbps > 1e6) {
    return bad_option("--fabric-gbps", core::option_text(o.fabric_gbps), "a rate in Gb/s above 0");
  }
  ACCO_RETURN_IF_ERROR(
      check_range("--fabric-latency-us", o.fabric_latency_us, 0.0, 1e6, "microseconds, 0 or more"));
  fabric.bytes_per_second = o.fabric_gbps * 1e9 / 8;
  fabric.latency = o.fabric_latency_us * 1e-6;
  fabric.oversubscription = o.oversubscription;
  ACCO_RETURN_IF_ERROR(check_fabric(fabric, o.nodes));
  return fabric;
}

// --workload taskbench:PATTERN with its flags; nullopt for other workloads. --task-kernel is
// checked with any workload, as every option that takes one of a set of names is.
Result<std::optional<TaskBenchSpec>> taskbench_of(const StudyOptions& o) {
  ACCO_ASSIGN_OR_RETURN(const Kernel kernel, parse_kernel(o.task_kernel), "--task-kernel");
  if (!o.workload.starts_with("taskbench:")) {
    return std::optional<TaskBenchSpec>();
  }
  ACCO_ASSIGN_OR_RETURN(const Pattern pattern, parse_pattern(o.workload.substr(10)), "--workload");
  ACCO_RETURN_IF_ERROR(
      check_range("--width", o.width, 1, 100000, "a whole number from 1 to 100000"));
  ACCO_RETURN_IF_ERROR(
      check_range("--steps", o.steps, 1, 100000, "a whole number from 1 to 100000"));
  if (static_cast<long long>(o.width) * o.steps > 10'000'000) {
    return fail(
        Errc::kInvalidArgument,
        fmt::format("--width {} x --steps {} is more than 10 million tasks", o.width, o.steps));
  }
  if (pattern == Pattern::kNearest || pattern == Pattern::kSpread ||
      pattern == Pattern::kRandomNearest || pattern == Pattern::kRandomSpread) {
    ACCO_RETURN_IF_ERROR(
        check_range("--radix", o.radix, 1, o.width,
                    fmt::format("a whole number from 1 to --width ({})", o.width)));
  }
  ACCO_RETURN_IF_ERROR(check_range("--fraction", o.fraction, 0.0, 1.0, "a share from 0 to 1"));
  ACCO_RETURN_IF_ERROR(check_range("--task-us", o.task_us, 0.0, 1e9, "microseconds from 0 to 1e9"));
  ACCO_RETURN_IF_ERROR(check_range("--imbalance", o.imbalance, 0.0, 1.0, "a share from 0 to 1"));
  const auto bytes = units::parse_bytes(o.output_bytes);
  if (!bytes || *bytes > (std::uint64_t{1} << 40)) {
    return bad_option("--output-bytes", o.output_bytes, "a size from 0 to 1TiB (64KiB, 1MiB)");
  }
  return TaskBenchSpec{.pattern = pattern,
                       .width = o.width,
                       .steps = o.steps,
                       .radix = o.radix,
                       .fraction = o.fraction,
                       .seed = o.seed,
                       .kernel = kernel,
                       .seconds = o.task_us * 1e-6,
                       .imbalance = o.imbalance,
                       .output_bytes = static_cast<std::size_t>(*bytes)};
}

// --workload train with its flags; nullopt for other workloads. A training step places each
// replica's work on its own device: no policy is asked, so --policy is refused.
Result<std::optional<TrainingSpec>> training_of(const StudyOptions& o) {
  if (o.workload != "train") {
    return std::optional<TrainingSpec>();
  }
  if (o.policy != "all") {
    return fail(Errc::kInvalidArgument,
                "--policy: a training step runs each replica's work on its own device; no policy "
                "places it");
  }
  ACCO_RETURN_IF_ERROR(
      check_range("--layers", o.layers, 1, 10000, "a whole number from 1 to 10000"));
  for (const auto& [flag, value, high] : {std::tuple{"--layer-ms", o.layer_ms, 1e6},
                                          {"--params", o.params, 1e15},
                                          {"--bucket-mb", o.bucket_mb, 1e6}}) {
    if (!(value > 0) || value > high) {
      return bad_option(flag, core::option_text(value),
                        fmt::format("a number above 0, at most {:g}", high));
    }
  }
  ACCO_RETURN_IF_ERROR(check_range("--batch-mb", o.batch_mb, 0.0, 1e6, "MiB, 0 or more"));
  TrainingSpec spec;
  spec.layers = o.layers;
  spec.layer_seconds = o.layer_ms * 1e-3;
  spec.parameters = o.params;
  spec.bucket_bytes = o.bucket_mb * 1024 * 1024;
  spec.batch_bytes = o.batch_mb * 1024 * 1024;
  return std::optional<TrainingSpec>(spec);
}

// acco's generated workloads: --workload, --tiles, --tasks, --kernels.
Status generated_of(const StudyOptions& o, Study& study) {
  const auto kind = sched::parse_workload_kind(o.workload);
  if (!kind && !study.taskbench && !study.training) {
    return bad_option("--workload", o.workload,
                      "one of cholesky, lu, independent, chain, random, train, taskbench:PATTERN");
  }
  study.workload.kind = kind.value_or(sched::WorkloadKind::kCholesky);
  ACCO_RETURN_IF_ERROR(check_range("--tiles", o.tiles, 1, 200, "a whole number from 1 to 200"));
  ACCO_RETURN_IF_ERROR(
      check_range("--tasks", o.tasks, 1, 10000000, "a whole number from 1 to 10000000"));
  study.workload.tiles = o.tiles;
  study.workload.tasks = o.tasks;
  study.workload.kernels = o.kernels;
  study.workload.seed = o.seed;
  if (auto table = sched::kernel_table(o.kernels); !table) {  // its kNotFound is a bad value here
    return fail(Errc::kInvalidArgument, "--kernels: " + table.error().message);
  }
  return {};
}

// --seeds, for a workload drawn at random.
Status seeds_of(const StudyOptions& o, Study& study) {
  ACCO_RETURN_IF_ERROR(check_range("--seeds", o.seeds, 1, 1000, "a whole number from 1 to 1000"));
  const bool drawn = study.taskbench
                         ? draws_at_random(*study.taskbench)
                         : study.dag.empty() && !study.training &&
                               (study.workload.kind == sched::WorkloadKind::kIndependent ||
                                study.workload.kind == sched::WorkloadKind::kRandom);
  if (o.seeds > 1 && !drawn) {
    return fail(Errc::kInvalidArgument,
                "--seeds: this workload draws nothing at random (independent, random, "
                "taskbench:random_nearest, taskbench:random_spread and --task-kernel "
                "load_imbalance do)");
  }
  study.seeds = o.seeds;
  return {};
}

// --fan-factor, --power-limit and --governor; the failed fans are found on the node.
Status thermal_of(const StudyOptions& o) {
  ACCO_RETURN_IF_ERROR(
      check_range("--fan-factor", o.fan_factor, 1.0, 100.0, "a factor from 1 to 100"));
  if (o.power_limit != 0) {
    ACCO_RETURN_IF_ERROR(check_range("--power-limit", o.power_limit, 200.0, 700.0,
                                     "watts from 200 to 700 (the simulated device's range)"));
  }
  if (!o.governor.empty() && !check_governor(o.governor)) {
    return bad_option("--governor", o.governor,
                      "a governor mode: thermal, energy or cap:W (W from 200 to 700)");
  }
  return {};
}

}  // namespace

Result<Study> make_study(const StudyOptions& o, const NodeModel* node) {
  Study study;
  ACCO_RETURN_IF_ERROR(
      check_range("--nodes", o.nodes, 1, 100000, "a whole number from 1 to 100000"));
  study.platform.nodes = o.nodes;
  ACCO_RETURN_IF_ERROR(check_range("--task-overhead-us", o.task_overhead_us, 0.0, 1e6,
                                   "microseconds from 0 to 1e6"));
  study.options.task_overhead_seconds = o.task_overhead_us * 1e-6;
  ACCO_ASSIGN_OR_RETURN(study.platform.fabric, fabric_of(o));
  ACCO_ASSIGN_OR_RETURN(study.taskbench, taskbench_of(o));
  ACCO_ASSIGN_OR_RETURN(study.training, training_of(o));
  ACCO_RETURN_IF_ERROR(generated_of(o, study));
  ACCO_ASSIGN_OR_RETURN(study.policies, sched::parse_policies(o.policy), "--policy");
  study.dag = o.dag;
  ACCO_RETURN_IF_ERROR(seeds_of(o, study));
  ACCO_RETURN_IF_ERROR(thermal_of(o));
  if (node == nullptr) {
    return study;
  }
  study.platform.node = *node;
  ACCO_RETURN_IF_ERROR(check_platform(study.platform));
  if (o.thermal || !o.failed_fans.empty() || o.power_limit > 0 || !o.governor.empty()) {
    ACCO_ASSIGN_OR_RETURN(study.options.cooling,
                          cooling_factors(study.platform, o.failed_fans, o.fan_factor),
                          "--failed-fan");
    study.options.power_limit_watts = o.power_limit;
    study.options.governor = o.governor;
  }
  return study;
}

}  // namespace acco::sim
