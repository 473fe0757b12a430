// `acco record` and `acco analyze` run as a user would: recordings of the simulated device's
// scripted loads get their verdicts, JSON conforms to docs/schemas/analyze.schema.json, and bad
// input is one line with its exit code.
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "acco/testing/files.hpp"
#include "acco/testing/json_schema.hpp"

#include "run_acco.hpp"
#include "sysroot_builder.hpp"

namespace acco::testing {
namespace {

namespace stdfs = std::filesystem;
using ::testing::HasSubstr;

std::string replace_all_in(std::string s, const std::string& from, const std::string& to) {
  for (auto pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) {
    s.replace(pos, from.size(), to);
  }
  return s;
}

std::string recorded(const std::string& name) {
  return (stdfs::path(ACCO_SOURCE_DIR) / "tests/data/recorded" / name).string();
}

TEST(AnalyzeCliTest, EachScriptedScenarioGetsItsVerdict) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"idle.jsonl", "mostly idle"},
      {"transfer-bound.jsonl", "mostly pcie"},
      {"power-capped.jsonl", "mostly power_cap"},
      {"thermal-throttle.jsonl", "mostly thermal"},
      {"compute.jsonl", "mostly compute"},
  };
  for (const auto& [file, verdict] : cases) {
    const auto r = acco("analyze " + recorded(file));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr(verdict)) << file;
  }
}

TEST(AnalyzeCliTest, JsonConformsToTheSchema) {
  const auto r = acco("analyze --json " + recorded("thermal-throttle.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "analyze.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["devices"][0]["dominant"], "thermal");
}

TEST(AnalyzeCliTest, RecordFastThenAnalyzeRoundTrips) {
  TempDir dir;
  const auto file = (dir.path() / "run.jsonl").string();
  const auto rec =
      acco("record --simulate 2 --scenario transfer-bound --fast --duration 45s --out " + file);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  EXPECT_THAT(rec.out, HasSubstr("45 round(s) written to " + file));
  EXPECT_FALSE(stdfs::exists(file + ".partial"));
  const auto r = acco("analyze " + file + " --device 1 --window 15s");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("1 device(s), windows of 15.00 s"));
  EXPECT_THAT(r.out, HasSubstr("Device 1: "));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("Device 0: ")));
}

TEST(AnalyzeCliTest, ScheduleTraceIdleGapsAreAttributed) {
  TempDir dir;
  const auto trace = (dir.path() / "trace.json").string();
  const auto sched = acco("schedule --workload cholesky --tiles 4 --policy dmda --trace " + trace);
  ASSERT_EQ(sched.exit_code, 0) << sched.err;
  const auto r = acco("analyze " + trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("acco trace of policy dmda"));
  EXPECT_THAT(r.out, HasSubstr("IDLE WITH TRANSFER IN"));
  const auto j = acco("analyze --json " + trace);
  ASSERT_EQ(j.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(j.out)["schema"], "acco.analyze-trace/1");
  // A trace has no device indices and no wall clock: the recording's filters are refused, not
  // ignored.
  const auto filtered = acco("analyze " + trace + " --device 5 --window 10s");
  EXPECT_EQ(filtered.exit_code, 64);
  EXPECT_THAT(filtered.err, HasSubstr(": --device, --window apply to recordings; this file is a "
                                      "Chrome trace"));
  EXPECT_EQ(filtered.out, "");
}

TEST(AnalyzeCliTest, LiveRecordingHasHostReadings) {
  TempDir dir;
  const auto file = (dir.path() / "live.jsonl").string();
  const auto rec = acco("record --simulate 1 --interval 200ms --duration 1s --out " + file);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const auto first = slurp(file).substr(0, slurp(file).find('\n'));
  EXPECT_THAT(first, HasSubstr("\"host\":{"));
  EXPECT_THAT(acco("analyze " + file).out, ::testing::Not(HasSubstr("no host readings")));
}

