// `acco sim` run for real on generated machines: the text (golden) and JSON (schema) of a policy
// comparison, a task graph from a file, and bad input as one line with its exit code.
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/files.hpp"
#include "acco/testing/json_schema.hpp"

#include "machines.hpp"
#include "run_acco.hpp"

namespace acco::testing {
namespace {

using ::testing::HasSubstr;

TEST(SimTest, APolicyComparisonOnDgxNodesMatchesItsGoldenAndSchema) {
  TempDir root;
  write_dgx_h100(root.path());
  const std::string base = "sim --sysroot " + root.path().string() +
                           " --nvml off --nodes 4 --fabric fat-tree:4 --tiles 6 --policy dmda,heft";
  const auto text = acco(base);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  expect_golden("sim.dgx_h100.txt",
                std::regex_replace(text.out, std::regex(root.path().string()), "DIR"));
  const auto json = acco(base + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  expect_conforms(json.out, "sim.schema.json");
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["platform"]["nodes"], 4);
  EXPECT_EQ(j["platform"]["devices_per_node"], 8);
  ASSERT_EQ(j["runs"].size(), 2U);
  for (const auto& run : j["runs"]) {
    EXPECT_EQ(run["tasks"], 56);
    EXPECT_EQ(run["devices"].size(), 32U);
    EXPECT_GE(run["makespan_seconds"].get<double>(), run["bound_seconds"].get<double>());
  }
}

// A generated node needs no machine to read: the same report, its origin named.
TEST(SimTest, AGeneratedNodeIsSimulatedWithItsNvlinks) {
  const auto r = acco("sim --node dgx-h100 --nodes 2 --tiles 4 --policy heft --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "sim.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["platform"]["origin"], "generated dgx-h100");
  EXPECT_EQ(j["platform"]["devices_per_node"], 8);
  const auto text = acco("sim --node dgx-h100 --nodes 2 --tiles 4 --policy heft");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("2 nodes x 8 devices (generated dgx-h100)"));
  EXPECT_THAT(text.out, HasSubstr("nvlink links: 8 per node, 450.0 GB/s"));
}

// A node read from an NCCL topology file (a DGX H100 dump) is the generated DGX H100 node: eight
// GPUs, each with 18 NVLinks of 25 GB/s.
TEST(SimTest, ANodeFromAnNcclTopologyFileIsSimulated) {
  const std::string xml = std::string(ACCO_SOURCE_DIR) + "/tests/data/nccl_topo/dgx_h100.xml";
  const auto r = acco("sim --nccl-topo " + xml + " --nodes 2 --tiles 4 --policy heft --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "sim.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["platform"]["origin"], "NCCL topology " + xml);
  EXPECT_EQ(j["platform"]["devices_per_node"], 8);
  const auto text = acco("sim --nccl-topo " + xml + " --nodes 2 --tiles 4 --policy heft");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("nvlink links: 8 per node, 450.0 GB/s"));
  const auto both = acco("sim --nccl-topo " + xml + " --node dgx-h100");
  EXPECT_EQ(both.exit_code, 64);
  EXPECT_THAT(both.err, HasSubstr("--node and --nccl-topo cannot be combined"));
}

