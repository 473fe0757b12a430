// acco sim: the scheduler's policies on a simulated cluster (sim module, on SimGrid).
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/core/file.hpp"
#include "acco/core/units.hpp"
#include "acco/report/document.hpp"
#include "acco/sched/policy.hpp"
#include "acco/sched/record.hpp"
#include "acco/sched/workload.hpp"
#include "acco/sim/report.hpp"
#include "acco/sim/simulate.hpp"
#include "acco/sim/study.hpp"
#include "acco/sim/taskbench.hpp"
#include "acco/sim/training.hpp"
#include "acco/topo/generated.hpp"
#include "acco/topo/probe.hpp"

#include "command_spec.hpp"
#include "commands.hpp"
#include "machine_flags.hpp"

namespace acco::cli {
namespace {

struct SimFlags {
  MachineFlags machine;
  std::string node;
  int nodes = 1;
  std::string fabric = "single-switch";
  double fabric_gbps = 400;
  double fabric_latency_us = 2;
  double task_overhead_us = 0;
  int oversubscription = 1;
  std::string workload = "cholesky";
  int tiles = 8;
  int tasks = 1000;
  std::string kernels = "sirocco";
  std::uint64_t seed = 1;
  int seeds = 1;
  std::string policy = "all";
  std::string dag;
  int width = 8;
  int steps = 8;
  int radix = 3;
  double fraction = 0.25;
  std::string task_kernel = "compute_bound";
  double task_us = 1000;
  double imbalance = 0.5;
  std::string output_bytes = "1MiB";
  std::string trace;
  std::string html;
  int layers = 24;
  double layer_ms = 5;
  double params = 1.3e9;
  double bucket_mb = 25;
  double batch_mb = 64;
  bool thermal = false;
  std::vector<std::string> failed_fans;
  double fan_factor = 4;
  double power_limit = 0;
  std::string governor;
};

struct SimOptionsAll {
  MachineOptions machine;
  std::string node;  // a generated node (topo::generated_machine) instead of a probed one
  sim::Fabric fabric;
  int nodes = 1;
  sched::WorkloadSpec workload;
  std::vector<sched::PolicyKind> policies;
  std::string dag;  // an acco.dag/1 file instead of the generated workload
  std::optional<sim::TaskBenchSpec> taskbench;  // --workload taskbench:PATTERN
  std::string trace;                            // the first policy's run as a Chrome trace
  std::string html;                             // the report with the first run's plots
  std::optional<sim::TrainingSpec> training;    // --workload train
  bool thermal = false;                         // --thermal, a --failed-fan or --power-limit
  std::vector<std::string> failed_fans;         // "n0:GPU5", checked against the platform
  double fan_factor = 4;
  double power_limit = 0;    // watts, every device; 0: the model's default
  std::string governor;      // --governor: power's governor mode on the virtual clock
  int seeds = 1;             // --seeds: the workload drawn with seed, seed + 1, ...
  double task_overhead = 0;  // seconds each task costs its device beyond its run time
};

// --workload taskbench:PATTERN with --width, --steps and --radix; nullopt for other workloads.
Result<std::optional<sim::TaskBenchSpec>> taskbench_options(const SimFlags& f) {
  // Checked with any workload, as every flag that takes one of a set of names is.
  ACCO_ASSIGN_OR_RETURN(const sim::Kernel kernel,
                        for_flag("--task-kernel", sim::parse_kernel(f.task_kernel)));
  if (f.workload.rfind("taskbench:", 0) != 0) {
    return std::optional<sim::TaskBenchSpec>();
  }
  auto pattern = sim::parse_pattern(f.workload.substr(10));
  if (!pattern) {
    return usage("--workload: " + pattern.error().message);
  }
  for (const auto& [flag, value] : {std::pair{"--width", f.width}, {"--steps", f.steps}}) {
    if (value < 1 || value > 100000) {
      return bad_value(flag, std::to_string(value), "a whole number from 1 to 100000");
    }
  }
  if (static_cast<long long>(f.width) * f.steps > 10'000'000) {
    return usage(
        fmt::format("--width {} x --steps {} is more than 10 million tasks", f.width, f.steps));
  }
  if ((*pattern == sim::Pattern::kNearest || *pattern == sim::Pattern::kSpread ||
       *pattern == sim::Pattern::kRandomNearest || *pattern == sim::Pattern::kRandomSpread) &&
      (f.radix < 1 || f.radix > f.width)) {
    return bad_value("--radix", std::to_string(f.radix),
                     fmt::format("a whole number from 1 to --width ({})", f.width));
  }
  if (!(f.fraction >= 0 && f.fraction <= 1)) {
    return bad_value("--fraction", fmt::format("{}", f.fraction), "a share from 0 to 1");
  }
  sim::TaskBenchSpec spec;
  spec.kernel = kernel;
  if (!(f.task_us >= 0 && f.task_us <= 1e9)) {
    return bad_value("--task-us", fmt::format("{}", f.task_us), "microseconds from 0 to 1e9");
  }
  if (!(f.imbalance >= 0 && f.imbalance <= 1)) {
    return bad_value("--imbalance", fmt::format("{}", f.imbalance), "a share from 0 to 1");
  }
  const auto bytes = units::parse_bytes(f.output_bytes);
  if (!bytes || *bytes > (std::uint64_t{1} << 40)) {
    return bad_value("--output-bytes", f.output_bytes, "a size from 0 to 1TiB (64KiB, 1MiB)");
  }
  spec.seed = f.seed;
  spec.seconds = f.task_us * 1e-6;
  spec.imbalance = f.imbalance;
  spec.output_bytes = static_cast<std::size_t>(*bytes);
  spec.fraction = f.fraction;
  spec.pattern = *pattern;
  spec.width = f.width;
  spec.steps = f.steps;
  spec.radix = f.radix;
  return std::optional<sim::TaskBenchSpec>(spec);
}

// --fabric with --fabric-gbps and --fabric-latency-us.
Result<sim::Fabric> fabric_options(const SimFlags& f) {
  auto fabric = sim::parse_fabric(f.fabric);
  if (!fabric) {
    return usage(fabric.error().message);
  }
  if (!(f.fabric_gbps > 0) || f.fabric_gbps > 1e6) {
    return bad_value("--fabric-gbps", fmt::format("{}", f.fabric_gbps), "a rate in Gb/s above 0");
  }
  if (!(f.fabric_latency_us >= 0) || f.fabric_latency_us > 1e6) {
    return bad_value("--fabric-latency-us", fmt::format("{}", f.fabric_latency_us),
                     "microseconds, 0 or more");
  }
  fabric->bytes_per_second = f.fabric_gbps * 1e9 / 8;
  fabric->latency = f.fabric_latency_us * 1e-6;
  fabric->oversubscription = f.oversubscription;
  ACCO_RETURN_IF_ERROR(as_usage(sim::check_fabric(*fabric, f.nodes)));
  return *fabric;
}

// --thermal, --failed-fan (checked against the platform when it is known), --fan-factor,
// --power-limit and --governor.
Status thermal_options(const SimFlags& f, SimOptionsAll& o) {
  if (!(f.fan_factor >= 1) || f.fan_factor > 100) {
    return bad_value("--fan-factor", fmt::format("{}", f.fan_factor), "a factor from 1 to 100");
  }
  if (f.power_limit != 0 && !(f.power_limit >= 200 && f.power_limit <= 700)) {
    return bad_value("--power-limit", fmt::format("{}", f.power_limit),
                     "watts from 200 to 700 (the simulated device's range)");
  }
  if (!f.governor.empty() && !sim::check_governor(f.governor)) {
    return bad_value("--governor", f.governor,
                     "a governor mode: thermal, energy or cap:W (W from 200 to 700)");
  }
  o.power_limit = f.power_limit;
  o.governor = f.governor;
  o.thermal = f.thermal || !f.failed_fans.empty() || f.power_limit > 0 || !f.governor.empty();
  o.failed_fans = f.failed_fans;
  o.fan_factor = f.fan_factor;
  return {};
}

// --workload train with --layers, --layer-ms, --params, --bucket-mb and --batch-mb; nullopt for
// other workloads. A training step places each replica's work on its own device: no policy is
// asked, so --policy is refused.
Result<std::optional<sim::TrainingSpec>> training_options(const SimFlags& f) {
  if (f.workload != "train") {
    return std::optional<sim::TrainingSpec>();
  }
  if (f.policy != "all") {
    return usage(
        "--policy: a training step runs each replica's work on its own device; no policy places "
        "it");
  }
  if (f.layers < 1 || f.layers > 10000) {
    return bad_value("--layers", std::to_string(f.layers), "a whole number from 1 to 10000");
  }
  for (const auto& [flag, value, high] : {std::tuple{"--layer-ms", f.layer_ms, 1e6},
                                          {"--params", f.params, 1e15},
                                          {"--bucket-mb", f.bucket_mb, 1e6}}) {
    if (!(value > 0) || value > high) {
      return bad_value(flag, fmt::format("{}", value),
                       fmt::format("a number above 0, at most {:g}", high));
    }
  }
  if (!(f.batch_mb >= 0) || f.batch_mb > 1e6) {
    return bad_value("--batch-mb", fmt::format("{}", f.batch_mb), "MiB, 0 or more");
  }
  sim::TrainingSpec spec;
  spec.layers = f.layers;
  spec.layer_seconds = f.layer_ms * 1e-3;
  spec.parameters = f.params;
  spec.bucket_bytes = f.bucket_mb * 1024 * 1024;
  spec.batch_bytes = f.batch_mb * 1024 * 1024;
  return std::optional<sim::TrainingSpec>(spec);
}

// --node: a generated node, which no other source of the node may join.
Status node_option(const SimFlags& f, const core::Settings& settings, SimOptionsAll& o) {
  if (f.node.empty()) {
    return {};
  }
  for (const auto& [flag, given] :
       {std::pair{"--from", !f.machine.from.empty()},
        {"--hwloc-xml", !f.machine.hwloc_xml.empty()},
        {"--nccl-topo", !f.machine.nccl_topo.empty()},
        {"--sysroot", settings.find("sysroot")->set_by == core::SetBy::kFlag}}) {
    if (given) {
      return usage(
          fmt::format("--node and {} cannot be combined (each names the node to simulate)", flag));
    }
  }
  const auto& known = topo::generated_machines();
  if (std::none_of(known.begin(), known.end(), [&](const auto& m) { return m.name == f.node; })) {
    // Built only to name the known ones; run() builds the machine it simulates.
    return usage("--node: " + topo::generated_machine(f.node).error().message);
  }
  o.node = f.node;
  return {};
}

// --seeds, for a workload drawn at random.
Status seeds_option(const SimFlags& f, SimOptionsAll& o) {
  if (f.seeds < 1 || f.seeds > 1000) {
    return bad_value("--seeds", std::to_string(f.seeds), "a whole number from 1 to 1000");
  }
  const bool drawn = o.taskbench ? sim::draws_at_random(*o.taskbench)
                                 : o.dag.empty() && !o.training &&
                                       (o.workload.kind == sched::WorkloadKind::kIndependent ||
                                        o.workload.kind == sched::WorkloadKind::kRandom);
  if (f.seeds > 1 && !drawn) {
    return usage(
        "--seeds: this workload draws nothing at random (independent, random, "
        "taskbench:random_nearest, taskbench:random_spread and --task-kernel load_imbalance do)");
  }
  o.seeds = f.seeds;
  return {};
}

class SimCommand final : public Command {
 public:
  explicit SimCommand(SimOptionsAll o) : o_(std::move(o)) {}

