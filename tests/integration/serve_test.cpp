// `acco serve` run for real: the daemon started as a process on 127.0.0.1, scraped over HTTP,
// its metrics checked with promtool, its dashboard loaded in headless Chromium, and stopped
// with SIGTERM.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "daemon.hpp"
#include "sqlite_scalar.hpp"
#include "sysroot_builder.hpp"

namespace acco::testing {
namespace {

namespace stdfs = std::filesystem;
using ::testing::HasSubstr;

// Runs acco to completion (for the flag errors).
struct Run {
  int exit_code = -1;
  std::string err;
};
Run run_serve(const std::string& args) {
  TempDir io;
  const std::string cmd =
      std::string(ACCO_BINARY) + " serve " + args + " >/dev/null 2>" + (io.path() / "err").string();
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(io.path() / "err")};
}

TEST(ServeTest, SimulatedDevicesAreServedAndSigtermStopsWithinASecond) {
  TempDir dir;
  const auto log = dir.path() / "events.jsonl";
  Daemon d(
      {"--simulate", "4", "--listen", "127.0.0.1:0", "--interval", "200ms", "--log", log.string()});
  ASSERT_GT(d.port(), 0) << d.early_stderr();
  EXPECT_THAT(d.early_stderr(), HasSubstr("4 device(s) (4 simulated)"));
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  const auto metrics = d.get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  for (int i = 0; i < 4; ++i) {
    EXPECT_THAT(metrics->body, HasSubstr("acco_gpu_up{device=\"" + std::to_string(i) + "\""));
  }
  EXPECT_THAT(metrics->body, HasSubstr("acco_host_cpu_seconds_total{mode=\"user\"}"));
  if (have("promtool")) {
    const auto file = dir.path() / "metrics.txt";
    std::ofstream(file) << metrics->body;
    const std::string cmd = "promtool check metrics < " + file.string() + " > " +
                            (dir.path() / "lint").string() + " 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << slurp(dir.path() / "lint");
  }
  const auto devices = d.get("/api/v1/devices");
  ASSERT_TRUE(devices);
  EXPECT_EQ(nlohmann::json::parse(devices->body)["devices"].size(), 4U);

  const auto ended = d.stop(SIGTERM);
  EXPECT_EQ(ended.exit_code, 0) << ended.err;
  EXPECT_LT(ended.seconds, 1.0);
  EXPECT_THAT(ended.out, HasSubstr("acco serve: stopped by SIGTERM after"));
  const auto lines = slurp(log);
  EXPECT_THAT(lines, HasSubstr("\"event\":\"serve_started\""));
  EXPECT_THAT(lines, HasSubstr("\"event\":\"device_found\""));
  EXPECT_THAT(lines, HasSubstr("\"event\":\"serve_stopped\""));
  std::istringstream in(lines);
  std::string line;
  while (std::getline(in, line)) {
    EXPECT_FALSE(nlohmann::json::parse(line, nullptr, false).is_discarded()) << line;
  }
}

TEST(ServeTest, SigintStopsTooAndDurationEndsOnItsOwn) {
  Daemon d({"--simulate", "1", "--listen", "127.0.0.1:0"});
  ASSERT_GT(d.port(), 0) << d.early_stderr();
  const auto ended = d.stop(SIGINT);
  EXPECT_EQ(ended.exit_code, 0);
  EXPECT_THAT(ended.out, HasSubstr("stopped by SIGINT"));
  const auto r = run_serve("--simulate 1 --listen 127.0.0.1:0 --duration 300ms");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(ServeTest, FakeNvmlGpusAreServedWithTheirIdentity) {
  Daemon d({"--listen", "127.0.0.1:0", "--nvml", "on"},
           {{"ACCO_NVML_LIBRARY", ACCO_FAKE_NVML_PATH},
            {"ACCO_FAKE_NVML_CONFIG",
             std::string(ACCO_SOURCE_DIR) + "/tests/data/nvml/telemetry.json"}});
  ASSERT_GT(d.port(), 0) << d.early_stderr();
  EXPECT_THAT(d.early_stderr(), HasSubstr("NVML on"));
  const auto metrics = d.get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(metrics->body, HasSubstr("pci_bus_id=\"0000:18:00.0\""));
  EXPECT_THAT(metrics->body, HasSubstr("model=\"NVIDIA H100 80GB HBM3\""));
  EXPECT_THAT(metrics->body, HasSubstr("acco_gpu_power_watts{"));
  EXPECT_EQ(d.stop(SIGTERM).exit_code, 0);
}

TEST(ServeTest, CompatDcgmAddsDcgmExporterSeries) {
  Daemon d({"--simulate", "1", "--listen", "127.0.0.1:0", "--compat", "dcgm"});
  ASSERT_GT(d.port(), 0) << d.early_stderr();
  const auto metrics = d.get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(metrics->body, HasSubstr("DCGM_FI_DEV_GPU_TEMP{"));
  EXPECT_THAT(metrics->body, HasSubstr("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{"));
  EXPECT_EQ(d.stop(SIGTERM).exit_code, 0);
}

TEST(ServeTest, BadFlagsAreOneLineAndExit64) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--interval 10ms", "--interval: '10ms' is not a duration from 100ms to 1h"},
      {"--interval soon", "--interval: 'soon' is not a duration"},
      {"--listen nowhere:port", "--listen: 'nowhere:port' is not HOST:PORT"},
      {"--simulate 100", "--simulate: '100' is not a device count from 0 to 64"},
      {"--scenario hot", "--scenario: 'hot' is not one of cycle, idle"},
      {"--compat prometheus", "--compat: 'prometheus' is not dcgm"},
      {"--duration -1s", "--duration: '-1s' is not a positive duration"},
  };
  for (const auto& [args, message] : cases) {
    const auto r = run_serve(args);
    EXPECT_EQ(r.exit_code, 64) << args;
    EXPECT_THAT(r.err, HasSubstr(message)) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(ServeTest, PortInUseIsExit69NamingTheAddress) {
  Daemon first({"--simulate", "1", "--listen", "127.0.0.1:0"});
  ASSERT_GT(first.port(), 0);
  const auto r =
      run_serve("--simulate 1 --duration 2s --listen 127.0.0.1:" + std::to_string(first.port()));
  EXPECT_EQ(r.exit_code, 69);
  EXPECT_THAT(r.err, HasSubstr("cannot listen on 127.0.0.1:" + std::to_string(first.port()) +
                               ": the port is in use"));
  EXPECT_EQ(first.stop(SIGTERM).exit_code, 0);
}

TEST(ServeTest, UnwritableLogIsExit73) {
  const auto r =
      run_serve("--simulate 1 --duration 1s --listen 127.0.0.1:0 --log /proc/no/such.jsonl");
  EXPECT_EQ(r.exit_code, 73);
  EXPECT_THAT(r.err, HasSubstr("cannot open the event log /proc/no/such.jsonl"));
}

TEST(ServeTest, StoreKeepsEveryRoundAndSigtermFlushesTheLastBatch) {
  TempDir dir;
  const auto file = dir.path() / "series.db";
  Daemon d({"--simulate", "2", "--listen", "127.0.0.1:0", "--interval", "100ms", "--store",
            file.string(), "--retention", "raw=2h,minute=30d"});
  ASSERT_GT(d.port(), 0) << d.early_stderr();
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  const auto metrics = d.get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(metrics->body, HasSubstr("# TYPE acco_store_points_total counter"));
  EXPECT_THAT(metrics->body, HasSubstr("acco_store_write_errors_total 0"));
  const auto series = d.get("/api/v1/series?name=power_watts&since=1&until=" +
                            std::to_string(std::numeric_limits<std::int64_t>::max()));
  ASSERT_TRUE(series);
  EXPECT_EQ(series->status, 200);
  EXPECT_EQ(nlohmann::json::parse(series->body)["series"].size(), 2U);
  const auto ended = d.stop(SIGTERM);
  EXPECT_EQ(ended.exit_code, 0) << ended.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(ended.out, m, std::regex("after ([0-9]+) round"))) << ended.out;
  const auto rounds = std::stoll(m[1]);
  const auto stored =
      sqlite_scalar(file,
                    "SELECT count(*) FROM points p JOIN series s ON s.id = p.series_id "
                    "WHERE s.name = 'power_watts' AND s.device = '0' AND p.resolution_seconds = 0");
  EXPECT_EQ(stored, rounds) << ended.out;  // every round, the partial last batch included
  EXPECT_GT(sqlite_scalar(file, "SELECT count(*) FROM series WHERE device = 'host'"), 0);
}

TEST(ServeTest, StoreFlagErrorsAreExit73And65And64) {
  const auto missing =
      run_serve("--simulate 1 --duration 1s --listen 127.0.0.1:0 --store /proc/no/such.db");
  EXPECT_EQ(missing.exit_code, 73);
  EXPECT_THAT(missing.err, HasSubstr("cannot open the series store /proc/no/such.db"));
  TempDir dir;
  const auto text = dir.path() / "notes.txt";
  std::ofstream(text) << std::string(200, 'x');
  const auto wrong =
      run_serve("--simulate 1 --duration 1s --listen 127.0.0.1:0 --store " + text.string());
  EXPECT_EQ(wrong.exit_code, 65);
  EXPECT_THAT(wrong.err, HasSubstr(text.string() + " is not an acco series store"));
  const auto retention = run_serve("--simulate 1 --duration 1s --listen 127.0.0.1:0 --store " +
                                   (dir.path() / "s.db").string() + " --retention hour=1h");
  EXPECT_EQ(retention.exit_code, 64);
  EXPECT_THAT(retention.err, HasSubstr("--retention"));
  const auto alone =
      run_serve("--simulate 1 --duration 1s --listen 127.0.0.1:0 --retention raw=1h");
  EXPECT_EQ(alone.exit_code, 64);
  EXPECT_THAT(alone.err, HasSubstr("--retention: applies to --store"));
}

// The dashboard in a real browser: the page loads from the daemon, fetches the API, draws four
// charts per device and updates, with no JavaScript error.
TEST(ServeTest, PeriodicProbeAndBenchAreServedAndLogged) {
  TempDir dir;
  const auto log = dir.path() / "events.jsonl";
  const auto history = dir.path() / "history.db";
  Daemon d({"--simulate", "1", "--scenario", "idle", "--listen", "127.0.0.1:0", "--probe-every",
            "1s", "--bench-every", "1s", "--history", history.string(), "--log", log.string()});
  ASSERT_GT(d.port(), 0) << d.early_stderr();
  // The first probe runs at start; the bench waits for idle devices and then its interval.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  nlohmann::json findings;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto r = d.get("/api/v1/findings");
    ASSERT_TRUE(r);
    findings = nlohmann::json::parse(r->body);
    if (findings["findings"].is_array() && slurp(log).find("bench_done") != std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_TRUE(findings["findings"].is_array()) << findings.dump();
  EXPECT_TRUE(findings.contains("time"));
  const auto ended = d.stop(SIGTERM);
  EXPECT_EQ(ended.exit_code, 0) << ended.err;
  const auto lines = slurp(log);
  EXPECT_THAT(lines, HasSubstr("\"event\":\"bench_done\""));
  EXPECT_TRUE(stdfs::exists(history));  // the quick bench's run was stored
  const auto bad = run_serve("--simulate 1 --probe-every 0s");
  EXPECT_EQ(bad.exit_code, 64);
  EXPECT_THAT(bad.err, HasSubstr("--probe-every: '0s' is not a duration from 1s to 7d"));
}

TEST(ServeTest, DashboardDrawsAndUpdatesInHeadlessChromium) {
  if (!have("chromium")) {
    GTEST_SKIP() << "chromium is not installed (Debian package chromium; scripts/install-deps "
                    "installs it)";
  }
  Daemon d({"--simulate", "2", "--listen", "127.0.0.1:0", "--interval", "200ms"});
  ASSERT_GT(d.port(), 0) << d.early_stderr();
  TempDir dir;
  const std::string url = "http://127.0.0.1:" + std::to_string(d.port()) + "/";
  const auto shot = stdfs::path(ACCO_ARTIFACT_DIR) / "dashboard.png";
  stdfs::create_directories(shot.parent_path());
  const std::string flags =
      "--headless --no-sandbox --disable-gpu --disable-dev-shm-usage "
      "--user-data-dir=" +
      (dir.path() / "profile").string() +
      " --window-size=1280,900 --virtual-time-budget=6000 "
      "--enable-logging=stderr --v=0 ";
  const std::string dom_cmd = "timeout 120 chromium " + flags + "--dump-dom " + url + " > " +
                              (dir.path() / "dom.html").string() + " 2> " +
                              (dir.path() / "console.txt").string();
  ASSERT_EQ(std::system(dom_cmd.c_str()), 0) << slurp(dir.path() / "console.txt");
  const std::string dom = slurp(dir.path() / "dom.html");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      dom, m,
      std::regex(
          "<body data-updates=\"([0-9]+)\" data-charts=\"([0-9]+)\" data-error=\"([^\"]*)\"")))
      << dom.substr(0, 2000);
  EXPECT_GE(std::stoi(m[1]), 2);  // it refreshed, not only loaded
  EXPECT_EQ(std::stoi(m[2]), 8);  // 4 charts x 2 devices
  EXPECT_EQ(m[3].str(), "");
  EXPECT_THAT(dom, HasSubstr("device 1: acco simulated H100-class 700 W"));
  EXPECT_THAT(dom, ::testing::Not(HasSubstr("not checked yet")));  // the findings panel filled
  const std::string console = slurp(dir.path() / "console.txt");
  EXPECT_THAT(console, ::testing::Not(HasSubstr("Uncaught")));
  EXPECT_THAT(console, ::testing::Not(HasSubstr("SyntaxError")));
  const std::string shot_cmd = "timeout 120 chromium " + flags + "--screenshot=" + shot.string() +
                               " " + url + " > /dev/null 2>&1";
  EXPECT_EQ(std::system(shot_cmd.c_str()), 0);
  EXPECT_TRUE(stdfs::exists(shot));
  EXPECT_EQ(d.stop(SIGTERM).exit_code, 0);
}

}  // namespace
}  // namespace acco::testing
