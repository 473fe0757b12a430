// `acco bench --backend cuda` and `acco doctor` on the fake CUDA driver (tests/fake_cuda): every
// transfer case measured on every GPU, the driver's version and the highest CUDA version it
// supports reported by bench, doctor and probe; JSON conforms to docs/schemas/. Without a driver
// the backend is unavailable with one line and exit 69, and probe says why. A GPU lost in the
// middle of a case fails that case with the driver's error (exit 1) instead of hanging the run,
// and a second SIGINT or SIGTERM ends a run whose case does not finish at once.
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "machines.hpp"
#include "run_acco.hpp"

namespace acco::testing {
namespace {

using ::testing::HasSubstr;

class FakeCudaCliTest : public ::testing::Test {
 protected:
  // Two GPUs that reach each other, at the PCI addresses of the dgx_h100 sysroot's first two.
  [[nodiscard]] static std::string env() {
    return "ACCO_CUDA_LIBRARY=" + std::string(ACCO_FAKE_CUDA_PATH) +
           " ACCO_FAKE_CUDA_CONFIG=" + ACCO_SOURCE_DIR + "/tests/data/cuda/two_h100.json";
  }

  // One H100 whose copies move `bytes_per_second`, and `extra` JSON fields (an injected error);
  // the environment that points the fake driver at it.
  [[nodiscard]] std::string slow_gpu(double bytes_per_second, const std::string& extra = "") const {
    const std::string config = (dir_.path() / "slow_gpu.json").string();
    std::ofstream(config)
        << R"({"driver_version": 12080, )" << extra
        << R"("devices": [{"name": "NVIDIA H100 80GB HBM3", "pci": "0000:18:00.0",)"
        << R"( "memory_bytes": 85520809984, "copy_bytes_per_second": )" << bytes_per_second
        << R"(, "pageable_bytes_per_second": )" << bytes_per_second << "}]}";
    return "ACCO_CUDA_LIBRARY=" + std::string(ACCO_FAKE_CUDA_PATH) +
           " ACCO_FAKE_CUDA_CONFIG=" + config;
  }

  // `sh -c script` in the test's directory, with `$ACCO` the binary and `env` set; its exit
  // status as a shell reports it (128 + N for a process killed by signal N), and how long it took.
  struct Timed {
    acco::testing::Run run;
    double seconds = 0;
  };
  [[nodiscard]] Timed sh(const std::string& script, const std::string& env) const {
    const auto start = std::chrono::steady_clock::now();
    const std::string cmd =
        "cd " + dir_.path().string() + " && env -u ACCO_NVML -u ACCO_NVML_LIBRARY " + env +
        " ACCO=" + ACCO_BINARY + " sh -c '" + script + "' >" + (dir_.path() / "sh.out").string() +
        " 2>" + (dir_.path() / "sh.err").string();
    const int status = std::system(cmd.c_str());
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    return {{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir_.path() / "sh.out"),
             slurp(dir_.path() / "sh.err")},
            took.count()};
  }

  TempDir dir_;
};

// The transfer suite's case keys, as `acco bench --list` names them.
std::set<std::string> transfer_cases() {
  const acco::testing::Run list = acco("bench --list");
  EXPECT_EQ(list.exit_code, 0) << list.err;
  std::set<std::string> keys;
  std::istringstream lines(list.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("[--suite") == std::string::npos && !line.empty()) {
      keys.insert(line.substr(0, line.find(' ')));
    }
  }
  return keys;
}