TEST(AnalyzeCliTest, BadInputIsOneLineWithItsExitCode) {
  TempDir dir;
  const auto broken = dir.path() / "broken.jsonl";
  std::ofstream(broken) << "{\"time_unix_nanos\": 1, \"devices\": []}\nnope\n{}\n";
  const std::vector<std::tuple<std::string, int, std::string>> cases = {
      {"analyze /no/such.jsonl", 66, "/no/such.jsonl: no such file"},
      {"analyze " + broken.string(), 65, broken.string() + ":2: not a JSON object"},
      {"analyze " + recorded("idle.jsonl") + " --since yesterday", 64,
       "--since: 'yesterday' is not a time"},
      {"analyze " + recorded("idle.jsonl") + " --window 0s", 64,
       "--window: '0s' is not a duration"},
      {"analyze", 64, "input is required"},
      {"record --duration 1s --simulate 1", 64, "--out: the file to record into is required"},
      {"record --out x.jsonl --simulate 1", 64, "--duration: '' is not a positive duration"},
      {"record --out x.jsonl --duration 1s --fast", 64, "--fast runs simulated devices"},
      {"record --out x.jsonl --duration 300d --interval 100ms --simulate 1 --fast", 64,
       "--fast: --duration / --interval is more than a million rounds"},
      {"record --out /proc/no/x.jsonl --duration 1s --simulate 1", 73,
       "cannot write the recording /proc/no/x.jsonl"},
  };
  for (const auto& [args, code, message] : cases) {
    const auto r = acco(args);
    EXPECT_EQ(r.exit_code, code) << args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(message)) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
  }
}

// Logs in the formats people have, generated here from nvidia-smi's and dcgm-exporter's
// documented layouts (never copies of third-party logs), each with the verdict a person reading
// it would give.
struct RealLog {
  const char* name;
  std::string (*write)();
  std::vector<std::string> expected;  // in the text report
};

std::string stamp(int ms) {
  return fmt::format("2026/12/01 16:{:02}:{:02}.{:03}", 25 + (24 + ms / 1000) / 60,
                     (24 + ms / 1000) % 60, ms % 1000);
}

// One H100 sampled every 15 ms (nvidia-smi -lms 15) without index, uuid or pci.bus_id: 30 s of
// compute, then 30 s held by the power cap (active reasons 0x...04, SM clock 200 MHz down).
std::string one_gpu_15ms() {
  std::string out =
      "timestamp, name, utilization.gpu [%], power.draw [W], power.limit [W], "
      "clocks.current.sm [MHz], clocks.max.sm [MHz], clocks_event_reasons.active\n";
  for (int ms = 0; ms < 60'000; ms += 15) {
    const bool capped = ms >= 30'000;
    out += fmt::format("{}, NVIDIA H100 80GB HBM3, 99 %, {} W, 700.00 W, {} MHz, 1980 MHz, {}\n",
                       stamp(ms), capped ? "692.10" : "540.00", capped ? 1780 : 1980,
                       capped ? "0x0000000000000004" : "0x0000000000000000");
  }
  return out;
}

// Two GPUs without an id column, rows alternating, nounits, the older clocks_throttle_reasons
// names, "[N/A]" memory temperatures: told apart by their serials.
std::string two_gpus_alternating() {
  std::string out =
      "timestamp, name, serial, memory.total [MiB], utilization.gpu [%], "
      "utilization.memory [%], temperature.memory, power.draw [W], "
      "clocks_throttle_reasons.sw_power_cap, clocks_throttle_reasons.sw_thermal_slowdown\n";
  for (int s = 0; s < 40; ++s) {
    out += fmt::format(
        "{}, NVIDIA A100-SXM4-80GB, 1562720000001, 81920, 97, 20, [N/A], 310.5, "
        "Not Active, Not Active\n",
        stamp(s * 1000));
    out += fmt::format(
        "{}, NVIDIA A100-SXM4-80GB, 1562720000002, 81920, 0, 0, [N/A], 61.0, "
        "Not Active, Not Active\n",
        stamp(s * 1000));
  }
  return out;
}

// An H800 at 692 W of 700 W with its memory busy, the SW power cap bit set in every busy row.
std::string h800_power_cap() {
  std::string out =
      "timestamp, index, name, pci.bus_id, utilization.gpu [%], utilization.memory [%], "
      "power.draw [W], enforced.power.limit [W], clocks.sm [MHz], "
      "clocks_event_reasons.active\n";
  for (int s = 0; s < 60; ++s) {
    out += fmt::format(
        "{}, 0, NVIDIA H800, 00000000:18:00.0, 100 %, 72 %, 692.40 W, 700.00 W, "
        "{} MHz, 0x0000000000000004\n",
        stamp(s * 1000), s % 2 == 0 ? 1755 : 1740);
  }
  return out;
}

