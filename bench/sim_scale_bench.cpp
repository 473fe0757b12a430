// Simulator scale benchmark: `acco sim`'s engine on growing platforms (8 to 10,000 devices, nodes
// of eight GPUs on one switch) and growing workloads (Task Bench's stencil_1d, one point per
// device, or independent tasks), dmda (a decision looks at every device) beside eager (a shared
// queue, no look) in one run. Per configuration: the wall time of sim::simulate (the engine
// process, its request and its answer), simulated tasks per second, time per task, events (task
// executions and copies) per second, and the engine's CPU time. Configurations whose predicted time
// (the previous size's time per task, scaled) passes --budget are skipped and said so. Prints a
// table with the runs' spread and writes JSON ("acco.sim-scale/1"). Not a test: nothing asserts.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "acco/core/file.hpp"
#include "acco/core/stats.hpp"
#include "acco/sched/policy.hpp"
#include "acco/sched/workload.hpp"
#include "acco/sim/platform.hpp"
#include "acco/sim/simulate.hpp"
#include "acco/sim/taskbench.hpp"

namespace {

using acco::Result;

struct Options {
  std::vector<int> devices = {8, 64, 1000, 10000};
  std::vector<int> tasks = {1000, 10000, 100000};
  std::string workload = "stencil";
  std::vector<std::string> policies = {"eager", "dmda"};
  int reps = 3;
  double budget = 120;  // seconds a configuration may be predicted to take
  std::string json;
};

// Eight GPUs with a PCIe Gen5 x16 link each to host memory, NVLink among them, one 400 GB/s NIC.
acco::sim::Platform platform(int devices) {
  acco::sim::Platform p;
  const int per_node = std::min(devices, 8);
  for (int i = 0; i < per_node; ++i) {
    p.node.devices.push_back(fmt::format("GPU{}", i));
    p.node.links.push_back({fmt::format("pcie {}", i), "pcie", 63e9, 1e-6});
    p.node.to_host.push_back({i});
  }
  for (int i = 0; i < per_node; ++i) {
    p.node.links.push_back({fmt::format("nvlink GPU{}", i), "nvlink", 450e9, 1e-6});
  }
  p.node.peer.assign(static_cast<std::size_t>(per_node),
                     std::vector<std::vector<int>>(static_cast<std::size_t>(per_node)));
  for (int i = 0; i < per_node; ++i) {
    for (int j = 0; j < per_node; ++j) {
      if (i != j) {
        p.node.peer[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = {per_node + i,
                                                                                 per_node + j};
      }
    }
  }
  p.node.links.push_back({"nic", "nic", 400e9, 2e-6});
  p.node.nic = static_cast<int>(p.node.links.size()) - 1;
  p.nodes = (devices + per_node - 1) / per_node;
  return p;
}

Result<acco::sched::Workload> workload(const Options& o, int devices, int tasks) {
  if (o.workload == "independent") {
    acco::sched::WorkloadSpec spec;
    spec.kind = acco::sched::WorkloadKind::kIndependent;
    spec.tasks = tasks;
    return acco::sched::make_workload(spec, {acco::sched::DeviceModel{"gpu", 1}});
  }
  acco::sim::TaskBenchSpec spec;
  spec.pattern = acco::sim::Pattern::kStencil1d;
  spec.width = std::min(devices, tasks);
  spec.steps = std::max(1, tasks / spec.width);
  return acco::sim::task_bench(spec);
}

double children_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

long children_max_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return u.ru_maxrss;  // NOLINT(cppcoreguidelines-pro-type-union-access): glibc's own layout
}

struct Row {
  std::string policy;
  int devices = 0;
  std::size_t tasks = 0;
  std::size_t copies = 0;
  std::vector<double> wall;  // seconds per run
  double median = 0;
  double spread = 0;      // (max - min) / median
  double engine_cpu = 0;  // seconds a run: the engine processes' CPU time over the runs
  long max_rss_kib = 0;   // the largest engine process so far
  double makespan = 0;
  std::string skipped;
};

// What each configuration is predicted to take: from the same platform with fewer tasks, else
// from the smaller platform with as many tasks, each scaled linearly; once a size is skipped on a
// platform, the larger ones are too.
class Budget {
 public:
  explicit Budget(double seconds) : seconds_(seconds) {}
  void next_platform(int devices) {
    last_devices_ = devices_;
    devices_ = devices;
    last_tasks_ = 0;
  }
  // Empty when the configuration may run, else why not.
  std::string check(std::size_t tasks, int reps) {
    const std::size_t previous = last_tasks_;
    last_tasks_ = tasks;
    if (previous != 0 && !measured_.contains({devices_, previous})) {
      return "a smaller workload on this platform was skipped";
    }
    double predicted = 0;
    if (const auto it = measured_.find({devices_, previous}); it != measured_.end()) {
      predicted = it->second * static_cast<double>(tasks) / static_cast<double>(previous);
    } else if (const auto at = measured_.find({last_devices_, tasks}); at != measured_.end()) {
      predicted = at->second * devices_ / last_devices_;
    }
    return predicted * reps > seconds_ ? fmt::format("predicted {:.0f} s a run", predicted) : "";
  }
  void took(std::size_t tasks, double seconds) { measured_[{devices_, tasks}] = seconds; }

