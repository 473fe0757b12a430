// `acco exec` run for real: the binding printed for recorded machines (golden, schema), applied to
// a real child process (its CPU mask read back from /proc/self/status), the child's exit status
// passed through, and bad input as one line with its exit code.
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>

#include "acco/testing/files.hpp"
#include "acco/testing/json_schema.hpp"

#include "machines.hpp"
#include "run_acco.hpp"
#include "sysroot_builder.hpp"

namespace acco::testing {
namespace {

using ::testing::HasSubstr;

// Two NUMA nodes of one CPU each, a GPU on node 1's root bus: on a machine with CPUs 0 and 1 the
// binding narrows a child to CPU 1.
void write_two_cpu_machine(const std::filesystem::path& dir) {
  SysrootBuilder b(dir);
  b.numa_node({.id = 0, .cpus = "0", .distances = {10, 20}, .memory_kib = 1 << 20})
      .numa_node({.id = 1, .cpus = "1", .distances = {20, 10}, .memory_kib = 1 << 20});
  b.root_bus("0000:80", 1)
      .add("0000:80:01.0",
           {.ids = {0x060400, 0x8086, 0x352a}, .max_link = Link{5, 16}, .driver = "pcieport"})
      .add("0000:81:00.0",
           {.ids = {0x030200, 0x10de, 0x2330}, .max_link = Link{5, 16}, .driver = "nvidia"});
}

bool has_cpus_0_and_1() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return ::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_ISSET(0, &set) && CPU_ISSET(1, &set);
}

TEST(ExecTest, TheBindingOfARecordedMachineMatchesItsGoldenAndSchema) {
  TempDir root;
  write_dgx_h100(root.path());
  const std::string base = "exec --sysroot " + root.path().string() + " --nvml off --device 5 ";
  // taskset gives the run a fixed inherited mask, so the golden holds on any machine.
  const auto text = acco(base + "--nic auto --dry-run", "");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("acco exec: GPU5 0000:ab:00.0"));
  EXPECT_THAT(text.out, HasSubstr("memory bound to: node 1"));
  EXPECT_THAT(text.out, HasSubstr("NCCL_IB_HCA:          =mlx5_5:1"));
  // The text, with the one line that depends on the CPUs this test runs on masked.
  const auto plain = acco(base + "--nic auto --bind none --dry-run");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  expect_golden("exec.dgx_h100.gpu5.txt",
                std::regex_replace(plain.out, std::regex("inherited CPUs: +[0-9,-]+"),
                                   "inherited CPUs:  (masked)"));
  const auto json = acco(base + "--nic auto --dry-run --report json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  expect_conforms(json.out, "exec-binding.schema.json");
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["device"]["pci"], "0000:ab:00.0");
  EXPECT_EQ(j["device_cpus"], "56-111,168-223");
  EXPECT_EQ(j["memory_node"], 1);
  EXPECT_EQ(j["nic"], "mlx5_5:1");
}

TEST(ExecTest, AChildRunsOnTheGpusCpusWithItsEnvironmentAndItsExitStatus) {
  if (!has_cpus_0_and_1()) {
    GTEST_SKIP() << "needs CPUs 0 and 1 in this process's mask";
  }
  TempDir root;
  write_two_cpu_machine(root.path());
  const auto r =
      acco("exec --sysroot " + root.path().string() +
               " --nvml off --device 0 --report json -- sh -c "
               "'grep Cpus_allowed_list /proc/self/status; echo "
               "CVD=$CUDA_VISIBLE_DEVICES ORDER=$CUDA_DEVICE_ORDER OMP=$OMP_NUM_THREADS; "
               "exit 7'",
           "-u OMP_NUM_THREADS -u CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Cpus_allowed_list:\t1\n"));
  EXPECT_THAT(r.out, HasSubstr("CVD=0 ORDER=PCI_BUS_ID OMP=1\n"));
  // The binding goes to stderr, so the child's stdout is its own.
  const auto first_line = r.err.substr(0, r.err.find('\n'));
  expect_conforms(first_line, "exec-binding.schema.json");
  EXPECT_EQ(nlohmann::json::parse(first_line)["cpus"], "1");
}