// dcgm-exporter scrapes where GPU 0 has only its power limit and replay counter and GPU 1
// computes; no PCIe families.
std::string dcgm_missing_families() {
  std::string out;
  for (int s = 0; s < 40; ++s) {
    out += fmt::format("# acco-scrape {}\n", 1'796'142'324'000LL + s * 1000LL);
    out +=
        "DCGM_FI_DEV_POWER_MGMT_LIMIT{gpu=\"0\",UUID=\"GPU-0\"} 700\n"
        "DCGM_FI_DEV_PCIE_REPLAY_COUNTER{gpu=\"0\",UUID=\"GPU-0\"} 0\n"
        "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-1\"} 98\n"
        "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"GPU-1\"} 512.5\n"
        "DCGM_FI_DEV_POWER_MGMT_LIMIT{gpu=\"1\",UUID=\"GPU-1\"} 700\n"
        "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{gpu=\"1\",UUID=\"GPU-1\"} 0\n";
  }
  return out;
}

// dcgm-exporter on two A100s in MIG mode (no DCGM_FI_DEV_GPU_UTIL): GPU 0 held by the power
// cap, GPU 1 with nothing that tells its load.
std::string dcgm_mig() {
  std::string out;
  for (int s = 0; s < 30; ++s) {
    for (int gpu = 0; gpu < 2; ++gpu) {
      for (int id = 1; id <= 2; ++id) {
        const auto labels = fmt::format(
            "gpu=\"{}\",UUID=\"GPU-a{}\",pci_bus_id=\"00000000:{}:00.0\",modelName=\"NVIDIA "
            "A100-SXM4-80GB\",GPU_I_PROFILE=\"3g.40gb\",GPU_I_ID=\"{}\"",
            gpu, gpu, gpu == 0 ? "07" : "0F", id);
        out += fmt::format("DCGM_FI_DEV_POWER_USAGE{{{}}} {}\n", labels, gpu == 0 ? 398 : 90);
        out += fmt::format("DCGM_FI_DEV_POWER_MGMT_LIMIT{{{}}} 400\n", labels);
        out += fmt::format("DCGM_FI_DEV_SM_CLOCK{{{}}} {}\n", labels, gpu == 0 ? 1275 : 1410);
        out +=
            fmt::format("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{{{}}} {}\n", labels, gpu == 0 ? 4 : 0);
        out += fmt::format("DCGM_FI_DEV_FB_USED{{{}}} {}\n", labels, 10000 * id);
        out +=
            fmt::format("DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{}}} {}\n", labels, gpu == 0 ? 0.9 : 0.0);
      }
    }
  }
  return out;
}

// `nvidia-smi dmon -s pucv -d 5 -o DT` on two GPUs: GPU 0 power capped, GPU 1 idle.
std::string dmon_log() {
  std::string out =
      "$ nvidia-smi dmon -s pucv -d 5 -o DT\n"
      "#Date       Time        gpu    pwr  gtemp  mtemp     sm    mem    enc    dec   mclk   "
      "pclk  pviol  tviol\n"
      "#YYYYMMDD   HH:MM:SS    Idx      W      C      C      %      %      %      %    MHz    "
      "MHz      %   bool\n";
  for (int s = 0; s < 12; ++s) {
    const int t = 24 + 5 * s;
    const auto time = fmt::format("16:{:02}:{:02}", 25 + t / 60, t % 60);
    out += fmt::format(
        " 20261201   {}      0    692     71      -    100     35      0      0   "
        "2619   1755    100      0\n",
        time);
    out += fmt::format(
        " 20261201   {}      1     70     35      -      0      0      0      0   "
        "2619    345      0      0\n",
        time);
  }
  return out;
}

// `nvidia-smi -q -d PERFORMANCE,UTILIZATION -l 10`: thermal slowdown active now, and counters
// that only say how long the clocks were held since the driver loaded.
std::string query_log() {
  std::string out;
  for (int s = 0; s < 4; ++s) {
    out += fmt::format(
        "\n==============NVSMI LOG==============\n\n"
        "Timestamp                                 : Tue Dec  1 16:25:{:02} 2026\n"
        "Driver Version                            : 550.54.15\n\n"
        "Attached GPUs                             : 1\n"
        "GPU 00000000:18:00.0\n"
        "    Performance State                     : P0\n"
        "    Clocks Event Reasons\n"
        "        Idle                              : Not Active\n"
        "        SW Power Cap                      : Not Active\n"
        "        HW Slowdown                       : Active\n"
        "            HW Thermal Slowdown           : Active\n"
        "            HW Power Brake Slowdown       : Not Active\n"
        "        SW Thermal Slowdown               : Active\n"
        "    Clocks Event Reasons Counters\n"
        "        SW Power Capping                  : 123456789 us\n"
        "        HW Thermal Slowdown               : {} us\n"
        "    Utilization\n"
        "        Gpu                               : 100 %\n"
        "        Memory                            : 30 %\n",
        20 + 10 * s, 1'000'000 + 9'000'000LL * s);
  }
  return out;
}