// --seeds N: the policies on a random workload drawn N times, each policy's makespans beside the
// first seed's runs; the same answer twice; refused for a workload that draws nothing.
TEST(SimTest, SeveralSeedsGiveEachPolicysMakespanOverThem) {
  const std::string base =
      "sim --node pcie-4gpu --workload random --tasks 200 --seeds 3 "
      "--policy dmda,eager";
  const auto json = acco(base + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  expect_conforms(json.out, "sim.schema.json");
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["seeds"]["seeds"], nlohmann::json::array({1, 2, 3}));
  ASSERT_EQ(j["runs"].size(), 2U);
  const auto& dmda = j["seeds"]["makespan_seconds"]["dmda"];
  ASSERT_EQ(dmda.size(), 3U);
  EXPECT_EQ(dmda[0], j["runs"][0]["makespan_seconds"]);  // the first seed's run
  EXPECT_NE(dmda[0], dmda[1]);                           // another draw, another graph
  const auto one = acco(
      "sim --node pcie-4gpu --workload random --tasks 200 --seed 2 "
      "--policy dmda,eager --json");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(dmda[1], nlohmann::json::parse(one.out)["runs"][0]["makespan_seconds"]);
  const auto text = acco(base);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("random (200 tasks, seeds 1-3)"));
  EXPECT_THAT(text.out, HasSubstr("best with seed 1: "));
  EXPECT_THAT(text.out, HasSubstr("over 3 seeds (1-3):"));
  EXPECT_THAT(text.out, HasSubstr("best over the seeds: "));
  EXPECT_EQ(acco(base).out, text.out);
  const auto fixed = acco("sim --node pcie-4gpu --tiles 4 --seeds 2");
  EXPECT_EQ(fixed.exit_code, 64);
  EXPECT_THAT(fixed.err, HasSubstr("--seeds: this workload draws nothing at random"));
}

// A training step on two generated nodes: one data-parallel run, in the report and its schema.
TEST(SimTest, ATrainingStepIsOneDataParallelRun) {
  const std::string base =
      "sim --node dgx-h100 --nodes 2 --workload train --layers 4 --params 1e8 --layer-ms 1";
  const auto r = acco(base + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "sim.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["runs"].size(), 1U);
  EXPECT_EQ(j["runs"][0]["policy"], "data-parallel");
  EXPECT_EQ(j["runs"][0]["tasks"], 16 * 8 + 16 * 4);
  EXPECT_GE(j["runs"][0]["makespan_seconds"].get<double>(), 0.012);
  const auto text = acco(base);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("training step (4 layers, 1e+08 parameters, 4 buckets (cap 25 "
                                  "MiB), 8 rings over 16 devices, 64 MiB batches)"));
  EXPECT_THAT(text.out, HasSubstr("data-parallel"));
}

// A failed fan: the device's clock and heat, and every run's energy, in text and JSON.
TEST(SimTest, AFailedFanIsAThermalWhatIf) {
  const std::string base =
      "sim --node dgx-h100 --tiles 16 --policy dmda,heft --failed-fan GPU5 --fan-factor 5";
  const auto r = acco(base + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "sim.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& run : j["runs"]) {
    EXPECT_GT(run["energy_joules"].get<double>(), 0);
    EXPECT_LT(run["devices"][5]["clock_share"].get<double>(), 0.9);
    EXPECT_DOUBLE_EQ(run["devices"][4]["clock_share"].get<double>(), 1);
  }
  const auto text = acco(base);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("energy"));
  EXPECT_THAT(text.out, HasSubstr("thermal: n0 GPU5 cools 5 times worse; its clock while busy: "
                                  "dmda "));
  // A power cap on every device: slower, and less energy.
  const std::string capped = "sim --node dgx-h100 --tiles 16 --policy heft --json --thermal";
  const auto full = acco(capped);
  const auto low = acco(capped + " --power-limit 300");
  ASSERT_EQ(full.exit_code, 0) << full.err;
  ASSERT_EQ(low.exit_code, 0) << low.err;
  const auto a = nlohmann::json::parse(full.out)["runs"][0];
  const auto b = nlohmann::json::parse(low.out)["runs"][0];
  EXPECT_GT(b["makespan_seconds"].get<double>(), 1.2 * a["makespan_seconds"].get<double>());
  EXPECT_LT(b["energy_joules"].get<double>(), a["energy_joules"].get<double>());
  EXPECT_THAT(acco("sim --node dgx-h100 --tiles 4 --policy heft --power-limit 300").out,
              HasSubstr("devices:      thermal model, capped at 300 W each"));
}

