// The simulator against the real runtime: the same workload, the same policies, on four emulated
// devices of the host backend (kernels held for their modelled time, copies paced on emulated
// links) and on their model in `acco sim` (a link per device to host memory at the emulated
// link's rate and latency, peers through both links, as the host backend copies), side by side
// in one run. Prints each policy's measured makespans (the fastest of --reps, and the median), the
// simulated one and its ratio to the fastest measured (on a shared machine interference only
// adds time, so the fastest run is the one closest to what the runtime itself does), and each
// policy against eager in both, so that a policy's gain can be compared too; writes JSON
// ("acco.sim-validation/1"). Issue 40's target: every simulated makespan within 10 % of the
// measured one. --check exits 1 when one is not: a timing comparison, so it is a benchmark's
// verdict on a quiet machine, never a unit test.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "acco/core/file.hpp"
#include "acco/core/stats.hpp"
#include "acco/core/units.hpp"
#include "acco/device/host_backend.hpp"
#include "acco/sched/workload_run.hpp"
#include "acco/sim/simulate.hpp"
#include "acco/sim/taskbench.hpp"

namespace {

using acco::Result;

struct Options {
  std::vector<std::string> workloads = {"cholesky", "stencil"};
  int tiles = 12;
  int width = 8;
  int steps = 32;
  double task_ms = 2;
  std::vector<std::string> kinds = {"cpu", "gpu", "gpu", "gpu"};
  std::string link = "pcie3x16";
  std::string data_bytes = "4KiB";
  int calibrate = 1;
  int reps = 3;
  std::vector<std::string> policies = {"dmda", "heft", "ws", "eager"};
  double tolerance = 0.10;
  bool check = false;
  bool overhead = true;  // the simulator charges each task the runtime's measured overhead
  std::string json;
};

struct Row {
  std::string workload;
  std::string policy;
  std::vector<double> measured;  // seconds, one per measured run
  double fastest = 0;
  double median = 0;
  double simulated = 0;
  double overhead = 0;  // the runtime's per-task cost it learnt, the median over its devices
  std::size_t failed = 0;
  [[nodiscard]] double ratio() const { return fastest > 0 ? simulated / fastest : 0; }
};

// The workload, with a time for every device (Task Bench's tasks take the same everywhere).
Result<acco::sched::Workload> make(const std::string& name, const Options& o, std::size_t bytes) {
  if (name == "cholesky") {
    acco::sched::WorkloadSpec spec;
    spec.kind = acco::sched::WorkloadKind::kCholesky;
    spec.tiles = o.tiles;
    spec.kernels = "sirocco";
    spec.tile_bytes = bytes;
    std::vector<acco::sched::DeviceModel> models;
    for (const std::string& kind : o.kinds) {
      models.push_back({kind, 1});
    }
    return acco::sched::make_workload(spec, models);
  }
  if (name == "stencil") {
    acco::sim::TaskBenchSpec spec;
    spec.pattern = acco::sim::Pattern::kStencil1d;
    spec.width = o.width;
    spec.steps = o.steps;
    spec.seconds = o.task_ms * 1e-3;
    spec.output_bytes = bytes;
    ACCO_ASSIGN_OR_RETURN(auto w, acco::sim::task_bench(spec));
    for (auto& t : w.tasks) {
      t.seconds.assign(o.kinds.size(), t.seconds.at(0));
    }
    return w;
  }
  return acco::fail(acco::Errc::kInvalidArgument,
                    fmt::format("--workloads: '{}' is not cholesky or stencil", name));
}

// The host backend's devices as a node: a link each to host memory, peers over both.
acco::sim::Platform platform(const Options& o, const acco::device::EmulatedLink& link) {
  acco::sim::Platform p;
  const int n = static_cast<int>(o.kinds.size());
  const double latency = std::chrono::duration<double>(link.latency).count();
  for (int i = 0; i < n; ++i) {
    p.node.devices.push_back(
        fmt::format("GPU{} emulated {}", i, o.kinds[static_cast<std::size_t>(i)]));
    p.node.links.push_back({fmt::format("pcie {}", i), "pcie", link.bytes_per_second, latency});
    p.node.to_host.push_back({i});
  }
  p.node.peer.assign(static_cast<std::size_t>(n),
                     std::vector<std::vector<int>>(static_cast<std::size_t>(n)));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i != j) {
        p.node.peer[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = {i, j};
      }
    }
  }
  p.node.origin = "the host backend's emulated devices";
  return p;
}

