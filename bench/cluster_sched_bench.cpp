// The distributed runtime against one node and against eager round-robin dispatch, side by side
// in one MPI job: a tiled Cholesky with emulated kernels (sched::EmulatedTasks) on `--devices`
// host devices per rank, run by
//   one node:     rank 0 alone on ranks x devices host devices (sched::run_workload), the
//                 others waiting;
//   locality:     cluster::run_distributed, the coordinator's own policy;
//   round-robin:  cluster::run_distributed, ready tasks in order to the ranks in turn;
// alternating, --rounds times each, the median efficiency (bound / makespan) kept. Issue 18's
// targets: locality at least 80 % of the one-node efficiency with the same total devices, and at
// least 1.3x round-robin's speed. A second case makes the last rank's kernels --slow times their
// cost (a straggler the model does not know of). Run under mpirun:
//   mpirun -np 2 build/default/bench/acco_cluster_sched_bench --json dist-sched.json
// Rank 0 prints the table and writes JSON ("acco.dist-sched-bench/1"). Not a test.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "acco/cluster/communicator.hpp"
#include "acco/cluster/distributed.hpp"
#include "acco/cluster/launcher.hpp"
#include "acco/core/stats.hpp"
#include "acco/core/units.hpp"
#include "acco/device/host_backend.hpp"
#include "acco/sched/workload.hpp"
#include "acco/sched/workload_run.hpp"