// The governor on the virtual clock: it drains the failed fan's device at its first round, so
// that device runs nothing; its actions are in the JSON and summed up in the text.
TEST(SimTest, TheGovernorTakesAFailedFansDeviceOutOfService) {
  const std::string base =
      "sim --node dgx-h100 --tiles 16 --policy dmda,heft --failed-fan GPU5 --governor thermal";
  const auto r = acco(base + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "sim.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& run : j["runs"]) {
    EXPECT_EQ(run["governor"], "thermal");
    EXPECT_EQ(run["devices"][5]["tasks"], 0);
    bool drained = false;
    for (const auto& a : run["governor_actions"]) {
      drained = drained || (a["device"] == "n0 GPU5" && a["action"] == "drain");
    }
    EXPECT_TRUE(drained) << run["governor_actions"].dump();
  }
  const auto text = acco(base);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("governor thermal every second"));
  EXPECT_THAT(text.out, HasSubstr("governor (thermal): heft: "));
  EXPECT_THAT(text.out, HasSubstr("n0 GPU5 draining from the start, limit 200 W, weight 0.25, "
                                  "drained; 7 other devices normal"));
}

TEST(SimTest, ATaskGraphFileIsSimulatedAndABadOneIsNamed) {
  TempDir root;
  write_workstation(root.path());
  const std::string base = "sim --sysroot " + root.path().string() + " --nvml off ";
  const auto dag = acco(base + "--dag " + std::string(ACCO_SOURCE_DIR) +
                        "/docs/examples/topcuoglu-2002.dag.json --policy heft --json");
  ASSERT_EQ(dag.exit_code, 0) << dag.err;
  expect_conforms(dag.out, "sim.schema.json");
  EXPECT_THAT(nlohmann::json::parse(dag.out)["workload"].get<std::string>(),
              HasSubstr("topcuoglu-2002 (10 tasks"));
  const auto file = root.path() / "bad.json";
  std::ofstream(file) << R"({"schema": "acco.dag/1", "tasks": [{"name": "a", "seconds": 1}],
                            "edges": [{"from": "a", "to": "a"}]})";
  const auto bad = acco(base + "--dag " + file.string());
  EXPECT_EQ(bad.exit_code, 65);
  EXPECT_EQ(bad.err, "acco: sim: --dag: " + file.string() +
                         R"(: edge {"from":"a","to":"a"} joins a task to itself)" + "\n");
  const auto missing = acco(base + "--dag " + (root.path() / "none.json").string());
  EXPECT_EQ(missing.exit_code, 66);
}

TEST(SimTest, TraceWritesTheFirstPolicysRunAsAChromeTrace) {
  TempDir root;
  write_workstation(root.path());
  const auto file = root.path() / "sim trace.json";
  const std::string base =
      "sim --sysroot " + root.path().string() + " --nvml off --tiles 4 --policy heft,dmda --trace ";
  const auto r = acco(base + "'" + file.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "acco: trace of heft written to " + file.string() + "\n");
  expect_conforms(slurp(file), "trace.schema.json");
  const auto trace = nlohmann::json::parse(slurp(file));
  EXPECT_EQ(trace["otherData"]["policy"], "heft");
  // Every task of the 4 x 4 Cholesky (20) is one slice on a device's lane.
  std::size_t tasks = 0;
  for (const auto& e : trace["traceEvents"]) {
    tasks += e["ph"] == "X" && e["pid"] == 1 ? 1 : 0;
  }
  EXPECT_EQ(tasks, 20U);
  // A directory that is not there is said before the simulation, and nothing is written.
  const auto bad = acco(base + (root.path() / "none" / "t.json").string());
  EXPECT_EQ(bad.exit_code, 73);
  EXPECT_THAT(bad.err, HasSubstr("acco: --trace: "));
  EXPECT_EQ(bad.out, "");
}