Result<Row> measure(const std::string& name, acco::sched::PolicyKind policy,
                    const acco::sched::Workload& workload, const Options& o,
                    const acco::device::EmulatedLink& link) {
  Row row;
  row.workload = name;
  row.policy = std::string(acco::sched::to_string(policy));
  for (int rep = 0; rep < o.reps; ++rep) {
    acco::device::HostBackendOptions host;
    host.devices = static_cast<int>(o.kinds.size());
    host.link = link;
    ACCO_ASSIGN_OR_RETURN(auto backend, acco::device::make_host_backend(host));
    std::vector<acco::sched::DeviceSpec> specs;
    for (acco::device::Device* d : backend->devices()) {
      acco::sched::DeviceSpec spec;
      spec.device = d;
      spec.kind = o.kinds[specs.size()];
      specs.push_back(spec);
    }
    acco::sched::RuntimeOptions options;
    options.policy = policy;
    acco::sched::WorkloadRunOptions run;
    run.calibration_runs = o.calibrate;
    ACCO_ASSIGN_OR_RETURN(const auto out,
                          acco::sched::run_workload(workload, std::move(specs), options, run));
    row.measured.push_back(out.makespan_seconds);
    row.failed += out.failed;
    std::vector<double> overheads;
    for (const auto& d : out.record.devices) {
      overheads.push_back(std::chrono::duration<double>(d.overhead).count());
    }
    if (auto s = acco::core::stats::summarize(overheads)) {
      row.overhead = s->median;
    }
  }
  if (auto summary = acco::core::stats::summarize(row.measured)) {
    row.median = summary->median;
    row.fastest = summary->min;
  }
  acco::sim::SimOptions sim;
  sim.policy = policy;
  sim.task_overhead_seconds = o.overhead ? row.overhead : 0;
  ACCO_ASSIGN_OR_RETURN(const auto simulated,
                        acco::sim::simulate(platform(o, link), workload, sim));
  row.simulated = simulated.makespan;
  return row;
}

int usage(const std::string& message) {
  fmt::print(stderr, "acco-sim-validation-bench: {}\n", message);
  return 64;
}

