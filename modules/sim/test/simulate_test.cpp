// Simulated runs on SimGrid: exact virtual times on hand-made platforms, the bounds' closed
// forms, every policy on a generated cluster, and the same answer twice.
#include "acco/sim/simulate.hpp"

#include <chrono>
#include <cmath>
#include <tuple>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/sim/dag_file.hpp"
#include "acco/sim/report.hpp"
#include "acco/testing/json_schema.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::sim {
namespace {

using ::acco::testing::IsOk;
using ::testing::HasSubstr;

// GPUs with one 1 GB/s link each to host memory (no latency), peers through both links.
Platform small(int gpus, int nodes = 1) {
  Platform p;
  for (int i = 0; i < gpus; ++i) {
    p.node.devices.push_back("GPU" + std::to_string(i));
    p.node.links.push_back({"pcie " + std::to_string(i), "pcie", 1e9, 0});
    p.node.to_host.push_back({i});
  }
  p.node.peer.assign(static_cast<std::size_t>(gpus),
                     std::vector<std::vector<int>>(static_cast<std::size_t>(gpus)));
  for (int i = 0; i < gpus; ++i) {
    for (int j = 0; j < gpus; ++j) {
      if (i != j) {
        p.node.peer[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = {i, j};
      }
    }
  }
  p.node.links.push_back({"nic", "nic", 1e9, 0});
  p.node.nic = gpus;
  p.nodes = nodes;
  p.fabric.latency = 0;
  p.fabric.bytes_per_second = 1e9;
  return p;
}

SimOptions with(sched::PolicyKind kind) {
  SimOptions o;
  o.policy = kind;
  return o;
}

sched::Workload independent(int tasks, double seconds, std::size_t bytes) {
  sched::Workload w;
  w.name = "independent";
  for (int i = 0; i < tasks; ++i) {
    w.data_bytes.push_back(bytes);
    w.tasks.push_back({"task",
                       "t" + std::to_string(i),
                       {{static_cast<std::size_t>(i), sched::Access::kReadWrite}},
                       0,
                       {seconds}});
  }
  return w;
}

TEST(SimulateTest, EachTaskWaitsForItsInputOverItsLinkThenRuns) {
  // Four 1 s tasks, each reading 1 GB from host memory over a 1 GB/s link: two per GPU, each
  // a 1 s copy then 1 s of work.
  const auto r = simulate(small(2), independent(4, 1.0, 1'000'000'000), {});
  ASSERT_THAT(r, IsOk());
  EXPECT_DOUBLE_EQ(r->makespan, 4.0);
  EXPECT_EQ(r->policy, "dmda");
  EXPECT_EQ(r->tasks, 4U);
  EXPECT_EQ(r->copies, 4U);
  EXPECT_DOUBLE_EQ(r->bytes_moved, 4e9);
  EXPECT_DOUBLE_EQ(r->area, 2.0);
  EXPECT_DOUBLE_EQ(r->critical_path, 1.0);
  EXPECT_DOUBLE_EQ(r->efficiency(), 0.5);
  ASSERT_EQ(r->devices.size(), 2U);
  EXPECT_EQ(r->devices[0].tasks + r->devices[1].tasks, 4U);
  EXPECT_DOUBLE_EQ(r->devices[0].busy_seconds + r->devices[1].busy_seconds, 4.0);
  ASSERT_EQ(r->links.size(), 1U);
  EXPECT_EQ(r->links[0].kind, "pcie");
  EXPECT_DOUBLE_EQ(r->links[0].busiest_share, 0.5);
}

// One task of 0.5 s reading two 1 GB inputs at once.
sched::Workload two_inputs() {
  sched::Workload w;
  w.data_bytes = {1'000'000'000, 1'000'000'000};
  w.tasks.push_back(
      {"potrf", "t", {{0, sched::Access::kRead}, {1, sched::Access::kRead}}, 0, {0.5}});
  return w;
}

TEST(SimulateTest, TwoCopiesOnOneLinkShareItsBandwidth) {
  const auto r = simulate(small(1), two_inputs(), {});
  ASSERT_THAT(r, IsOk());
  EXPECT_DOUBLE_EQ(r->makespan, 2.5);  // 2 GB through 1 GB/s together, then 0.5 s
}

TEST(SimulateTest, ARecordedRunKeepsEachTaskAndCopyWithTheirVirtualTimes) {
  // The same run as above, recorded: both copies start when the task is released (a prefetch)
  // and end together at 2 s; the task waits for them from 0 to 2 s, then runs 0.5 s.
  const Platform p = small(1);
  const auto w = two_inputs();
  SimOptions o;
  o.record = true;
  const auto r = simulate(p, w, o);
  ASSERT_THAT(r, IsOk());
  using std::chrono::milliseconds;
  ASSERT_EQ(r->task_records.size(), 1U);
  const auto& task = r->task_records[0];
  EXPECT_EQ(task.name, "t");
  EXPECT_EQ(task.type, "potrf");
  EXPECT_EQ(task.device, 0);
  EXPECT_EQ(task.status, sched::TaskStatus::kDone);
  EXPECT_EQ(task.ready, milliseconds(0));
  EXPECT_EQ(task.started, milliseconds(2000));
  EXPECT_EQ(task.finished, milliseconds(2500));
  EXPECT_EQ(task.predicted, milliseconds(500));
  EXPECT_EQ(task.transfer_bytes, 2'000'000'000U);
  EXPECT_EQ(task.transfer_time, milliseconds(2000));
  ASSERT_EQ(r->transfer_records.size(), 2U);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& copy = r->transfer_records[i];
    EXPECT_EQ(copy.handle, i);
    EXPECT_EQ(copy.from, sched::kHostNode);
    EXPECT_EQ(copy.to, 1);  // device 0
    EXPECT_EQ(copy.bytes, 1'000'000'000U);
    EXPECT_EQ(copy.start, milliseconds(0));
    EXPECT_EQ(copy.end, milliseconds(2000));
    EXPECT_TRUE(copy.prefetch);
  }
  // As the runtime's record, a Chrome trace of the published schema: the task's slice and the
  // two copies' slices on the device's lane.
  const auto run = run_record(*r);
  EXPECT_EQ(run.elapsed, milliseconds(2500));
  ASSERT_EQ(run.devices.size(), 1U);
  EXPECT_EQ(run.devices[0].name, "n0 GPU0");
  ASSERT_EQ(run.links.size(), 1U);
  EXPECT_EQ(run.links[0].bytes, 2'000'000'000U);
  EXPECT_EQ(run.links[0].transfers, 2U);
  const auto trace = sched::chrome_trace(run);
  EXPECT_THAT(testing::validate(testing::published_schema("trace.schema.json"), trace),
              ::testing::IsEmpty());
  std::size_t slices = 0;
  for (const auto& e : trace["traceEvents"]) {
    slices += e["ph"] == "X" ? 1 : 0;
  }
  EXPECT_EQ(slices, 3U);
  // Unrecorded, the result holds no records and equals the recorded one without them.
  const auto plain = simulate(p, w, {});
  ASSERT_THAT(plain, IsOk());
  EXPECT_TRUE(plain->task_records.empty());
  EXPECT_TRUE(plain->transfer_records.empty());
  EXPECT_TRUE(plain->link_loads.empty());
  // Recorded, each direction of each link that carried bytes, with its busy share.
  ASSERT_FALSE(r->link_loads.empty());
  for (const auto& l : r->link_loads) {
    EXPECT_EQ(l.node, 0);
    EXPECT_GT(l.share, 0);
    EXPECT_LE(l.share, 1);
  }
  auto stripped = *r;
  stripped.task_records.clear();
  stripped.transfer_records.clear();
  stripped.link_loads.clear();
  EXPECT_EQ(stripped, *plain);
}

TEST(SimulateTest, CholeskyWorkIsTheClosedFormAndEveryPolicyFinishesIt) {
  const int t = 6;
  const double b = 960;
  sched::WorkloadSpec spec;
  spec.kind = sched::WorkloadKind::kCholesky;
  spec.tiles = t;
  spec.kernels = "uniform";
  auto w = sched::make_workload(spec, {sched::DeviceModel{"gpu", 1}});
  ASSERT_THAT(w, IsOk());
  // potrf t b^3/3, trsm and syrk t(t-1)/2 b^3 each, gemm t(t-1)(t-2)/6 x 2 b^3; 1 Gflop/s.
  const double flops =
      t * b * b * b / 3 + t * (t - 1) * b * b * b + t * (t - 1) * (t - 2) / 6.0 * 2 * b * b * b;
  const Platform p = small(4);
  for (const auto kind : sched::all_policies()) {
    SCOPED_TRACE(std::string(sched::to_string(kind)));
    const auto r = simulate(p, *w, with(kind));
    ASSERT_THAT(r, IsOk());
    EXPECT_NEAR(r->area, flops / 1e9 / 4, 1e-9);
    EXPECT_EQ(r->tasks, static_cast<std::size_t>(t * (t + 1) * (t + 2) / 6));
    std::size_t ran = 0;
    for (const auto& d : r->devices) {
      ran += d.tasks;
    }
    EXPECT_EQ(ran, r->tasks);
    EXPECT_GE(r->makespan, r->bound() * (1 - 1e-9));
    // The same run twice gives the same answer.
    const auto again = simulate(p, *w, with(kind));
    ASSERT_THAT(again, IsOk());
    EXPECT_EQ(*again, *r);
  }
}

TEST(SimulateTest, NodesOnAFabricExchangeTheirData) {
  sched::WorkloadSpec spec;
  spec.kind = sched::WorkloadKind::kRandom;
  spec.tasks = 60;
  spec.ccr = 1;
  auto w = sched::make_workload(spec, {sched::DeviceModel{"gpu", 1}});
  ASSERT_THAT(w, IsOk());
  for (const char* fabric : {"single-switch", "fat-tree:4"}) {
    SCOPED_TRACE(fabric);
    Platform p = small(2, 4);
    p.fabric = *parse_fabric(fabric);
    const auto r = simulate(p, *w, with(sched::PolicyKind::kDmda));
    ASSERT_THAT(r, IsOk());
    EXPECT_EQ(r->devices.size(), 8U);
    EXPECT_EQ(r->devices[7].name, "n3 GPU1");
    bool fabric_used = false;
    for (const auto& l : r->links) {
      fabric_used = fabric_used || (l.kind == "fabric" && l.bytes > 0);
    }
    EXPECT_TRUE(fabric_used);
  }
  // A fat tree needs whole leaves.
  Platform odd = small(2, 3);
  odd.fabric = *parse_fabric("fat-tree:4");
  const auto r = simulate(odd, *w, {});
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message,
              HasSubstr("--nodes 3 on fat-tree:4: each leaf switch takes 2 nodes"));
}

// Two GPUs a node, each with a port of its own (1 GB/s, no latency) on a rail-optimized fabric
// of `group` nodes a group.
Platform on_rails(int nodes, int group) {
  Platform p = small(2, nodes);
  p.node.ports = {{"0000:01:00.0", "0000:01:00.0", 1e9, {}},
                  {"0000:02:00.0", "0000:02:00.0", 1e9, {}}};
  p.node.fabric_ports = 2;
  p.node.port_of = {0, 1};
  p.node.to_port = {{0}, {1}};
  p.fabric = *parse_fabric(fmt::format("rail-optimized:{}", group));
  p.fabric.bytes_per_second = 1e9;
  p.fabric.latency = 0;
  return p;
}

// Two 0.5 s tasks on node 1's two GPUs, each reading 1 GB that node 0's host memory holds.
sched::Workload two_reads(SimOptions& options) {
  sched::Workload w = independent(2, 0.5, 1'000'000'000);
  options.pinned = {2, 3};
  options.home = {0, 0};
  return w;
}

TEST(SimulateRailsTest, EachGpuReceivesOnItsOwnRailWithinAGroup) {
  SimOptions options;
  const auto w = two_reads(options);
  // One group: host memory sends on each receiver's rail, so the two copies run side by side
  // (each crossing two ports of 1 us).
  constexpr double kPorts = 2e-6;
  const auto same = simulate(on_rails(2, 2), w, options);
  ASSERT_THAT(same, IsOk());
  EXPECT_NEAR(same->makespan, 1.5 + kPorts, 1e-9);
  // A group each: across groups host memory leaves on its first port, which both copies share.
  const auto apart = simulate(on_rails(2, 1), w, options);
  ASSERT_THAT(apart, IsOk());
  EXPECT_NEAR(apart->makespan, 2.5 + kPorts, 1e-9);
  bool port_named = false;
  for (const auto& l : apart->links) {
    port_named = port_named || (l.kind == "nic" && l.busiest == "n0 nic 0000:01:00.0 up");
  }
  EXPECT_TRUE(port_named);
  // Both GPUs on one port: the copies share it within the group too.
  Platform shared = on_rails(2, 2);
  shared.node.port_of = {0, 0};
  const auto one_port = simulate(shared, w, options);
  ASSERT_THAT(one_port, IsOk());
  EXPECT_NEAR(one_port->makespan, 2.5 + kPorts, 1e-9);
}

// Two ports of one PCI function (a dual-port HCA) are two rails the engine builds and runs.
TEST(SimulateRailsTest, TwoPortsOfOneFunctionRun) {
  SimOptions options;
  const auto w = two_reads(options);
  Platform p = on_rails(2, 2);
  p.node.ports = {{"0000:01:00.0", "0000:01:00.0 mlx4_0/1", 1e9, {}},
                  {"0000:01:00.0", "0000:01:00.0 mlx4_0/2", 1e9, {}}};
  const auto r = simulate(p, w, options);
  ASSERT_THAT(r, IsOk());
  EXPECT_NEAR(r->makespan, 1.5 + 2e-6, 1e-9);
}

TEST(SimulateRailsTest, AnOversubscribedLeafSlowsWhatCrossesTheSpines) {
  SimOptions options;
  const auto w = two_reads(options);
  // Across groups of one node, a leaf's spine link is its node's port over the
  // oversubscription: 4:1 leaves a quarter of a port for the two copies.
  Platform p = on_rails(2, 1);
  p.fabric.oversubscription = 4;
  const auto r = simulate(p, w, options);
  ASSERT_THAT(r, IsOk());
  EXPECT_NEAR(r->makespan, 8.5 + 2e-6, 1e-9);  // and two ports of 1 us
  // Rails need ports: a node without one is named.
  Platform bare = on_rails(2, 2);
  bare.node.ports.clear();
  const auto none = simulate(bare, w, options);
  ASSERT_FALSE(none.has_value());
  EXPECT_THAT(none.error().message, HasSubstr("has no fabric NIC port to put on a rail"));
}

TEST(SimulateTest, TheReportNamesTheBestPolicyAndTheJsonHoldsEveryRun) {
  const Platform p = small(2);
  const auto w = independent(4, 1.0, 1'000'000'000);
  SimReport rep{p, "independent (4 tasks)", {}};
  for (const auto kind : {sched::PolicyKind::kDmda, sched::PolicyKind::kEager}) {
    auto r = simulate(p, w, with(kind));
    ASSERT_THAT(r, IsOk());
    rep.runs.push_back(*r);
  }
  // The comparison the CLI prints is the library's: one run per policy, in order.
  const auto both = simulate_policies(p, w, {sched::PolicyKind::kDmda, sched::PolicyKind::kEager});
  ASSERT_THAT(both, IsOk());
  EXPECT_EQ(*both, rep.runs);
  const auto text = report::render_text(sim_document(rep));
  EXPECT_THAT(text, HasSubstr("acco sim: 1 node x 2 devices"));
  EXPECT_THAT(text, HasSubstr("policy"));
  EXPECT_THAT(text, HasSubstr("best: "));
  const auto j = to_json(rep);
  EXPECT_EQ(j["schema"], "acco.sim/1");
  EXPECT_EQ(j["runs"].size(), 2U);
  EXPECT_EQ(j["runs"][0]["makespan_seconds"], 4.0);
  const auto back = result_from_json(j["runs"][0]);
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(*back, rep.runs[0]);
}

// The page's heat map past 64 nodes: 200 nodes in bands of 4 (50 rows), each cell the band's
// busiest; the spines a row of their own; characters of a name escaped; no Gantt chart without
// task records.
TEST(SimulateTest, ThePagesHeatMapBandsManyNodes) {
  SimReport rep;
  rep.platform = small(2, 200);
  rep.workload = "w <&>";
  SimResult run;
  run.policy = "dmda";
  run.makespan = 1;
  for (int node = 0; node < 200; ++node) {
    run.link_loads.push_back({node, "nic", "nic up", node == 7 ? 0.9 : 0.1});
  }
  run.link_loads.push_back({-1, "fabric", "group 0 leaf 0 spines up", 0.5});
  rep.runs.push_back(run);
  const std::string html = to_html(rep);
  const auto count = [&](const std::string& what) {
    std::size_t n = 0;
    for (auto at = html.find(what); at != std::string::npos; at = html.find(what, at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(count("class=\"cell\""), 51U);
  EXPECT_THAT(html, HasSubstr(">n4-7 nic up: 90 % busy<"));
  EXPECT_THAT(html, HasSubstr(">n196-199</text>"));
  EXPECT_THAT(html, HasSubstr(">spines group 0 leaf 0 spines up: 50 % busy<"));
  EXPECT_THAT(html, HasSubstr("w &lt;&amp;&gt;"));
  EXPECT_EQ(count("class=\"task\""), 0U);
  EXPECT_EQ(html.substr(html.size() - 8), "</html>\n");
}

}  // namespace
}  // namespace acco::sim

namespace acco::sim {
namespace {

// Topcuoglu, Hariri and Wu (2002), figure 2, as an acco.dag/1 document: costs on P1..P3 and
// each edge's communication cost as bytes over 1 B/s links.
nlohmann::json paper_dag() {
  nlohmann::json dag = {{"schema", "acco.dag/1"}, {"name", "topcuoglu-2002"}};
  const std::vector<std::vector<double>> cost = {
      {14, 16, 9}, {13, 19, 18}, {11, 13, 19}, {13, 8, 17},  {12, 13, 10},
      {13, 16, 9}, {7, 15, 11},  {5, 11, 14},  {18, 12, 20}, {21, 7, 16}};
  for (std::size_t i = 0; i < cost.size(); ++i) {
    dag["tasks"].push_back({{"name", "n" + std::to_string(i + 1)}, {"seconds", cost[i]}});
  }
  for (const auto& [from, to, bytes] : std::vector<std::tuple<int, int, int>>{{1, 2, 18},
                                                                              {1, 3, 12},
                                                                              {1, 4, 9},
                                                                              {1, 5, 11},
                                                                              {1, 6, 14},
                                                                              {2, 8, 19},
                                                                              {2, 9, 16},
                                                                              {3, 7, 23},
                                                                              {4, 8, 27},
                                                                              {4, 9, 23},
                                                                              {5, 9, 13},
                                                                              {6, 8, 15},
                                                                              {7, 10, 17},
                                                                              {8, 10, 11},
                                                                              {9, 10, 13}}) {
    dag["edges"].push_back(
        {{"from", "n" + std::to_string(from)}, {"to", "n" + std::to_string(to)}, {"bytes", bytes}});
  }
  return dag;
}

// Three processors, a link of 1 B/s each that every flow has whole (the paper's
// contention-free network), copies between two processors through both of theirs.
Platform paper_platform() {
  Platform p = small(3);
  for (auto& l : p.node.links) {
    l.bytes_per_second = 1;
    l.shared = false;
  }
  return p;
}

TEST(SimulateTest, HeftOnThePapersGraphFinishesAt80AsPublished) {
  const auto w = workload_from_dag(paper_dag());
  ASSERT_THAT(w, IsOk());
  EXPECT_EQ(w->tasks.size(), 10U);
  EXPECT_EQ(w->data_bytes.size(), 15U);
  EXPECT_EQ(sched::infer_edges(*w).size(), 15U);
  const auto r = simulate(paper_platform(), *w, with(sched::PolicyKind::kHeft));
  ASSERT_THAT(r, IsOk());
  EXPECT_DOUBLE_EQ(r->makespan, 80);
  // Every other policy finishes it too, never below the bound.
  for (const auto kind : sched::all_policies()) {
    const auto other = simulate(paper_platform(), *w, with(kind));
    ASSERT_THAT(other, IsOk());
    EXPECT_GE(other->makespan, other->bound());
  }
}

TEST(SimulateTest, ABadTaskGraphIsNamedWithWhatIsWrong) {
  auto dag = paper_dag();
  dag["edges"].push_back({{"from", "n10"}, {"to", "n1"}, {"bytes", 1}});
  EXPECT_THAT(workload_from_dag(dag).error().message, HasSubstr("the edges make a cycle"));
  dag = paper_dag();
  dag["tasks"][3]["seconds"] = {1, 2};
  EXPECT_EQ(workload_from_dag(dag).error().message,
            "task 'n4' has 2 times where the first task has 3");
  dag = paper_dag();
  dag["edges"][0]["to"] = "n11";
  EXPECT_THAT(workload_from_dag(dag).error().message, HasSubstr("\"to\" names no task"));
  dag = paper_dag();
  dag["tasks"][1]["name"] = "n1";
  EXPECT_EQ(workload_from_dag(dag).error().message, "task 'n1' is named twice");
  dag = paper_dag();
  dag["tasks"][0]["seconds"][0] = -1;
  EXPECT_EQ(workload_from_dag(dag).error().message, "task 'n1': -1 is not a number of 0 or more");
  EXPECT_THAT(workload_from_dag(nlohmann::json::object()).error().message,
              HasSubstr("\"schema\" is not \"acco.dag/1\""));
  // Values of the wrong type are errors, never exceptions.
  for (const char* text :
       {R"({"schema": "acco.dag/1", "tasks": [1]})", R"({"schema": 7, "tasks": []})",
        R"({"schema": "acco.dag/1", "tasks": [{"name": "a", "seconds": "1"}]})",
        R"({"schema": "acco.dag/1", "tasks": [{"name": "a", "seconds": 1}], "edges": 5})",
        R"({"schema": "acco.dag/1", "tasks": [{"name": "a", "seconds": 1}], "edges": [1]})",
        R"({"schema": "acco.dag/1", "tasks": [{"name": "a", "seconds": [], "type": 3}]})",
        R"({"schema": "acco.dag/1", "name": 5, "tasks": [{"name": "a", "seconds": 1}],
            "edges": [{"from": "a", "to": "a", "bytes": "x"}]})"}) {
    SCOPED_TRACE(text);
    EXPECT_FALSE(workload_from_dag(nlohmann::json::parse(text)).has_value());
  }
  // The devices' count must fit the rows.
  const auto w = workload_from_dag(paper_dag());
  ASSERT_THAT(w, IsOk());
  const auto r = simulate(small(2), *w, {});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, "task n1 has 3 times for 2 devices");
}

}  // namespace
}  // namespace acco::sim

namespace acco::sim {
namespace {

// Power's thermal model on the virtual clock: healthy devices keep their full clock (the same
// times as without the model) and draw energy; a device whose fan failed throttles at its max
// operating temperature and takes longer; pins put each task where it was asked; bad option
// vectors are named.
TEST(SimulateThermalTest, AFailedFanSlowsItsDeviceAndHealthyOnesKeepTheirClock) {
  const auto p = small(2);
  const auto w = independent(40, 0.5, 0);
  SimOptions plain = with(sched::PolicyKind::kRoundRobin);
  auto base = simulate(p, w, plain);
  ASSERT_THAT(base, IsOk());
  SimOptions healthy = plain;
  healthy.cooling = {1, 1};
  auto cool = simulate(p, w, healthy);
  ASSERT_THAT(cool, IsOk());
  EXPECT_NEAR(cool->makespan, base->makespan, 1e-9);
  EXPECT_EQ(base->energy_joules, 0);
  // Two devices near 700 W for 10 s each.
  EXPECT_GT(cool->energy_joules, 2 * 600 * base->makespan);
  EXPECT_LT(cool->energy_joules, 2 * 701 * base->makespan);
  EXPECT_DOUBLE_EQ(cool->devices[0].clock_share, 1);
  SimOptions failed = plain;
  failed.cooling = {1, 4};
  auto hot = simulate(p, w, failed);
  ASSERT_THAT(hot, IsOk());
  EXPECT_LT(hot->devices[1].clock_share, 0.9);
  EXPECT_GE(hot->devices[1].peak_celsius, 86);
  EXPECT_DOUBLE_EQ(hot->devices[0].clock_share, 1);
  EXPECT_GT(hot->makespan, 1.1 * base->makespan);
  // The answer survives the trip through JSON.
  auto back = result_from_json(to_json(*hot));
  ASSERT_THAT(back, IsOk());
  EXPECT_DOUBLE_EQ(back->energy_joules, hot->energy_joules);
  EXPECT_DOUBLE_EQ(back->devices[1].clock_share, hot->devices[1].clock_share);

  SimOptions pinned = plain;
  pinned.pinned.assign(w.tasks.size(), 1);
  auto one = simulate(p, w, pinned);
  ASSERT_THAT(one, IsOk());
  EXPECT_EQ(one->devices[1].tasks, w.tasks.size());
  EXPECT_NEAR(one->makespan, 40 * 0.5, 1e-9);

  SimOptions bad = plain;
  bad.cooling = {1};
  EXPECT_THAT(simulate(p, w, bad).error().message, HasSubstr("1 cooling factors for 2 devices"));
  bad = plain;
  bad.pinned.assign(w.tasks.size(), 2);
  EXPECT_THAT(simulate(p, w, bad).error().message, HasSubstr("a task pinned to device 2 of 2"));
}

// The governor's first round, at the start, finds the failed fan's device past its slowdown
// threshold and drains it: every policy runs the work on the other device, at its full clock.
TEST(SimulateGovernorTest, ADrainedDeviceTakesNoTaskAndItsPlannedOnesMove) {
  const auto p = small(2);
  const auto w = independent(40, 0.5, 0);
  for (const auto kind : {sched::PolicyKind::kDmda, sched::PolicyKind::kHeft,
                          sched::PolicyKind::kEager, sched::PolicyKind::kWorkStealing}) {
    SCOPED_TRACE(std::string(sched::to_string(kind)));
    SimOptions o = with(kind);
    o.cooling = {1, 4};
    o.governor = "thermal";
    auto r = simulate(p, w, o);
    ASSERT_THAT(r, IsOk());
    EXPECT_EQ(r->devices[1].tasks, 0U);
    EXPECT_EQ(r->devices[0].tasks, 40U);
    EXPECT_NEAR(r->makespan, 40 * 0.5, 1e-6);
    EXPECT_EQ(r->governor, "thermal");
    const auto drain = std::find_if(r->governor_actions.begin(), r->governor_actions.end(),
                                    [](const GovernorAction& a) { return a.action == "drain"; });
    ASSERT_NE(drain, r->governor_actions.end());
    EXPECT_EQ(drain->device, r->devices[1].name);
    EXPECT_EQ(drain->time_seconds, 0);
    EXPECT_EQ(drain->value, 1);
    EXPECT_EQ(drain->state, "draining");
    auto back = result_from_json(to_json(*r));
    ASSERT_THAT(back, IsOk());
    EXPECT_EQ(back->governor_actions, r->governor_actions);
  }
  // Without the governor the hot device keeps working, throttled.
  SimOptions firmware = with(sched::PolicyKind::kDmda);
  firmware.cooling = {1, 4};
  auto r = simulate(p, w, firmware);
  ASSERT_THAT(r, IsOk());
  EXPECT_GT(r->devices[1].tasks, 0U);
  EXPECT_TRUE(r->governor_actions.empty());
}

// Later rounds read each device's busy share of the last second: from the second round on, an
// idle device's cap follows its load down towards 60 % of its default limit (the thermal mode's
// floor), 35 W a second (the governor's slew limit); the busy one keeps its limit.
TEST(SimulateGovernorTest, EachSecondTheGovernorReadsTheLoadOfTheLastOne) {
  const auto p = small(2);
  const auto w = independent(10, 1.0, 0);
  SimOptions o = with(sched::PolicyKind::kDmda);
  o.pinned.assign(w.tasks.size(), 0);
  o.cooling = {1, 1};
  o.governor = "thermal";
  auto r = simulate(p, w, o);
  ASSERT_THAT(r, IsOk());
  EXPECT_NEAR(r->makespan, 10, 1e-6);
  const auto cap =
      std::find_if(r->governor_actions.begin(), r->governor_actions.end(),
                   [](const GovernorAction& a) { return a.action == "set_power_limit"; });
  ASSERT_NE(cap, r->governor_actions.end());
  EXPECT_EQ(cap->device, r->devices[1].name);
  EXPECT_NEAR(cap->time_seconds, 1, 1e-9);
  EXPECT_NEAR(cap->value, 700 - 35, 1e-9);
  double last = cap->value;
  for (const auto& a : r->governor_actions) {
    EXPECT_FALSE(a.action == "set_power_limit" && a.device == r->devices[0].name) << a.reason;
    if (a.action == "set_power_limit" && a.device == r->devices[1].name) {
      last = a.value;
    }
  }
  EXPECT_LT(last, cap->value);
  EXPECT_GE(last, 0.6 * 700);
}

TEST(SimulateGovernorTest, AModeTheDevicesCannotTakeIsRefused) {
  const auto p = small(2);
  const auto w = independent(2, 0.5, 0);
  SimOptions o = with(sched::PolicyKind::kDmda);
  o.cooling = {1, 1};
  o.governor = "warm";
  EXPECT_THAT(simulate(p, w, o).error().message, HasSubstr("expected thermal, energy or cap:W"));
  o.governor = "cap:900";
  EXPECT_THAT(simulate(p, w, o).error().message, HasSubstr("expected a cap from 200 to 700 W"));
  EXPECT_THAT(check_governor("cap:250"), IsOk());
  o.governor = "thermal";
  o.cooling.clear();
  EXPECT_THAT(simulate(p, w, o).error().message, HasSubstr("a governor needs the thermal model"));
}

// The fabric's bound for pinned work: a version crosses each node's link, and each leaf's links
// to the spines, once however many read it there.
TEST(FabricBoundTest, EachVersionCrossesANodeOrALeafOnce) {
  auto p = small(1, 4);  // four nodes of one GPU, 1 GB/s links
  sched::Workload w;
  w.data_bytes = {1'000'000'000, 1'000'000'000};
  const auto task = [](std::vector<std::pair<std::size_t, sched::Access>> a) {
    return sched::WorkTask{"t", "t", std::move(a), 0, {0.001}};
  };
  using sched::Access;
  // Node 0 writes datum 0 and node 2 reads it twice, node 0 once; datum 1 starts on node 1 and
  // node 3 reads it.
  w.tasks = {task({{0, Access::kWrite}}), task({{0, Access::kRead}}), task({{0, Access::kRead}}),
             task({{0, Access::kRead}}), task({{1, Access::kRead}})};
  std::vector<int> pinned = {0, 2, 2, 0, 3};
  const std::vector<int> home = {0, 1};
  EXPECT_DOUBLE_EQ(fabric_bound(p, w, pinned, home), 1.0);  // one GB through each link at most
  // A fat tree of two-node leaves tapered 2:1 (one spine): leaf 0 (nodes 0 and 1) sends both
  // to leaf 1, 2 GB over one 1 GB/s up-link; without the taper two.
  p.fabric.kind = FabricKind::kFatTree;
  p.fabric.k = 4;
  p.fabric.oversubscription = 2;
  EXPECT_DOUBLE_EQ(fabric_bound(p, w, pinned, home), 2.0);
  p.fabric.oversubscription = 1;
  EXPECT_DOUBLE_EQ(fabric_bound(p, w, pinned, home), 1.0);
  // Node 3 writes datum 1 and node 2 reads the new version: node 2 now takes in 2 GB.
  w.tasks.push_back(task({{1, Access::kReadWrite}}));
  w.tasks.push_back(task({{1, Access::kRead}}));
  pinned.push_back(3);
  pinned.push_back(2);
  EXPECT_DOUBLE_EQ(fabric_bound(p, w, pinned, home), 2.0);
  // A task the policy places: where it runs decides what crosses, so no bound.
  pinned.back() = -1;
  EXPECT_EQ(fabric_bound(p, w, pinned, home), 0);
  // One node: nothing crosses a fabric.
  EXPECT_EQ(fabric_bound(small(4, 1), w, {0, 1, 1, 0, 2, 3, 2}, {0, 0}), 0);
}

// Eager's shared queue: in priority order, and the device that released tasks takes its next
// one before the devices it woke, as a runtime's running thread does. Task r on device 0
// releases hi (whose successor makes it the higher priority; 1 s on device 0, 10 s on device 1)
// and lo: device 0 takes hi, device 1 lo, and hi's successor follows on device 0.
TEST(SimulateTest, TheReleasingDeviceTakesTheTopTaskFirst) {
  sched::Workload w;
  w.name = "release";
  w.data_bytes = {0, 0, 0};
  using sched::Access;
  w.tasks = {{"r", "r", {{0, Access::kWrite}}, 0, {1, 1}},
             {"hi", "hi", {{0, Access::kRead}, {1, Access::kWrite}}, 0, {1, 10}},
             {"lo", "lo", {{0, Access::kRead}, {2, Access::kWrite}}, 0, {1, 1}},
             {"h2", "h2", {{1, Access::kRead}}, 0, {1, 1}}};
  auto r = simulate(small(2), w, with(sched::PolicyKind::kEager));
  ASSERT_THAT(r, IsOk());
  EXPECT_NEAR(r->makespan, 3, 1e-9);
  EXPECT_EQ(r->devices[0].tasks, 3U);
  EXPECT_EQ(r->devices[1].tasks, 1U);
}

// A runtime's cost per task: each of four 1 s tasks on two devices costs 0.5 s more.
TEST(SimulateTest, ATaskOverheadIsSpentBeforeEachTask) {
  SimOptions o = with(sched::PolicyKind::kDmda);
  o.task_overhead_seconds = 0.5;
  auto r = simulate(small(2), independent(4, 1.0, 0), o);
  ASSERT_THAT(r, IsOk());
  EXPECT_NEAR(r->makespan, 3, 1e-9);
  EXPECT_NEAR(r->devices[0].busy_seconds, 2, 1e-9);  // the tasks' own time only
  o.task_overhead_seconds = -1;
  EXPECT_THAT(simulate(small(2), independent(4, 1.0, 0), o).error().message,
              HasSubstr("a task overhead of -1 s is not 0 to 1 s"));
}

// A pinned task stays on its device: device 1, done with its own task, steals none of the
// four pinned to device 0.
TEST(SimulateTest, StealingLeavesPinnedTasksWhereTheyArePinned) {
  SimOptions o = with(sched::PolicyKind::kWorkStealing);
  o.pinned = {1, 0, 0, 0, 0};
  auto r = simulate(small(2), independent(5, 1.0, 0), o);
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->devices[1].tasks, 1U);
  EXPECT_NEAR(r->makespan, 4, 1e-9);
}

}  // namespace
}  // namespace acco::sim