TEST_F(FakeCudaCliTest, BenchMeasuresEveryTransferCaseOnEveryGpu) {
  const acco::testing::Run run =
      acco("bench --backend cuda --quick --bytes 4MiB --reps 2 --no-history --json", env());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  expect_conforms(run.out, "bench.schema.json");
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["machine"]["backend"], "cuda");
  EXPECT_EQ(j["machine"]["cuda_driver_version"], 12080);
  EXPECT_EQ(j["machine"]["cuda_version"], "12.8");
  std::set<std::string> measured;
  std::set<std::string> gpus;
  for (const auto& r : j["results"]) {
    EXPECT_EQ(r["status"], "ok") << r.dump();
    std::string key = r["case"].get<std::string>();
    if (key.rfind("bidir_pinned_", 0) == 0) {
      key = "bidir_pinned";  // one result per direction
    }
    measured.insert(key);
    gpus.insert(r["device"].get<std::string>());
  }
  EXPECT_EQ(measured, transfer_cases());
  EXPECT_TRUE(gpus.count("0000:18:00.0") && gpus.count("0000:2a:00.0"));
  EXPECT_TRUE(gpus.count("0000:18:00.0->0000:2a:00.0") && gpus.count("0000:2a:00.0->0000:18:00.0"));
}

// The GPU is lost at the 21st asynchronous copy, in the middle of the engine's pipelined 256 MiB
// (each 4 MiB chunk's DMA takes 20 ms, so every staging slot is in flight): the case fails with
// the driver's error naming the device, the run ends (exit 1) instead of waiting for ever for a
// slot (`timeout` turns a hang into exit 137).
TEST_F(FakeCudaCliTest, AGpuLostMidCopyFailsTheCaseInsteadOfHanging) {
  const Timed t =
      sh("timeout -s KILL 120 $ACCO bench --backend cuda --cases h2d_pageable_engine "
         "--bytes 256MiB --no-history",
         slow_gpu(2e8, R"("copy_error": {"after": 20, "error": 700}, )"));
  EXPECT_EQ(t.run.exit_code, 1) << t.run.err;
  EXPECT_THAT(t.run.out, HasSubstr("h2d_pageable_engine  0000:18:00.0  error: device error: "));
  EXPECT_THAT(t.run.out, HasSubstr("cuda device 0: queue copy: cuMemcpyAsync: an illegal memory "
                                   "access was encountered (CUDA_ERROR_ILLEGAL_ADDRESS)"));
  EXPECT_THAT(t.run.err, HasSubstr("acco: 1 case(s) failed; the results say why\n"));
}

// A copy that takes a minute (1 MB/s): the first signal asks the run to stop after the case and
// says so at once; the second ends the process there, killed by that signal.
TEST_F(FakeCudaCliTest, ASecondSignalEndsARunWhoseCaseDoesNotFinish) {
  for (const auto& [name, code] : {std::pair{"INT", 130}, std::pair{"TERM", 143}}) {
    const std::string wait_for = R"(i=0; until grep -q "%s" err || [ $i -ge 300 ]; do sleep 0.1; )"
                                 R"(i=$((i+1)); done; )";
    const auto waiting = [&](const std::string& text) {
      std::string script = wait_for;
      script.replace(script.find("%s"), 2, text);
      return script;
    };
    const Timed t =
        sh("rm -f out err; $ACCO bench --backend cuda --cases h2d_pinned_plain --bytes 64MiB "
           "--no-history >out 2>err & pid=$!; " +
               waiting("h2d_pinned_plain on") + "kill -" + name + " $pid; " +
               waiting("again to stop at once") + "kill -" + name + " $pid; wait $pid",
           slow_gpu(1e6));
    const std::string err = slurp(dir_.path() / "err");
    EXPECT_EQ(t.run.exit_code, code) << name << ": " << err;
    EXPECT_LT(t.seconds, 40) << name << ": the case itself takes over a minute";
    EXPECT_THAT(err, HasSubstr(std::string("acco: SIG") + name +
                               ": finishing the current case, then stopping (again to stop at "
                               "once)\n"));
    EXPECT_EQ(slurp(dir_.path() / "out"), "") << name;
  }
}