  Result<Output> run(const Invocation& inv) const override {
    if (!o_.trace.empty()) {
      ACCO_RETURN_IF_ERROR(core::check_output_directory(o_.trace), "--trace");
    }
    if (!o_.html.empty()) {
      ACCO_RETURN_IF_ERROR(core::check_output_directory(o_.html), "--html");
    }
    topo::Machine machine;
    if (!o_.node.empty()) {
      ACCO_ASSIGN_OR_RETURN(machine, topo::generated_machine(o_.node), "sim: --node");
    } else {
      ACCO_ASSIGN_OR_RETURN(auto probed, topo::probe(probe_request(o_.machine, inv.settings)),
                            "sim");
      machine = std::move(probed.machine);
    }
    sim::Study study;
    ACCO_ASSIGN_OR_RETURN(study.platform.node, sim::node_from_machine(machine), "sim");
    study.platform.nodes = o_.nodes;
    study.platform.fabric = o_.fabric;
    ACCO_RETURN_IF_ERROR(as_usage(sim::check_platform(study.platform)));
    study.options.task_overhead_seconds = o_.task_overhead;
    if (o_.thermal) {
      ACCO_ASSIGN_OR_RETURN(
          study.options.cooling,
          as_usage(sim::cooling_factors(study.platform, o_.failed_fans, o_.fan_factor)),
          "--failed-fan");
      study.options.power_limit_watts = o_.power_limit;
      study.options.governor = o_.governor;
    }
    study.training = o_.training;
    study.taskbench = o_.taskbench;
    study.dag = o_.dag;
    study.workload = o_.workload;
    study.policies = o_.policies;
    study.seeds = o_.seeds;
    study.record_first = !o_.trace.empty() || !o_.html.empty();  // for --trace and --html
    ACCO_ASSIGN_OR_RETURN(const auto report, sim::run_study(study), "sim");
    return render(report, inv);
  }