class RealLogTest : public ::testing::TestWithParam<RealLog> {};

TEST_P(RealLogTest, OneDevicePerGpuAndTheVerdictAPersonWouldGive) {
  TempDir dir;
  const auto file = dir.path() / GetParam().name;
  std::ofstream(file) << GetParam().write();
  const auto r = acco("analyze " + file.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& line : GetParam().expected) {
    EXPECT_THAT(r.out, HasSubstr(line)) << r.out;
  }
  const std::string text = replace_all_in(r.out, dir.path().string(), "<DIR>");
  expect_golden(std::string("analyze.log.") + GetParam().name + ".txt", text);
  const auto json = acco("analyze --json " + file.string());
  ASSERT_EQ(json.exit_code, 0) << json.err;
  expect_conforms(json.out, "analyze.schema.json");
}

INSTANTIATE_TEST_SUITE_P(
    Formats, RealLogTest,
    ::testing::Values(
        RealLog{"smi-15ms-one-gpu.csv",
                one_gpu_15ms,
                {"1 device(s)", "local time, zone unknown", "compute", "power_cap",
                 "1 GPU: no index, uuid or pci.bus_id column"}},
        RealLog{"smi-alternating.csv",
                two_gpus_alternating,
                {"2 device(s)", "2 GPU(s) told apart by name, serial, memory.total", "mostly idle",
                 "mostly compute"}},
        RealLog{"smi-h800-power-cap.csv",
                h800_power_cap,
                {"1 device(s)", "mostly power_cap (power_cap 100%)"}},
        RealLog{"dcgm-missing-families.prom",
                dcgm_missing_families,
                {"2 device(s)", "mostly unknown", "PCIe not recorded"}},
        RealLog{"dcgm-mig.prom",
                dcgm_mig,
                {"2 device(s)", "MIG instance 1 (3g.40gb)", "mostly power_cap", "mostly unknown"}},
        RealLog{"dmon.log", dmon_log, {"2 device(s)", "mostly power_cap", "mostly idle"}},
        RealLog{"q-performance.txt", query_log, {"1 device(s)", "mostly thermal"}}),
    [](const ::testing::TestParamInfo<RealLog>& param) {
      std::string n = param.param.name;
      for (char& c : n) {
        c = std::isalnum(static_cast<unsigned char>(c)) != 0 ? c : '_';
      }
      return n;
    });

TEST(AnalyzeCliTest, DmonIntervalFlagAndItsBadValue) {
  TempDir dir;
  const auto file = dir.path() / "dmon.log";
  std::ofstream(file) << "# gpu pwr sm\n# Idx W %\n 0 300 97\n 0 301 98\n 0 302 99\n";
  const auto r = acco("analyze --interval 10s " + file.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("3 round(s) over 20.00 s"));
  const auto bad = acco("analyze --interval soon " + file.string());
  EXPECT_EQ(bad.exit_code, 64);
  EXPECT_THAT(bad.err, HasSubstr("--interval: 'soon' is not a duration"));
}

// A GPU name and a file name that are not UTF-8: the name is kept escaped (\xff), the path in
// "input" replaced by U+FFFD, and --json is still a document, never an internal error.
TEST(AnalyzeCliTest, BytesThatAreNotUtf8AreEscapedInTextAndJson) {
  TempDir dir;
  const auto file = dir.path() / "run\xff.csv";
  std::ofstream(file) << "timestamp, name, utilization.gpu [%]\n"
                         "2026/12/01 16:00:00.000, H\xff\xfe, 100 %\n"
                         "2026/12/01 16:00:01.000, H\xff\xfe, 100 %\n";
  const auto json = acco("analyze --json '" + file.string() + "'");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc.at("input"), dir.path().string() + "/run\xef\xbf\xbd.csv");
  EXPECT_THAT(json.out, HasSubstr("H\\\\xff\\\\xfe"));
  const auto text = acco("analyze '" + file.string() + "'");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("H\\xff\\xfe"));
}

}  // namespace
}  // namespace acco::testing