TEST_F(FakeCudaCliTest, BenchAndDoctorNameTheDriverAndItsCudaVersion) {
  const acco::testing::Run bench = acco(
      "bench --backend cuda --quick --bytes 1MiB --reps 2 --no-history "
      "--cases h2d_pinned_plain",
      env());
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  EXPECT_THAT(bench.out, HasSubstr("CUDA driver 12080 (supports CUDA 12.8)\n"));
  const acco::testing::Run doctor = acco("doctor --json", env());
  ASSERT_EQ(doctor.exit_code, 0) << doctor.err;
  const auto j = nlohmann::json::parse(doctor.out);
  EXPECT_EQ(j["quick_bench"]["note"],
            "pinned and pageable copies on every GPU, 64 MiB, 3 samples (CUDA driver 12080, "
            "supports CUDA 12.8)");
  EXPECT_EQ(j["quick_bench"]["results"].size(), 8U);  // four cases on two GPUs
}

// The storage reader's file -> GPU path on the fake driver: io_uring reads into pinned staging,
// the engine's copies into device memory, checked there, beside the naive read-then-copy.
TEST_F(FakeCudaCliTest, StorageReadsLandInGpuMemory) {
  const std::string file = (dir_.path() / "data.bin").string();
  const acco::testing::Run run = acco("bench --suite storage --backend cuda --file " + file +
                                          " --create 16MiB --quick --no-history --cases "
                                          "storage_to_device --json",
                                      env());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  expect_conforms(run.out, "bench.schema.json");
  const auto j = nlohmann::json::parse(run.out);
  std::set<std::string> cases;
  for (const auto& r : j["results"]) {
    EXPECT_EQ(r["status"], "ok") << r.dump();
    EXPECT_EQ(r["device"], "0000:18:00.0");
    EXPECT_GT(r["median_bytes_per_second"].get<double>(), 0);
    cases.insert(r["case"].get<std::string>());
  }
  EXPECT_EQ(cases, (std::set<std::string>{"storage_h2d", "storage_h2d_naive"}));
}

TEST_F(FakeCudaCliTest, ProbeOfTheLiveMachineNamesTheDriver) {
  const acco::testing::Run json = acco("probe --json", env());
  ASSERT_EQ(json.exit_code, 0) << json.err;
  expect_conforms(json.out, "probe.schema.json");
  const auto driver = nlohmann::json::parse(json.out)["cuda_driver"];
  EXPECT_EQ(driver["library"], ACCO_FAKE_CUDA_PATH);
  EXPECT_EQ(driver["version"], 12080);
  EXPECT_EQ(driver["cuda_version"], "12.8");
  EXPECT_EQ(driver["device_count"], 2);
  EXPECT_TRUE(driver["error"].is_null());
  const acco::testing::Run text = acco("probe", env());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("CUDA driver: 12080 (supports CUDA 12.8), 2 devices, " +
                                  std::string(ACCO_FAKE_CUDA_PATH) + "\n"));
}

TEST(CudaCliTest, ProbeSaysWhyNoDriverIsUsableAndNothingForASysroot) {
  const acco::testing::Run live =
      acco("probe --json", "ACCO_CUDA_LIBRARY=/nonexistent/libcuda.so.1");
  ASSERT_EQ(live.exit_code, 0) << live.err;
  expect_conforms(live.out, "probe.schema.json");
  const auto driver = nlohmann::json::parse(live.out)["cuda_driver"];
  EXPECT_TRUE(driver["version"].is_null());
  EXPECT_THAT(driver["error"].get<std::string>(),
              HasSubstr("/nonexistent/libcuda.so.1: cannot be loaded"));
  TempDir sysroot;
  write_dgx_h100(sysroot.path());
  const acco::testing::Run other = acco("probe --json --sysroot " + sysroot.path().string());
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_FALSE(nlohmann::json::parse(other.out).contains("cuda_driver"));
}

TEST(CudaCliTest, WithoutADriverTheCudaBackendIsOneLineAndExit69) {
  const acco::testing::Run run = acco("bench --backend cuda --quick --no-history",
                                      "ACCO_CUDA_LIBRARY=/nonexistent/libcuda.so.1");
  EXPECT_EQ(run.exit_code, 69);
  EXPECT_THAT(run.err, HasSubstr("cuda: /nonexistent/libcuda.so.1: cannot be loaded, no NVIDIA "
                                 "driver installed?"));
}

}  // namespace
}  // namespace acco::testing