namespace {

namespace cluster = acco::cluster;
namespace sched = acco::sched;

struct Options {
  int tiles = 12;
  std::string tile_bytes = "256KiB";
  int devices = 2;  // per rank
  std::string link = "pcie3x16";
  double time_scale = 1;
  int rounds = 3;
  double slow = 2;
  std::string json;
};

// The median of the rounds (core::stats), 0 for none.
double median(const std::vector<double>& v) {
  return v.empty() ? 0 : acco::core::stats::median(v);
}

struct Devices {
  std::unique_ptr<acco::device::Backend> backend;
  std::vector<sched::DeviceSpec> specs;
};

acco::Result<Devices> host_devices(int n, const acco::device::EmulatedLink& link) {
  acco::device::HostBackendOptions host;
  host.devices = n;
  host.link = link;
  ACCO_ASSIGN_OR_RETURN(auto backend, acco::device::make_host_backend(host));
  Devices d;
  for (acco::device::Device* device : backend->devices()) {
    sched::DeviceSpec s;
    s.device = device;
    s.kind = "gpu";
    d.specs.push_back(std::move(s));
  }
  d.backend = std::move(backend);
  return d;
}

struct Case {
  std::string name;
  double slow = 1;  // the last rank's kernels
  std::vector<double> one_node, locality, round_robin;
  std::vector<double> locality_makespan, round_robin_makespan;
};

// One round of the three runs; efficiencies on rank 0 (0 elsewhere). Errors end the job.
acco::Status round(cluster::Communicator& c, const Options& o, const sched::Workload& w,
                   const acco::device::EmulatedLink& link, Case& out) {
  const int ranks = c.size();
  if (c.rank() == 0 && out.slow == 1) {
    ACCO_ASSIGN_OR_RETURN(Devices all, host_devices(ranks * o.devices, link));
    ACCO_ASSIGN_OR_RETURN(auto one, sched::run_workload(w, std::move(all.specs), {}, {}));
    out.one_node.push_back(one.efficiency);
  }
  ACCO_RETURN_IF_ERROR(c.barrier());
  for (cluster::DispatchPolicy policy :
       {cluster::DispatchPolicy::kLocality, cluster::DispatchPolicy::kRoundRobin}) {
    ACCO_ASSIGN_OR_RETURN(Devices mine, host_devices(o.devices, link));
    cluster::DistributedOptions run;
    run.dispatch.policy = policy;
    if (c.rank() == ranks - 1) {
      run.slowdown = out.slow;
    }
    ACCO_ASSIGN_OR_RETURN(auto r, cluster::run_distributed(
                                      c, w,
                                      std::vector<std::size_t>(static_cast<std::size_t>(ranks),
                                                               static_cast<std::size_t>(o.devices)),
                                      std::move(mine.specs), {}, run));
    if (c.rank() == 0) {
      const bool local = policy == cluster::DispatchPolicy::kLocality;
      (local ? out.locality : out.round_robin).push_back(r.efficiency);
      (local ? out.locality_makespan : out.round_robin_makespan).push_back(r.makespan_seconds);
    }
  }
  return {};
}

int run(int argc, char** argv) {
  CLI::App app{"the distributed runtime against one node and round-robin (run under mpirun)"};
  Options o;
  app.add_option("--tiles", o.tiles, "cholesky: t x t tiles (12)");
  app.add_option("--tile-bytes", o.tile_bytes, "bytes of one tile (256KiB)");
  app.add_option("--devices", o.devices, "host devices per rank (2)");
  app.add_option("--link", o.link, "emulated host <-> device link (pcie3x16)");
  app.add_option("--time-scale", o.time_scale, "kernel times multiplied by this (1)");
  app.add_option("--rounds", o.rounds, "rounds of the three runs (3)");
  app.add_option("--slow", o.slow, "the straggler case: the last rank's kernel factor (2)");
  app.add_option("--json", o.json, "write results here (rank 0)");
  CLI11_PARSE(app, argc, argv);
  const auto tile_bytes = acco::units::parse_bytes(o.tile_bytes);
  auto link = acco::device::parse_link(o.link);
  if (!tile_bytes || !link || o.tiles < 2 || o.tiles > 40 || o.devices < 1 || o.devices > 16 ||
      o.rounds < 1 || !(o.time_scale > 0) || !(o.slow >= 1)) {
    fmt::print(stderr,
               "cluster sched bench: expected --tiles 2..40, --devices 1..16, --rounds >= 1, "
               "--time-scale > 0, --slow >= 1, a --tile-bytes size and a --link\n");
    return 64;
  }
  auto launch = cluster::detect_launcher(cluster::process_environment());
  if (!launch || launch->launcher == cluster::Launcher::kNone) {
    fmt::print(stderr, "cluster sched bench: run it under mpirun (no launcher found)\n");
    return 64;
  }
  auto comm = cluster::open_communicator(*launch);
  if (!comm) {
    fmt::print(stderr, "cluster sched bench: {}\n", comm.error().message);
    return 69;
  }
  cluster::Communicator& c = **comm;
  sched::WorkloadSpec spec;
  spec.tiles = o.tiles;
  spec.tile_bytes = *tile_bytes;
  spec.time_scale = o.time_scale;
  const auto total = static_cast<std::size_t>(c.size()) * static_cast<std::size_t>(o.devices);
  auto w = sched::make_workload(spec, std::vector<sched::DeviceModel>(total, {"gpu", 1}));
  if (!w) {
    fmt::print(stderr, "cluster sched bench: {}\n", w.error().message);
    return 64;
  }
  std::vector<Case> cases = {
      {"homogeneous", 1, {}, {}, {}, {}, {}},
      {fmt::format("rank {} at 1/{:g} speed", c.size() - 1, o.slow), o.slow, {}, {}, {}, {}, {}}};
  for (Case& k : cases) {
    for (int r = 0; r < o.rounds; ++r) {
      if (auto done = round(c, o, *w, *link, k); !done) {
        fmt::print(stderr, "cluster sched bench: rank {}: {}\n", c.rank(), done.error().message);
        return 70;
      }
    }
  }
  if (c.rank() != 0) {
    return 0;
  }
  fmt::print(
      "distributed cholesky {}x{} ({} tasks, {} tiles), {} rank(s) x {} host device(s), "
      "link {}; median of {} rounds\n\n",
      o.tiles, o.tiles, w->tasks.size(), acco::units::format_bytes(*tile_bytes), c.size(),
      o.devices, link->name, o.rounds);
  fmt::print("{:<22} {:>9} {:>9} {:>12} {:>14} {:>15}  {}\n", "case", "one node", "locality",
             "round-robin", "vs one node", "vs round-robin", "verdict");
  nlohmann::json j = {{"schema", "acco.dist-sched-bench/1"},
                      {"ranks", c.size()},
                      {"devices_per_rank", o.devices},
                      {"tiles", o.tiles},
                      {"tasks", w->tasks.size()},
                      {"tile_bytes", *tile_bytes},
                      {"link", link->name},
                      {"rounds", o.rounds},
                      {"cases", nlohmann::json::array()}};
  for (const Case& k : cases) {
    const double one = median(k.one_node);
    const double local = median(k.locality);
    const double rr = median(k.round_robin);
    const double speedup = median(k.round_robin_makespan) / median(k.locality_makespan);
    const bool has_one = !k.one_node.empty();
    const double ratio = has_one && one > 0 ? local / one : 0;
    const bool met = (!has_one || ratio >= 0.8) && speedup >= 1.3;
    fmt::print("{:<22} {:>9} {:>8.1f}% {:>11.1f}% {:>14} {:>14.2f}x  {}\n", k.name,
               has_one ? fmt::format("{:.1f}%", 100 * one) : "-", 100 * local, 100 * rr,
               has_one ? fmt::format("{:.0f}%", 100 * ratio) : "-", speedup,
               met ? "met" : "NOT met");
    nlohmann::json row = {{"case", k.name},
                          {"slow_factor", k.slow},
                          {"locality_efficiency", local},
                          {"round_robin_efficiency", rr},
                          {"speedup_over_round_robin", speedup},
                          {"target_met", met}};
    if (has_one) {
      row["one_node_efficiency"] = one;
      row["locality_over_one_node"] = ratio;
    }
    j["cases"].push_back(std::move(row));
  }
  fmt::print("\ntargets: locality >= 80% of one node (homogeneous), >= 1.3x round-robin\n");
  if (!o.json.empty()) {
    std::ofstream(o.json) << j.dump(2) << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (...) {
    std::fputs("cluster sched bench: unexpected failure\n", stderr);
    return 70;
  }
}
