// acco sim: the scheduler's policies on a simulated cluster (sim module, on SimGrid).
#include <algorithm>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "acco/report/document.hpp"
#include "acco/sim/report.hpp"
#include "acco/sim/study.hpp"
#include "acco/topo/generated.hpp"
#include "acco/topo/probe.hpp"

#include "command_spec.hpp"
#include "commands.hpp"
#include "machine_flags.hpp"

namespace acco::cli {
namespace {

struct SimFlags {
  MachineFlags machine;
  std::string node;  // a generated node (topo::generated_machine) instead of a probed one
  sim::StudyOptions study;
  sim::StudyFiles files;  // --trace, --html
};

// --node: a generated node, which no other source of the node may join.
Status check_node(const SimFlags& f, const core::Settings& settings) {
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
  return {};
}

class SimCommand final : public Command {
 public:
  SimCommand(MachineOptions machine, SimFlags flags)
      : machine_(std::move(machine)), o_(std::move(flags)) {}

  Result<Output> run(const Invocation& inv) const override {
    ACCO_RETURN_IF_ERROR(sim::check_study_files(o_.files));
    topo::Machine machine;
    if (!o_.node.empty()) {
      ACCO_ASSIGN_OR_RETURN(machine, topo::generated_machine(o_.node), "sim: --node");
    } else {
      ACCO_ASSIGN_OR_RETURN(auto probed, topo::probe(probe_request(machine_, inv.settings)), "sim");
      machine = std::move(probed.machine);
    }
    ACCO_ASSIGN_OR_RETURN(const auto node, sim::node_from_machine(machine), "sim");
    ACCO_ASSIGN_OR_RETURN(auto study, as_usage(sim::make_study(o_.study, &node)));
    study.record_first = !o_.files.trace.empty() || !o_.files.html.empty();
    ACCO_ASSIGN_OR_RETURN(const auto report, sim::run_study(study), "sim");
    ACCO_ASSIGN_OR_RETURN(auto notes, sim::write_study_files(report, o_.files));
    return Output{render(inv, report, sim::sim_document), std::move(notes), kExitOk};
  }