// --html: the text report in a page, the first run's tasks as a Gantt chart (one rectangle a
// task) and its links' busy shares as heat maps; the page has a golden.
TEST(SimTest, HtmlDrawsTheFirstRunsTasksAndLinks) {
  TempDir dir;
  const auto file = dir.path() / "sim.html";
  const std::string base = "sim --node dgx-h100 --nodes 2 --tiles 3 --policy heft,dmda --html ";
  const auto r = acco(base + file.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "acco: HTML report written to " + file.string() + "\n");
  const std::string html = slurp(file);
  expect_golden("sim.html", html);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0U);
  EXPECT_THAT(html, HasSubstr("heft: the tasks on each device"));
  std::size_t rects = 0;
  for (auto at = html.find("class=\"task\""); at != std::string::npos;
       at = html.find("class=\"task\"", at + 1)) {
    ++rects;
  }
  EXPECT_EQ(rects, 10U);  // the 3 x 3 Cholesky's tasks
  EXPECT_THAT(html, HasSubstr("<h3>pcie links</h3>"));
  // The output's directory is checked before the simulation; nothing is written.
  const auto bad = acco(base + (dir.path() / "none" / "s.html").string());
  EXPECT_EQ(bad.exit_code, 73);
  EXPECT_THAT(bad.err, HasSubstr("acco: --html: "));
  EXPECT_EQ(bad.out, "");
}

// Rails: each GPU's copies leave through its own port (eight NIC links a node in the report and
// the JSON, each port's busiest direction named), and a node without NIC ports is refused.
TEST(SimTest, RailsCarryEachGpusCopiesOnItsOwnPort) {
  const std::string base =
      "sim --node dgx-h100 --nodes 4 --fabric rail-optimized:2 --oversubscription 2 "
      "--workload taskbench:all_to_all --width 16 --steps 2 --policy dmda";
  const auto text = acco(base);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("on rail-optimized:2,"));
  EXPECT_THAT(text.out, HasSubstr("nic links:    8 per node, 50.0 GB/s"));
  EXPECT_THAT(text.out, HasSubstr("rail-optimized:2, 8 rails (a port each) at 50.0 GB/s, 2 nodes "
                                  "a group, 2:1 to the spines, 2.0 us a link"));
  const auto json = acco(base + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  expect_conforms(json.out, "sim.schema.json");
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["platform"]["fabric"]["kind"], "rail-optimized:2");
  EXPECT_EQ(j["platform"]["fabric"]["oversubscription"], 2);
  int ports = 0;
  for (const auto& l : j["platform"]["links"]) {
    ports += l["kind"] == "nic" && l["name"].get<std::string>().rfind("nic 0000:", 0) == 0;
  }
  EXPECT_EQ(ports, 8);
  TempDir vm;
  write_flattened_vm(vm.path());
  const auto none =
      acco("sim --sysroot " + vm.path().string() + " --nvml off --nodes 2 --fabric rail-optimized");
  EXPECT_EQ(none.exit_code, 64);
  EXPECT_THAT(none.err, HasSubstr("has no fabric NIC port to put on a rail\n"));
  EXPECT_EQ(none.out, "");
}