TEST(ExecTest, UnderMpirunEachLocalRankTakesItsOwnGpu) {
  TempDir root;
  write_dgx_h100(root.path());
  const std::string base =
      "exec --sysroot " + root.path().string() + " --nvml off --local-rank auto --dry-run ";
  const auto three =
      acco(base + "--report json", "OMPI_COMM_WORLD_LOCAL_RANK=3 OMPI_COMM_WORLD_LOCAL_SIZE=8");
  ASSERT_EQ(three.exit_code, 0) << three.err;
  EXPECT_EQ(nlohmann::json::parse(three.out)["device"]["pci"], "0000:5d:00.0");
  const auto shared = acco(base, "LOCAL_RANK=9 LOCAL_WORLD_SIZE=16");
  ASSERT_EQ(shared.exit_code, 0) << shared.err;
  EXPECT_THAT(shared.out, HasSubstr("16 ranks on this node share 8 GPU(s): rank 9 takes GPU1"));
  const auto none = acco(base,
                         "-u OMPI_COMM_WORLD_LOCAL_RANK -u LOCAL_RANK -u SLURM_LOCALID "
                         "-u PMI_LOCAL_RANK -u MPI_LOCALRANKID -u MV2_COMM_WORLD_LOCAL_RANK");
  EXPECT_EQ(none.exit_code, 64);
  EXPECT_THAT(none.err, HasSubstr("acco: exec: --local-rank auto: no launcher's local rank"));
}

// The binding doctor: a rank of a recorded DGX whose CPUs are on the far socket is told so with
// its fix and exit 1; on this machine the document conforms whatever it finds.
TEST(ExecTest, CheckNamesEachMismatchWithItsFix) {
  TempDir root;
  write_dgx_h100(root.path());
  std::filesystem::create_directories(root.path() / "proc/self");
  std::ofstream(root.path() / "proc/self/status")
      << "Name:\trank\nCpus_allowed_list:\t56-59\nMems_allowed_list:\t0-1\n";
  const auto r = acco("exec --check --sysroot " + root.path().string() + " --nvml off --json",
                      "CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_ORDER=PCI_BUS_ID");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  expect_conforms(r.out, "exec-check.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["problems"], 1);
  EXPECT_EQ(j["items"][1]["name"], "CPUs");
  EXPECT_THAT(j["items"][1]["problem"].get<std::string>(),
              HasSubstr("none of them is on GPU0's NUMA node 0"));
  const auto text = acco("exec --check --sysroot " + root.path().string() + " --nvml off",
                         "CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_ORDER=PCI_BUS_ID");
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_THAT(text.out, HasSubstr("  FIX  CPUs           56-59 (NUMA node 1)\n"));
  EXPECT_THAT(text.out, HasSubstr("    fix: acco exec --device 0 -- CMD"));
  const auto live = acco("exec --check --json");
  EXPECT_TRUE(live.exit_code == 0 || live.exit_code == 1) << live.err;
  expect_conforms(live.out, "exec-check.schema.json");
  EXPECT_EQ(acco("exec --check --device 0").exit_code, 64);
}

// A DGX whose GPU 0 runs three MIG instances and whose GPU 1 waits for a reset to enter MIG
// mode, through the fake NVML: the probe lists the instances and warns of the reset, and exec
// binds a MIG UUID as its GPU.
TEST(ExecTest, MigInstancesAreProbedWarnedOfAndBound) {
  TempDir root;
  write_dgx_h100(root.path());
  const std::string nvml = std::string("ACCO_NVML_LIBRARY=") + ACCO_FAKE_NVML_PATH +
                           " ACCO_FAKE_NVML_CONFIG=" + ACCO_SOURCE_DIR +
                           "/tests/data/nvml/dgx_h100_mig.json";
  const std::string sysroot = " --sysroot " + root.path().string() + " --nvml on";
  const auto text = acco("probe" + sysroot, nvml);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("off, on after reset"));
  EXPECT_THAT(text.out, HasSubstr("MIG instances (NVML)"));
  EXPECT_THAT(text.out,
              HasSubstr("0    1     2g.20gb  19.5 GiB  3   0   MIG-6a1e8c4b-0f2d-5b7a-93e5-"));
  EXPECT_THAT(text.out, HasSubstr("mig-pending-reset"));
  const auto json = acco("probe --json" + sysroot, nvml);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  expect_conforms(json.out, "probe.schema.json");
  const auto bound = acco("exec" + sysroot +
                              " --device MIG-6a1e8c4b-0f2d-5b7a-93e5-c8d1f6a2b491 --dry-run "
                              "--report json",
                          nvml);
  ASSERT_EQ(bound.exit_code, 0) << bound.err;
  const auto j = nlohmann::json::parse(bound.out);
  EXPECT_EQ(j["device"]["pci"], "0000:18:00.0");
  EXPECT_EQ(j["env"][1]["value"], "MIG-6a1e8c4b-0f2d-5b7a-93e5-c8d1f6a2b491");
}