 private:
  // The report, and the first run's trace with --trace.
  Result<Output> render(const sim::SimReport& report, const Invocation& inv) const {
    Output out{"", "", kExitOk};
    if (!o_.trace.empty()) {
      const auto& first = report.runs.front();
      const auto trace = sched::chrome_trace(sim::run_record(first)).dump();
      if (auto written = core::write_file_atomic(o_.trace, trace); !written) {
        return tl::unexpected(as_cannot_write(std::move(written.error()).with_context("--trace")));
      }
      out.err = fmt::format("acco: trace of {} written to {}\n", first.policy, o_.trace);
    }
    if (!o_.html.empty()) {
      if (auto written = core::write_file_atomic(o_.html, sim::to_html(report)); !written) {
        return tl::unexpected(as_cannot_write(std::move(written.error()).with_context("--html")));
      }
      out.err += fmt::format("acco: HTML report written to {}\n", o_.html);
    }
    out.out = inv.format == Format::kJson ? sim::to_json(report).dump(2) + "\n"
                                          : report::render_text(sim::sim_document(report));
    return out;
  }

  SimOptionsAll o_;
};

}  // namespace

CommandSpec sim_command() {
  return command_with_flags<SimFlags>(
      "sim", "simulate the scheduler's policies on a cluster of this machine's nodes (SimGrid)",
      [](CLI::App& sub, SharedFlags& shared, SimFlags& f) {
        std::vector<std::string> generated;
        std::string names;
        for (const auto& m : topo::generated_machines()) {
          generated.emplace_back(m.name);
          names += (names.empty() ? "" : ", ") + std::string(m.name);
        }
        offer_values(sub.add_option("--node", f.node,
                                    "the node is a generated one instead of this machine: " + names)
                         ->type_name("NAME"),
                     generated);
        add_setting_flag(sub, shared, "sysroot",
                         "the node is the machine in DIR/sys and DIR/proc (env ACCO_SYSROOT)",
                         "DIR");
        sub.add_option("--from", f.machine.from, "the node is the machine of this snapshot")
            ->type_name("FILE");
        sub.add_option("--hwloc-xml", f.machine.hwloc_xml,
                       "the node is the machine of this hwloc XML export")
            ->type_name("FILE");
        sub.add_option("--nccl-topo", f.machine.nccl_topo,
                       "the node is the machine of this NCCL topology file (NCCL_TOPO_FILE)")
            ->type_name("FILE");
        add_setting_flag(sub, shared, "nvml", "query NVML: auto, on, off (env ACCO_NVML)", "MODE");
        sub.add_option("--nodes", f.nodes, "how many such nodes (default 1)")->type_name("N");
        offer_values(sub.add_option("--fabric", f.fabric,
                                    "how the nodes are joined: single-switch (default), "
                                    "fat-tree:K (K/2 nodes a leaf switch), rail-optimized[:S] "
                                    "(port r of S nodes on leaf r; S 32)")
                         ->type_name("FABRIC"),
                     {"single-switch", "fat-tree:8", "rail-optimized"});
        sub.add_option("--oversubscription", f.oversubscription,
                       "a leaf's down-links over its up-links to the spines (default 1)")
            ->type_name("R");
        sub.add_option("--fabric-gbps", f.fabric_gbps,
                       "each fabric link's rate per direction in Gb/s (default 400)")
            ->type_name("GBPS");
        sub.add_option("--fabric-latency-us", f.fabric_latency_us,
                       "each fabric link's latency in microseconds (default 2)")
            ->type_name("US");
        sub.add_option("--task-overhead-us", f.task_overhead_us,
                       "what each task costs its device beyond its run time, in microseconds: a "
                       "runtime's dispatch (default 0)")
            ->type_name("US");
        offer_values(
            sub.add_option("--workload", f.workload,
                           "cholesky (default), lu, independent, chain, random, train "
                           "(a data-parallel training step), or taskbench:PATTERN "
                           "(stencil_1d, fft, tree, all_to_all, ...)")
                ->type_name("NAME"),
            {"cholesky", "lu", "independent", "chain", "random", "train", "taskbench:stencil_1d",
             "taskbench:fft", "taskbench:tree", "taskbench:all_to_all", "taskbench:nearest",
             "taskbench:spread", "taskbench:random_nearest", "taskbench:random_spread"});
        sub.add_option("--width", f.width, "taskbench: points per timestep (default 8)")
            ->type_name("N");
        sub.add_option("--steps", f.steps, "taskbench: timesteps (default 8)")->type_name("N");
        sub.add_option("--radix", f.radix,
                       "taskbench nearest, spread, random_*: dependencies per task "
                       "(default 3)")
            ->type_name("N");
        sub.add_option("--fraction", f.fraction,
                       "taskbench random_*: the share of the radix's other points each "
                       "task reads (default 0.25)")
            ->type_name("F");
        offer_values(sub.add_option("--task-kernel", f.task_kernel,
                                    "taskbench: each task's kernel: compute_bound (default), "
                                    "load_imbalance, empty")
                         ->type_name("KERNEL"),
                     {"compute_bound", "load_imbalance", "empty"});
        sub.add_option("--task-us", f.task_us,
                       "taskbench: each task's time in microseconds (default 1000)")
            ->type_name("US");
        sub.add_option("--imbalance", f.imbalance,
                       "taskbench load_imbalance: a task takes 1 - imbalance x u of --task-us, u "
                       "in [0, 1) (default 0.5)")
            ->type_name("F");
        sub.add_option("--output-bytes", f.output_bytes,
                       "taskbench: each task's output, read by its dependents (default 1MiB)")
            ->type_name("SIZE");
        sub.add_option("--layers", f.layers, "train: the model's layers (default 24)")
            ->type_name("N");
        sub.add_option("--layer-ms", f.layer_ms,
                       "train: one layer's forward pass in ms; backward takes twice (default 5)")
            ->type_name("MS");
        sub.add_option("--params", f.params, "train: the model's parameters (default 1.3e9)")
            ->type_name("N");
        sub.add_option("--bucket-mb", f.bucket_mb,
                       "train: gradient bucket size in MiB, as DDP's bucket_cap_mb (default 25)")
            ->type_name("MIB");
        sub.add_option("--batch-mb", f.batch_mb,
                       "train: each replica's input for the step in MiB (default 64)")
            ->type_name("MIB");
        sub.add_option("--tiles", f.tiles, "cholesky, lu: tiles per side (default 8)")
            ->type_name("N");
        sub.add_option("--tasks", f.tasks, "independent, chain, random: tasks (default 1000)")
            ->type_name("N");
        sub.add_option("--kernels", f.kernels,
                       "cholesky, lu: kernel times: sirocco (default), mirage, uniform")
            ->type_name("TABLE");
        sub.add_option("--seed", f.seed,
                       "independent, random, taskbench random_* and load_imbalance: the "
                       "generator's seed (default 1)")
            ->type_name("N");
        sub.add_option("--seeds", f.seeds,
                       "run the workload drawn with N seeds from --seed on (1-1000, default 1): "
                       "each policy's makespan over them")
            ->type_name("N");
        sub.add_option(
               "--dag", f.dag,
               "simulate this task graph (acco.dag/1 JSON, or an STG file) instead of --workload")
            ->type_name("FILE");
        sub.add_option("--policy", f.policy,
                       "policies to compare: a list of eager, round-robin, least-loaded, dmda, "
                       "ws, heft, or all (default)")
            ->type_name("LIST");
        sub.add_flag("--thermal", f.thermal,
                     "run every device on power's thermal model: energy, temperatures, throttling");
        sub.add_option("--failed-fan", f.failed_fans,
                       "what if these devices lose a fan (nN:GPUi or GPUi, a list): their "
                       "heatsink cools --fan-factor times worse; implies --thermal")
            ->type_name("DEVICES")
            ->delimiter(',');
        sub.add_option("--fan-factor", f.fan_factor,
                       "a failed fan's factor on the heatsink-to-air resistance (default 4)")
            ->type_name("X");
        sub.add_option("--power-limit", f.power_limit,
                       "what if every device is capped at W watts (200-700, the simulated "
                       "H100-class device's range); implies --thermal")
            ->type_name("W");
        sub.add_option("--governor", f.governor,
                       "run power's governor on the virtual clock, every second, in a mode of "
                       "acco power run: thermal, energy or cap:W; implies --thermal")
            ->type_name("MODE");
        sub.add_option("--trace", f.trace,
                       "write the first policy's run as a Chrome trace (acco.trace/1) to FILE")
            ->type_name("FILE");
        sub.add_option("--html", f.html,
                       "write the report as HTML to FILE, with the first run's Gantt chart and "
                       "link heat maps")
            ->type_name("FILE");
        add_json_flag(sub, shared, "print JSON (schema acco.sim/1) instead of text");
        add_config_flag(sub, shared);
      },
      [](const SimFlags& f, const core::Settings& settings) -> Result<std::unique_ptr<Command>> {
        SimOptionsAll o;
        ACCO_ASSIGN_OR_RETURN(o.machine, machine_options(f.machine, settings));
        ACCO_RETURN_IF_ERROR(node_option(f, settings, o));
        if (f.nodes < 1 || f.nodes > 100000) {
          return bad_value("--nodes", std::to_string(f.nodes), "a whole number from 1 to 100000");
        }
        o.nodes = f.nodes;
        if (!(f.task_overhead_us >= 0) || f.task_overhead_us > 1e6) {
          return bad_value("--task-overhead-us", fmt::format("{}", f.task_overhead_us),
                           "microseconds from 0 to 1e6");
        }
        o.task_overhead = f.task_overhead_us * 1e-6;
        ACCO_ASSIGN_OR_RETURN(o.fabric, fabric_options(f));
        ACCO_ASSIGN_OR_RETURN(o.taskbench, taskbench_options(f));
        ACCO_ASSIGN_OR_RETURN(o.training, training_options(f));
        const auto kind = sched::parse_workload_kind(f.workload);
        if (!kind && !o.taskbench && !o.training) {
          return bad_value("--workload", f.workload,
                           "one of cholesky, lu, independent, chain, random, train, "
                           "taskbench:PATTERN");
        }
        o.workload.kind = kind.value_or(sched::WorkloadKind::kCholesky);
        if (f.tiles < 1 || f.tiles > 200) {
          return bad_value("--tiles", std::to_string(f.tiles), "a whole number from 1 to 200");
        }
        if (f.tasks < 1 || f.tasks > 10000000) {
          return bad_value("--tasks", std::to_string(f.tasks), "a whole number from 1 to 10000000");
        }
        o.workload.tiles = f.tiles;
        o.workload.tasks = f.tasks;
        o.workload.kernels = f.kernels;
        o.workload.seed = f.seed;
        if (auto table = sched::kernel_table(f.kernels); !table) {
          return usage("--kernels: " + table.error().message);
        }
        auto policies = sched::parse_policies(f.policy);
        if (!policies) {
          return usage("--policy: " + policies.error().message);
        }
        o.policies = *policies;
        o.dag = f.dag;
        o.trace = f.trace;
        o.html = f.html;
        ACCO_RETURN_IF_ERROR(seeds_option(f, o));
        ACCO_RETURN_IF_ERROR(thermal_options(f, o));
        return std::make_unique<SimCommand>(std::move(o));
      });
}

}  // namespace acco::cli