TEST(SimTest, BadFlagsAreOneLineWithTheUsageExitCode) {
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"--nodes 0", "--nodes: '0' is not a whole number from 1 to 100000"},
           {"--fabric torus",
            "--fabric: 'torus' is not single-switch, fat-tree:K (K even, 2-256) or "
            "rail-optimized[:S] (S nodes a group, 1-4096)"},
           {"--fabric rail-optimized:0",
            "--fabric: 'rail-optimized:0' is not single-switch, fat-tree:K (K even, 2-256) or "
            "rail-optimized[:S] (S nodes a group, 1-4096)"},
           {"--nodes 4 --fabric fat-tree:4 --oversubscription 3",
            "--oversubscription 3 on fat-tree:4: the 2 up-links of a leaf divide only by a "
            "divisor of 2"},
           {"--nodes 2 --oversubscription 2",
            "--oversubscription: a single switch has no up-links to taper"},
           {"--fabric rail-optimized --oversubscription 65",
            "--oversubscription 65 is not from 1 to 64"},
           {"--nodes 3 --fabric fat-tree:4",
            "--nodes 3 on fat-tree:4: each leaf switch takes 2 nodes, so the count must be a "
            "multiple of 2"},
           {"--policy fifo",
            "--policy: 'fifo' is not one of eager, round-robin, least-loaded, dmda, ws, heft, or "
            "all"},
           {"--kernels fastest",
            "--kernels: unknown kernel table 'fastest' (known: sirocco, mirage, uniform)"},
           {"--workload fft",
            "--workload: 'fft' is not one of cholesky, lu, independent, chain, random, train, "
            "taskbench:PATTERN"},
           {"--workload taskbench:fast",
            "--workload: 'fast' is not a Task Bench pattern: trivial, no_comm, stencil_1d, "
            "stencil_1d_periodic, dom, tree, fft, all_to_all, nearest, spread, random_nearest, "
            "random_spread"},
           {"--workload taskbench:fft --task-kernel memory_bound",
            "--task-kernel: 'memory_bound' is not a Task Bench kernel: compute_bound, "
            "load_imbalance, empty"},
           {"--workload taskbench:fft --task-us -1",
            "--task-us: '-1' is not microseconds from 0 to 1e9"},
           {"--workload taskbench:fft --imbalance 2",
            "--imbalance: '2' is not a share from 0 to 1"},
           {"--workload taskbench:fft --output-bytes lots",
            "--output-bytes: 'lots' is not a size from 0 to 1TiB (64KiB, 1MiB)"},
           {"--workload taskbench:random_nearest --fraction 2",
            "--fraction: '2' is not a share from 0 to 1"},
           {"--workload taskbench:nearest --radix 9",
            "--radix: '9' is not a whole number from 1 to --width (8)"},
           {"--workload taskbench:fft --width 0",
            "--width: '0' is not a whole number from 1 to 100000"},
           {"--node dgx-b200",
            "--node: 'dgx-b200' is not a generated node: one of dgx-h100, hgx-a100, pcie-4gpu"},
           {"--node dgx-h100 --sysroot /",
            "--node and --sysroot cannot be combined (each names the node to simulate)"},
           {"--node dgx-h100 --from x.json",
            "--node and --from cannot be combined (each names the node to simulate)"},
           {"--workload train --policy dmda",
            "--policy: a training step runs each replica's work on its own device; no policy "
            "places it"},
           {"--workload train --layers 0", "--layers: '0' is not a whole number from 1 to 10000"},
           {"--node dgx-h100 --failed-fan n1:GPU0",
            "--failed-fan: 'n1:GPU0' is not a device of the platform (n0:GPU0 to n0:GPU7)"},
           {"--node dgx-h100 --failed-fan fan",
            "--failed-fan: 'fan' is not a device of the platform (n0:GPU0 to n0:GPU7)"},
           {"--fan-factor 0.5", "--fan-factor: '0.5' is not a factor from 1 to 100"},
           {"--power-limit 100",
            "--power-limit: '100' is not watts from 200 to 700 (the simulated device's range)"},
           {"--task-overhead-us -1", "--task-overhead-us: '-1' is not microseconds from 0 to 1e6"},
           {"--governor warm",
            "--governor: 'warm' is not a governor mode: thermal, energy or cap:W (W from 200 to "
            "700)"},
           {"--governor cap:100",
            "--governor: 'cap:100' is not a governor mode: thermal, energy or cap:W (W from 200 "
            "to 700)"},
           {"--workload train --bucket-mb -1",
            "--bucket-mb: '-1' is not a number above 0, at most 1e+06"},
       }) {
    SCOPED_TRACE(args);
    const auto r = acco("sim " + args);
    EXPECT_EQ(r.exit_code, 64);
    EXPECT_EQ(r.err, "acco: " + message + "\n");
    EXPECT_EQ(r.out, "");
  }
  // A machine without accelerators has nothing to simulate: the CI's VM.
  TempDir vm;
  write_ci_vm(vm.path());
  const auto none = acco("sim --sysroot " + vm.path().string());
  EXPECT_EQ(none.exit_code, 66);
  EXPECT_THAT(none.err, HasSubstr("no accelerator in sysroot " + vm.path().string()));
}

}  // namespace
}  // namespace acco::testing