 private:
  double seconds_;
  int devices_ = 0;
  int last_devices_ = 0;
  std::size_t last_tasks_ = 0;
  std::map<std::pair<int, std::size_t>, double> measured_;  // (devices, tasks) -> median
};

// A policy of the comparison: "dmda-full" is dmda asked about every device however many there
// are (SimOptions::full_scan_devices), the engine's decision before it narrowed large platforms;
// "dmda-comms" and "dmda-boxes" copy through SimGrid's host-to-host comms or through mailboxes
// on any platform (SimOptions::mailbox_copies_devices).
struct Contender {
  std::string name;
  acco::sched::PolicyKind kind = acco::sched::PolicyKind::kDmda;
  bool full_scan = false;
  std::optional<int> mailbox_copies_devices;  // the engine's choice when unset
};

Result<Row> measure(const Contender& c, int devices, const acco::sched::Workload& w, int reps) {
  Row row;
  row.policy = c.name;
  row.devices = devices;
  row.tasks = w.tasks.size();
  const auto p = platform(devices);
  const double cpu_before = children_cpu_seconds();
  for (int rep = 0; rep < reps; ++rep) {
    acco::sim::SimOptions options;
    options.policy = c.kind;
    if (c.full_scan) {
      options.full_scan_devices = std::numeric_limits<int>::max();
    }
    options.mailbox_copies_devices =
        c.mailbox_copies_devices.value_or(options.mailbox_copies_devices);
    const auto start = std::chrono::steady_clock::now();
    ACCO_ASSIGN_OR_RETURN(const auto r, acco::sim::simulate(p, w, options),
                          fmt::format("{} on {} devices", row.policy, devices));
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    row.wall.push_back(took.count());
    row.copies = r.copies;
    row.makespan = r.makespan;
  }
  row.engine_cpu = (children_cpu_seconds() - cpu_before) / reps;
  row.max_rss_kib = children_max_rss_kib();
  ACCO_ASSIGN_OR_RETURN(const auto s, acco::core::stats::summarize(row.wall));
  row.median = s.median;
  row.spread = s.median > 0 ? (s.max - s.min) / s.median : 0;
  return row;
}

void print(const Row& r) {
  if (!r.skipped.empty()) {
    fmt::print("{:<10} {:>7} {:>8}  skipped: {}\n", r.policy, r.devices, r.tasks, r.skipped);
    return;
  }
  const auto tasks = static_cast<double>(r.tasks);
  fmt::print(
      "{:<10} {:>7} {:>8} {:>9} {:>9.3f}s {:>6.0f}% {:>12.0f} {:>10.2f} {:>12.0f} {:>8.2f}s "
      "{:>6}MiB {:>11.3f}s\n",
      r.policy, r.devices, r.tasks, r.copies, r.median, 100 * r.spread, tasks / r.median,
      1e6 * r.median / tasks, (tasks + static_cast<double>(r.copies)) / r.median, r.engine_cpu,
      r.max_rss_kib / 1024, r.makespan);
  std::fflush(stdout);
}

nlohmann::json to_json(const Options& o, const std::vector<Row>& rows) {
  nlohmann::json out = {{"schema", "acco.sim-scale/1"},
                        {"workload", o.workload},
                        {"reps", o.reps},
                        {"runs", nlohmann::json::array()}};
  for (const auto& r : rows) {
    nlohmann::json j = {{"policy", r.policy}, {"devices", r.devices}, {"tasks", r.tasks}};
    if (!r.skipped.empty()) {
      j["skipped"] = r.skipped;
    } else {
      const auto tasks = static_cast<double>(r.tasks);
      j.update({{"copies", r.copies},
                {"wall_seconds", r.wall},
                {"median_seconds", r.median},
                {"spread", r.spread},
                {"seconds_per_task", r.median / tasks},
                {"events_per_second", (tasks + static_cast<double>(r.copies)) / r.median},
                {"engine_cpu_seconds", r.engine_cpu},
                {"max_rss_kib_so_far", r.max_rss_kib},
                {"makespan_seconds", r.makespan}});
    }
    out["runs"].push_back(std::move(j));
  }
  return out;
}

Result<std::vector<Row>> run_all(const Options& o) {
  std::vector<Contender> kinds;
  for (const auto& name : o.policies) {
    if (name == "dmda-full") {
      kinds.push_back({name, acco::sched::PolicyKind::kDmda, true, {}});
      continue;
    }
    if (name == "dmda-comms" || name == "dmda-boxes") {
      kinds.push_back({name, acco::sched::PolicyKind::kDmda, false,
                       name == "dmda-comms" ? std::numeric_limits<int>::max() : 0});
      continue;
    }
    ACCO_ASSIGN_OR_RETURN(const auto kind, acco::sched::policy_from_string(name), "--policies");
    kinds.push_back({name, kind, false, {}});
  }
  fmt::print("{} workload, nodes of 8 GPUs on one switch, {} runs each, budget {:.0f} s\n\n",
             o.workload, o.reps, o.budget);
  fmt::print("{:<10} {:>7} {:>8} {:>9} {:>10} {:>7} {:>12} {:>10} {:>12} {:>9} {:>9} {:>12}\n",
             "policy", "devices", "tasks", "copies", "wall", "spread", "tasks/s", "us/task",
             "events/s", "cpu", "rss", "makespan");
  std::vector<Row> rows;
  for (const auto& kind : kinds) {
    Budget budget(o.budget);
    for (const int devices : o.devices) {
      budget.next_platform(devices);
      for (const int tasks : o.tasks) {
        ACCO_ASSIGN_OR_RETURN(const auto w, workload(o, devices, tasks));
        Row row;
        row.skipped = budget.check(w.tasks.size(), o.reps);
        if (row.skipped.empty()) {
          ACCO_ASSIGN_OR_RETURN(row, measure(kind, devices, w, o.reps));
          budget.took(row.tasks, row.median);
        } else {
          row.policy = kind.name;
          row.devices = devices;
          row.tasks = w.tasks.size();
        }
        print(row);
        rows.push_back(std::move(row));
      }
    }
  }
  return rows;
}

int run(int argc, char** argv) {
  CLI::App app{"acco-sim-scale-bench: the simulator's cost as the platform and the workload grow"};
  Options o;
  app.add_option("--devices", o.devices, "platform sizes (default 8,64,1000,10000)")
      ->delimiter(',');
  app.add_option("--tasks", o.tasks, "workload sizes (default 1000,10000,100000)")->delimiter(',');
  app.add_option("--workload", o.workload, "stencil (default) or independent")
      ->check(CLI::IsMember({"stencil", "independent"}));
  app.add_option("--policies", o.policies,
                 "policies side by side (default eager,dmda); dmda-full: dmda asked about every "
                 "device on any platform; dmda-comms, dmda-boxes: dmda copying through SimGrid's "
                 "host-to-host comms or through mailboxes on any platform")
      ->delimiter(',');
  app.add_option("--reps", o.reps, "runs per configuration (default 3)")->check(CLI::Range(1, 50));
  app.add_option("--budget", o.budget,
                 "skip a configuration predicted to take more seconds than this (default 120)");
  app.add_option("--json", o.json, "write results to FILE");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    fmt::print("{}", app.help());
    return 0;
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "acco-sim-scale-bench: {}\n", e.what());
    return 64;
  }
  if (!o.json.empty()) {
    if (auto ok = acco::core::check_output_file(o.json); !ok) {
      fmt::print(stderr, "acco-sim-scale-bench: --json: {}\n", ok.error().message);
      return 73;
    }
  }
  auto rows = run_all(o);
  if (!rows) {
    fmt::print(stderr, "acco-sim-scale-bench: {}\n", rows.error().message);
    return 70;
  }
  if (!o.json.empty()) {
    if (auto written = acco::core::write_file_atomic(o.json, to_json(o, *rows).dump(2) + "\n");
        !written) {
      fmt::print(stderr, "acco-sim-scale-bench: --json: {}\n", written.error().message);
      return 73;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "acco-sim-scale-bench: {}\n", e.what());
    return 70;
  }
}