TEST(ExecTest, BadInputIsOneLineWithItsExitCode) {
  TempDir root;
  write_dgx_h100(root.path());
  const std::string sysroot = " --sysroot " + root.path().string() + " --nvml off --report none ";
  const struct {
    std::string args;
    int code;
    std::string message;
  } cases[] = {
      {"exec" + sysroot + "-- true", 64, "acco: exec: give --device or --local-rank auto"},
      {"exec" + sysroot + "--device 0", 64, "the command to run is required after --"},
      {"exec" + sysroot + "--device 0 --bind some -- true", 64,
       "acco: --bind: 'some' is not one of auto, none"},
      {"exec" + sysroot + "--device 12 -- true", 66, "--device 12: no such GPU"},
      {"exec" + sysroot + "--device 0 -- /nonexistent/cmd", 127,
       "acco: exec: /nonexistent/cmd: command not found"},
      {"exec" + sysroot + "--device 0 -- /etc", 126, "acco: exec: /etc: Permission denied"},
  };
  for (const auto& c : cases) {
    const auto r = acco(c.args);
    EXPECT_EQ(r.exit_code, c.code) << c.args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message)) << c.args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.args << "\n" << r.err;
  }
}

// The job commands without a running queue, and with bad arguments (the queue itself runs for
// real in modules/monitor/test/jobs_test.cpp).
TEST(JobCommandsTest, BadInputAndNoDaemonAreOneLineWithTheirExitCodes) {
  TempDir dir;
  const std::string jobs = " --jobs-dir " + dir.path().string() + " ";
  const struct {
    std::string args;
    int code;
    std::string message;
  } cases[] = {
      {"jobs" + jobs, 69,
       "acco: jobs: no job queue running: " + dir.path().string() +
           "/daemon.json is missing (start acco serve --jobs"},
      {"submit" + jobs + "-- true", 69, "no job queue running"},
      {"submit" + jobs, 64, "acco: submit: the command to run is required after --"},
      {"submit" + jobs + "--gpus 0 -- true", 64, "acco: --gpus: '0' is not a whole number"},
      {"submit" + jobs + "--memory lots -- true", 64, "acco: --memory: 'lots' is not a size"},
      {"submit" + jobs + "--mig 3g -- true", 64, "acco: --mig: '3g' is not a MIG profile"},
      {"submit" + jobs + "--mig 1g.10gb --gpus 2 -- true", 64, "acco: --gpus excludes --mig"},
      {"submit" + jobs + "--mig 1g.10gb -- true", 69, "no job queue running"},
      {"submit" + jobs + "--memory-max x -- true", 64, "acco: --memory-max: 'x' is not a size"},
      {"submit" + jobs + "--io-weight 10001 -- true", 64,
       "acco: --io-weight: '10001' is not a whole number from 1 to 10000"},
      {"cancel" + jobs + "x", 64, "acco: ID: 'x' is not a job id"},
      {"logs" + jobs + "--daemon http://127.0.0.1:1 3", 69,
       "acco: logs: cannot read the job queue's token: " + dir.path().string() + "/token"},
  };
  for (const auto& c : cases) {
    const auto r = acco(c.args);
    EXPECT_EQ(r.exit_code, c.code) << c.args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message)) << c.args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.args << "\n" << r.err;
  }
  std::ofstream(dir.path() / "token") << "0123\n";
  const auto r = acco("logs" + jobs + "--daemon http://127.0.0.1:1 3");
  EXPECT_EQ(r.exit_code, 69);
  EXPECT_THAT(r.err, HasSubstr("acco: logs: cannot reach the job queue at "
                               "http://127.0.0.1:1/api/v1/jobs/3/logs: connection failed"));
}

}  // namespace
}  // namespace acco::testing