 private:
  MachineOptions machine_;
  SimFlags o_;
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
        sub.add_option("--nodes", f.study.nodes, "how many such nodes (default 1)")->type_name("N");
        offer_values(sub.add_option("--fabric", f.study.fabric,
                                    "how the nodes are joined: single-switch (default), "
                                    "fat-tree:K (K/2 nodes a leaf switch), rail-optimized[:S] "
                                    "(port r of S nodes on leaf r; S 32)")
                         ->type_name("FABRIC"),
                     {"single-switch", "fat-tree:8", "rail-optimized"});
        sub.add_option("--oversubscription", f.study.oversubscription,
                       "a leaf's down-links over its up-links to the spines (default 1)")
            ->type_name("R");
        sub.add_option("--fabric-gbps", f.study.fabric_gbps,
                       "each fabric link's rate per direction in Gb/s (default 400)")
            ->type_name("GBPS");
        sub.add_option("--fabric-latency-us", f.study.fabric_latency_us,
                       "each fabric link's latency in microseconds (default 2)")
            ->type_name("US");
        sub.add_option("--task-overhead-us", f.study.task_overhead_us,
                       "what each task costs its device beyond its run time, in microseconds: a "
                       "runtime's dispatch (default 0)")
            ->type_name("US");
        offer_values(
            sub.add_option("--workload", f.study.workload,
                           "cholesky (default), lu, independent, chain, random, train "
                           "(a data-parallel training step), or taskbench:PATTERN "
                           "(stencil_1d, fft, tree, all_to_all, ...)")
                ->type_name("NAME"),
            {"cholesky", "lu", "independent", "chain", "random", "train", "taskbench:stencil_1d",
             "taskbench:fft", "taskbench:tree", "taskbench:all_to_all", "taskbench:nearest",
             "taskbench:spread", "taskbench:random_nearest", "taskbench:random_spread"});
        sub.add_option("--width", f.study.width, "taskbench: points per timestep (default 8)")
            ->type_name("N");
        sub.add_option("--steps", f.study.steps, "taskbench: timesteps (default 8)")
            ->type_name("N");
        sub.add_option("--radix", f.study.radix,
                       "taskbench nearest, spread, random_*: dependencies per task "
                       "(default 3)")
            ->type_name("N");
        sub.add_option("--fraction", f.study.fraction,
                       "taskbench random_*: the share of the radix's other points each "
                       "task reads (default 0.25)")
            ->type_name("F");
        offer_values(sub.add_option("--task-kernel", f.study.task_kernel,
                                    "taskbench: each task's kernel: compute_bound (default), "
                                    "load_imbalance, empty")
                         ->type_name("KERNEL"),
                     {"compute_bound", "load_imbalance", "empty"});
        sub.add_option("--task-us", f.study.task_us,
                       "taskbench: each task's time in microseconds (default 1000)")
            ->type_name("US");
        sub.add_option("--imbalance", f.study.imbalance,
                       "taskbench load_imbalance: a task takes 1 - imbalance x u of --task-us, u "
                       "in [0, 1) (default 0.5)")
            ->type_name("F");
        sub.add_option("--output-bytes", f.study.output_bytes,
                       "taskbench: each task's output, read by its dependents (default 1MiB)")
            ->type_name("SIZE");
        sub.add_option("--layers", f.study.layers, "train: the model's layers (default 24)")
            ->type_name("N");
        sub.add_option("--layer-ms", f.study.layer_ms,
                       "train: one layer's forward pass in ms; backward takes twice (default 5)")
            ->type_name("MS");
        sub.add_option("--params", f.study.params, "train: the model's parameters (default 1.3e9)")
            ->type_name("N");
        sub.add_option("--bucket-mb", f.study.bucket_mb,
                       "train: gradient bucket size in MiB, as DDP's bucket_cap_mb (default 25)")
            ->type_name("MIB");
        sub.add_option("--batch-mb", f.study.batch_mb,
                       "train: each replica's input for the step in MiB (default 64)")
            ->type_name("MIB");
        sub.add_option("--tiles", f.study.tiles, "cholesky, lu: tiles per side (default 8)")
            ->type_name("N");
        sub.add_option("--tasks", f.study.tasks, "independent, chain, random: tasks (default 1000)")
            ->type_name("N");
        sub.add_option("--kernels", f.study.kernels,
                       "cholesky, lu: kernel times: sirocco (default), mirage, uniform")
            ->type_name("TABLE");
        sub.add_option("--seed", f.study.seed,
                       "independent, random, taskbench random_* and load_imbalance: the "
                       "generator's seed (default 1)")
            ->type_name("N");
        sub.add_option("--seeds", f.study.seeds,
                       "run the workload drawn with N seeds from --seed on (1-1000, default 1): "
                       "each policy's makespan over them")
            ->type_name("N");
        sub.add_option(
               "--dag", f.study.dag,
               "simulate this task graph (acco.dag/1 JSON, or an STG file) instead of --workload")
            ->type_name("FILE");
        sub.add_option("--policy", f.study.policy,
                       "policies to compare: a list of eager, round-robin, least-loaded, dmda, "
                       "ws, heft, or all (default)")
            ->type_name("LIST");
        sub.add_flag("--thermal", f.study.thermal,
                     "run every device on power's thermal model: energy, temperatures, throttling");
        sub.add_option("--failed-fan", f.study.failed_fans,
                       "what if these devices lose a fan (nN:GPUi or GPUi, a list): their "
                       "heatsink cools --fan-factor times worse; implies --thermal")
            ->type_name("DEVICES")
            ->delimiter(',');
        sub.add_option("--fan-factor", f.study.fan_factor,
                       "a failed fan's factor on the heatsink-to-air resistance (default 4)")
            ->type_name("X");
        sub.add_option("--power-limit", f.study.power_limit,
                       "what if every device is capped at W watts (200-700, the simulated "
                       "H100-class device's range); implies --thermal")
            ->type_name("W");
        sub.add_option("--governor", f.study.governor,
                       "run power's governor on the virtual clock, every second, in a mode of "
                       "acco power run: thermal, energy or cap:W; implies --thermal")
            ->type_name("MODE");
        sub.add_option("--trace", f.files.trace,
                       "write the first policy's run as a Chrome trace (acco.trace/1) to FILE")
            ->type_name("FILE");
        sub.add_option("--html", f.files.html,
                       "write the report as HTML to FILE, with the first run's Gantt chart and "
                       "link heat maps")
            ->type_name("FILE");
        add_json_flag(sub, shared, "print JSON (schema acco.sim/1) instead of text");
        add_config_flag(sub, shared);
      },
      [](const SimFlags& f, const core::Settings& settings) -> Result<std::unique_ptr<Command>> {
        ACCO_ASSIGN_OR_RETURN(auto machine, machine_options(f.machine, settings));
        ACCO_RETURN_IF_ERROR(check_node(f, settings));
        ACCO_RETURN_IF_ERROR(as_usage(sim::make_study(f.study)));  // again with the node, in run
        return std::make_unique<SimCommand>(std::move(machine), f);
      });
}

}  // namespace acco::cli