double versus_eager(const std::vector<Row>& rows, const Row& r, bool simulated) {
  const auto eager = std::find_if(rows.begin(), rows.end(), [&](const Row& e) {
    return e.workload == r.workload && e.policy == "eager";
  });
  if (eager == rows.end()) {
    return 0;
  }
  const double mine = simulated ? r.simulated : r.fastest;
  const double theirs = simulated ? eager->simulated : eager->fastest;
  return mine > 0 ? theirs / mine : 0;
}

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{
      "acco-sim-validation-bench: simulated makespans against the real runtime's on emulated "
      "devices"};
  Options o;
  app.add_option("--workloads", o.workloads, "cholesky, stencil (default both)")->delimiter(',');
  app.add_option("--tiles", o.tiles, "cholesky: t x t tiles (default 12)")
      ->check(CLI::Range(1, 32));
  app.add_option("--width", o.width, "stencil: points per step (default 8)")
      ->check(CLI::Range(1, 64));
  app.add_option("--steps", o.steps, "stencil: steps (default 32)")->check(CLI::Range(1, 1000));
  app.add_option("--task-ms", o.task_ms, "stencil: a task's time (default 2)")
      ->check(CLI::Range(0.1, 100.0));
  app.add_option("--kinds", o.kinds, "device kinds (default cpu,gpu,gpu,gpu)")->delimiter(',');
  app.add_option("--link", o.link, "emulated link of every device (default pcie3x16)");
  app.add_option("--data-bytes", o.data_bytes, "a tile's or a task output's bytes (default 4KiB)");
  app.add_option("--calibrate", o.calibrate, "unmeasured runs first (default 1)")
      ->check(CLI::Range(0, 100));
  app.add_option("--reps", o.reps, "measured runs per policy (default 3)")
      ->check(CLI::Range(1, 100));
  app.add_option("--policies", o.policies, "policies (default dmda,heft,ws,eager)")->delimiter(',');
  app.add_option("--tolerance", o.tolerance, "the target's share (default 0.10)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_flag("!--free-dispatch", o.overhead,
               "simulate without the runtime's per-task overhead (the default charges each task "
               "the overhead the runtime measured)");
  app.add_flag("--check", o.check, "exit 1 when a simulated makespan misses the target");
  app.add_option("--json", o.json, "write results to FILE");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    fmt::print("{}", app.help());
    return 0;
  } catch (const CLI::ParseError& e) {
    return usage(e.what());
  }
  auto link = acco::device::parse_link(o.link);
  if (!link) {
    return usage(link.error().message);
  }
  auto bytes = acco::units::parse_bytes(o.data_bytes);
  if (!bytes) {
    return usage("--data-bytes: " + bytes.error().message);
  }
  std::vector<acco::sched::PolicyKind> policies;
  for (const std::string& name : o.policies) {
    auto kind = acco::sched::policy_from_string(name);
    if (!kind) {
      return usage("--policies: " + kind.error().message);
    }
    policies.push_back(*kind);
  }
  fmt::print("devices {} on emulated {} links, data of {}, {} calibration and {} measured runs\n",
             fmt::join(o.kinds, ","), o.link, acco::units::format_bytes(*bytes), o.calibrate,
             o.reps);
  std::vector<Row> rows;
  for (const std::string& name : o.workloads) {
    auto workload = make(name, o, static_cast<std::size_t>(*bytes));
    if (!workload) {
      return usage(workload.error().message);
    }
    for (const auto policy : policies) {
      fmt::print(stderr, "{}, {}...\n", name, acco::sched::to_string(policy));
      auto row = measure(name, policy, *workload, o, *link);
      if (!row) {
        fmt::print(stderr, "acco-sim-validation-bench: {}, {}: {}\n", name,
                   acco::sched::to_string(policy), row.error().message);
        return 70;
      }
      rows.push_back(std::move(*row));
    }
  }
  fmt::print("\n{:<9} {:<7} {:>12} {:>10} {:>12} {:>13} {:>9} {:>14} {:>14}\n", "workload",
             "policy", "fastest ms", "median ms", "overhead us", "simulated ms", "sim/real",
             "vs eager real", "vs eager sim");
  bool met = true;
  for (const Row& r : rows) {
    const bool within = r.failed == 0 && std::abs(r.ratio() - 1) <= o.tolerance;
    met = met && within;
    fmt::print(
        "{:<9} {:<7} {:>12.1f} {:>10.1f} {:>12.1f} {:>13.1f} {:>9.3f} {:>13.2f}x {:>13.2f}x{}\n",
        r.workload, r.policy, r.fastest * 1e3, r.median * 1e3, r.overhead * 1e6, r.simulated * 1e3,
        r.ratio(), versus_eager(rows, r, false), versus_eager(rows, r, true),
        r.failed > 0 ? "  (failed tasks)"
        : within     ? ""
                     : "  outside");
  }
  fmt::print("\ntarget: every simulated makespan within {:.0f} % of the fastest measured: {}\n",
             o.tolerance * 100, met ? "MET" : "NOT MET");
  if (!o.json.empty()) {
    nlohmann::json results = nlohmann::json::array();
    for (const Row& r : rows) {
      results.push_back({{"workload", r.workload},
                         {"policy", r.policy},
                         {"measured_fastest_seconds", r.fastest},
                         {"measured_median_seconds", r.median},
                         {"measured_runs_seconds", r.measured},
                         {"simulated_seconds", r.simulated},
                         {"task_overhead_seconds", o.overhead ? r.overhead : 0.0},
                         {"ratio", r.ratio()},
                         {"measured_speedup_over_eager", versus_eager(rows, r, false)},
                         {"simulated_speedup_over_eager", versus_eager(rows, r, true)},
                         {"failed_tasks", r.failed}});
    }
    const nlohmann::json out = {{"schema", "acco.sim-validation/1"},
                                {"devices", o.kinds},
                                {"link", o.link},
                                {"data_bytes", *bytes},
                                {"tolerance", o.tolerance},
                                {"results", results},
                                {"target_met", met}};
    if (auto written = acco::core::write_file_atomic(o.json, out.dump(2) + "\n"); !written) {
      fmt::print(stderr, "acco-sim-validation-bench: {}\n", written.error().message);
      return 73;
    }
  }
  return o.check && !met ? 1 : 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "acco-sim-validation-bench: {}\n", e.what());
    return 70;
  }
}
