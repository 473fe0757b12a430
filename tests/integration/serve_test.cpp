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
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
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

// kill -9 of the daemon at points spread over its start and its store's batches (a fixed seed),
// six times over the same store and event log: each start opens them, SQLite finds the store
// intact, no stored point is lost, and every start's first event is a line of its own.
TEST(ServeTest, AKillDashNineAtAnyPointLeavesTheStoreAndTheLogWhole) {
  TempDir dir;
  const auto store = dir.path() / "series.db";
  const auto log = dir.path() / "events.jsonl";
  std::mt19937 random(20261206);
  std::uniform_int_distribution<int> delay_ms(0, 1200);
  std::int64_t stored = 0;
  constexpr int kStarts = 6;
  for (int i = 0; i < kStarts; ++i) {
    // The last one after a few batches at least (5 rounds of 100 ms each).
    const int ms = delay_ms(random) + (i == kStarts - 1 ? 2000 : 0);
    Daemon d({"--simulate", "2", "--listen", "127.0.0.1:0", "--interval", "100ms", "--store",
              store.string(), "--log", log.string()});
    ASSERT_GT(d.port(), 0) << "start " << i << ": " << d.early_stderr();
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    (void)d.stop(SIGKILL);
    EXPECT_EQ(sqlite_scalar(store,
                            "SELECT count(*) FROM pragma_integrity_check "
                            "WHERE integrity_check != 'ok'"),
              0)
        << "killed after " << ms << " ms";
    const auto points = sqlite_scalar(store, "SELECT count(*) FROM points");
    EXPECT_GE(points, stored) << "killed after " << ms << " ms: stored points were lost";
    stored = points;
  }
  EXPECT_GT(stored, 0);
  std::istringstream in(slurp(log));
  int started = 0;
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    started += !j.is_discarded() && j.value("event", "") == "serve_started" ? 1 : 0;
  }
  EXPECT_EQ(started, kStarts) << slurp(log);
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

// The page as headless Chromium leaves it: the DOM after `budget_ms` of virtual time (with the
// console on stderr), and optionally a screenshot of `window`.
struct LoadedPage {
  int exit_code = -1;
  std::string dom;
  std::string console;
};
LoadedPage load_in_chromium(const TempDir& dir, int port, int budget_ms) {
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/";
  const std::string cmd =
      "timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage "
      "--user-data-dir=" +
      (dir.path() / "profile").string() +
      " --window-size=1280,1600 --virtual-time-budget=" + std::to_string(budget_ms) +
      " --enable-logging=stderr --v=0 --dump-dom " + url + " > " +
      (dir.path() / "dom.html").string() + " 2> " + (dir.path() / "console.txt").string();
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir.path() / "dom.html"),
          slurp(dir.path() / "console.txt")};
}

// The value of `<body data-NAME="...">`; nullopt when the body has no such attribute.
std::optional<std::string> body_attribute(const std::string& dom, const std::string& name) {
  std::smatch m;
  const std::regex body("<body[^>]*\\sdata-" + name + "=\"([^\"]*)\"");
  if (!std::regex_search(dom, m, body)) {
    return std::nullopt;
  }
  return m[1].str();
}

// Each `<div class="chart" ...>` element's text up to the next chart or the end of its grid.
std::vector<std::string> chart_blocks(const std::string& dom) {
  std::vector<std::string> blocks;
  const std::string open = "<div class=\"chart\"";
  for (auto at = dom.find(open); at != std::string::npos;) {
    const auto next = dom.find(open, at + open.size());
    const auto grid_end = dom.find("</ul></div>", at);
    const auto end = std::min(next, grid_end == std::string::npos ? next : grid_end + 5);
    blocks.push_back(dom.substr(at, end == std::string::npos ? std::string::npos : end - at));
    at = next;
  }
  return blocks;
}

std::string first_match(const std::string& text, const std::string& pattern) {
  std::smatch m;
  return std::regex_search(text, m, std::regex(pattern)) ? m[1].str() : std::string();
}

// The console lines that report a script error ("Uncaught TypeError: ...", a resource that
// failed to load), among Chromium's own log lines; empty when none.
std::string console_errors(const std::string& console) {
  std::string out;
  std::istringstream in(console);
  for (std::string line; std::getline(in, line);) {
    if (line.find(":CONSOLE") != std::string::npos &&
        (line.find("Uncaught") != std::string::npos || line.find("Error") != std::string::npos ||
         line.find("Failed") != std::string::npos)) {
      out += line + "\n";
    }
  }
  return out;
}

// The page collects every error and unhandled rejection into data-script-errors itself; the
// console says the same from outside the page.
void expect_no_script_error(const LoadedPage& page) {
  EXPECT_EQ(body_attribute(page.dom, "script-errors"), std::optional<std::string>(""));
  EXPECT_EQ(body_attribute(page.dom, "error"), std::optional<std::string>(""));
  EXPECT_EQ(console_errors(page.console), "");
}

TEST(ServeTest, DashboardDrawsEveryChartWithTitleAxesAndLegendInHeadlessChromium) {
  if (!have("chromium")) {
    GTEST_SKIP() << "chromium is not installed (Debian package chromium; scripts/install-deps "
                    "installs it)";
  }
  Daemon d({"--simulate", "4", "--listen", "127.0.0.1:0", "--interval", "200ms"});
  ASSERT_GT(d.port(), 0) << d.early_stderr();
  // A few rounds first, so that the host's rates (two rounds) and every series have points.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  TempDir dir;
  const auto page = load_in_chromium(dir, d.port(), 6000);
  ASSERT_EQ(page.exit_code, 0) << page.console;
  const std::string& dom = page.dom;
  expect_no_script_error(page);
  EXPECT_GE(std::stoi(body_attribute(dom, "updates").value_or("0")), 2);  // it refreshed
  EXPECT_EQ(body_attribute(dom, "devices"), std::optional<std::string>("4"));
  EXPECT_EQ(body_attribute(dom, "device-charts"), std::optional<std::string>("20"));  // 5 x 4
  EXPECT_EQ(body_attribute(dom, "host-charts"), std::optional<std::string>("4"));
  EXPECT_THAT(dom, HasSubstr("device 1: acco simulated H100-class 700 W"));
  EXPECT_THAT(dom, ::testing::Not(HasSubstr("not checked yet")));  // the findings panel filled
  EXPECT_THAT(dom, HasSubstr("<section id=\"no-device\" hidden=\"\">"));
  EXPECT_THAT(dom, HasSubstr("<section id=\"jobs-panel\" hidden=\"\">"));  // no --jobs

  // Every chart: a title, a y axis naming its unit, a time axis, and a legend with an entry.
  const auto blocks = chart_blocks(dom);
  ASSERT_EQ(blocks.size(), 24U);
  std::map<std::string, int> by_key;
  for (const auto& b : blocks) {
    const std::string key = first_match(b, "data-chart=\"([a-z]+)\"");
    ++by_key[key];
    EXPECT_FALSE(first_match(b, "class=\"chart-title\">([^<]+)<").empty()) << b.substr(0, 300);
    EXPECT_THAT(first_match(b, "class=\"axis-label y\"[^>]*>([^<]+)<"),
                ::testing::MatchesRegex(".*\\((\u00b0C|W|%|GiB|B/s|kB/s|MB/s|GB/s)\\)"))
        << key;
    EXPECT_THAT(first_match(b, "class=\"axis-label x\"[^>]*>([^<]+)<"),
                ::testing::MatchesRegex("time \\((s|min) before now\\)"))
        << key;
    EXPECT_THAT(b, ::testing::ContainsRegex("<ul class=\"legend\"><li>")) << key;
    // Ranges by meaning: utilisation to 100 %, memory to the device's total, power to its
    // highest limit, temperature past its thresholds.
    const std::string top = first_match(b, "class=\"tick y top\"[^>]*>([^<]+)<");
    if (key == "util" || key == "link" || key == "cpu") {
      EXPECT_EQ(top, "100") << key;
    } else if (key == "temp") {
      EXPECT_EQ(top, "100") << key;  // the memory max threshold, 95 C, and 5 above
      EXPECT_THAT(b, HasSubstr("slowdown 89 \u00b0C"));
      EXPECT_THAT(b, HasSubstr("shutdown 92 \u00b0C"));
    } else if (key == "power") {
      EXPECT_THAT(top, ::testing::AnyOf("700", "800")) << "the limit, or past it when drawn over";
      EXPECT_THAT(b, HasSubstr("enforced limit 700 W"));
    } else if (key == "memory" && b.find("MemTotal") == std::string::npos) {
      EXPECT_EQ(top, "79.6") << "the simulated device's 85520809984 bytes";
    }
    if (key == "link") {
      EXPECT_THAT(b, HasSubstr("of peak, PCIe Gen5 x16 = 63.0 GB/s"));
    }
  }
  EXPECT_EQ(by_key, (std::map<std::string, int>{{"cpu", 1},
                                                {"disk", 1},
                                                {"link", 4},
                                                {"memory", 5},
                                                {"net", 1},
                                                {"power", 4},
                                                {"temp", 4},
                                                {"util", 4}}));

  // The host panel: CPU, memory, network and disk, now and over time.
  EXPECT_THAT(dom, HasSubstr("<section id=\"host\">"));
  for (const char* tile :
       {"CPU busy (", "memory used / total", "network received / sent", "disk read / written"}) {
    EXPECT_THAT(dom, HasSubstr(tile));
  }
  // Events as a table, newest first, severity styled; no JSON lines.
  EXPECT_THAT(dom, HasSubstr("<table class=\"events\" id=\"events\">"));
  EXPECT_THAT(dom, ::testing::ContainsRegex(
                       "<tr class=\"event sev-row-info\"><td class=\"time\">[0-9-]+ "
                       "[0-9:.]+</td><td><span class=\"sev sev-info\">info</span></td>"));
  EXPECT_THAT(dom, HasSubstr("<td>serve_started</td>"));
  EXPECT_THAT(dom, ::testing::Not(HasSubstr("{\"time\"")));
  // Newest first: the first round's device_found events were logged before serve_started.
  EXPECT_LT(dom.find("<td>serve_started</td>"), dom.find("<td>device_found</td>"));

  const auto shot = stdfs::path(ACCO_ARTIFACT_DIR) / "dashboard.png";
  stdfs::create_directories(shot.parent_path());
  const std::string shot_cmd =
      "timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage "
      "--user-data-dir=" +
      (dir.path() / "profile").string() +
      " --window-size=1280,1600 --virtual-time-budget=3000 --screenshot=" + shot.string() +
      " http://127.0.0.1:" + std::to_string(d.port()) + "/ > /dev/null 2>&1";
  EXPECT_EQ(std::system(shot_cmd.c_str()), 0);
  EXPECT_TRUE(stdfs::exists(shot));
  EXPECT_EQ(d.stop(SIGTERM).exit_code, 0);
}

// With --jobs, the page's "Jobs" table shows a running job (name, state, device, why there) and
// one waiting behind it (why it waits), and never the command line.
TEST(ServeTest, DashboardShowsTheQueuedAndRunningJobsInHeadlessChromium) {
  if (!have("chromium")) {
    GTEST_SKIP() << "chromium is not installed (Debian package chromium; scripts/install-deps "
                    "installs it)";
  }
  TempDir dir;
  const std::string jobs = (dir.path() / "jobs").string();
  Daemon d({"--simulate", "1", "--listen", "127.0.0.1:0", "--interval", "200ms", "--jobs",
            "--jobs-dir", jobs});
  ASSERT_GT(d.port(), 0) << d.early_stderr();
  for (const char* name : {"first", "second"}) {
    const std::string cmd = std::string(ACCO_BINARY) + " submit --jobs-dir " + jobs + " --name " +
                            name + " -- sleep 600 >/dev/null 2>" + (dir.path() / "err").string();
    ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(dir.path() / "err");
  }
  httplib::Client http("127.0.0.1", d.port());
  nlohmann::json board;
  for (int i = 0; i < 100; ++i) {
    auto r = http.Get("/api/v1/placements");
    ASSERT_TRUE(r);
    board = nlohmann::json::parse(r->body);
    if (board["jobs"].size() == 2 && board["jobs"][0]["state"] == "running") {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(board["jobs"].size(), 2U) << board.dump();
  const auto page = load_in_chromium(dir, d.port(), 3000);
  ASSERT_EQ(page.exit_code, 0) << page.console;
  const std::string& dom = page.dom;
  expect_no_script_error(page);
  EXPECT_THAT(dom, HasSubstr("<section id=\"jobs-panel\">"));  // shown
  EXPECT_EQ(body_attribute(dom, "jobs"), std::optional<std::string>("2"));
  EXPECT_THAT(dom, ::testing::ContainsRegex("<td>1</td><td>first</td><td>running</td><td>0</td>"
                                            "<td class=\"time\">[0-9]+ s</td><td>device 0: "));
  EXPECT_THAT(dom, HasSubstr("<td>2</td><td>second</td><td>queued</td><td>-</td><td "
                             "class=\"time\">-</td><td>waits for 1 device(s): 0 of 1 free (1 "
                             "running a job)</td>"));
  EXPECT_THAT(dom, ::testing::Not(HasSubstr("sleep 600")));
  for (const char* id : {"2", "1"}) {
    const std::string cmd =
        std::string(ACCO_BINARY) + " cancel --jobs-dir " + jobs + " " + id + " >/dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
  }
  EXPECT_EQ(d.stop(SIGTERM).exit_code, 0);
}

// Whether `answer` holds a whole response that keeps its connection (headers and as many body
// bytes as Content-Length says): nothing more comes until the keep-alive timeout.
bool complete_keep_alive(const std::string& answer) {
  const auto end = answer.find("\r\n\r\n");
  if (end == std::string::npos || answer.find("Connection: close") < end) {
    return false;
  }
  const auto length = answer.find("Content-Length: ");
  if (length == std::string::npos || length > end) {
    return false;
  }
  return answer.size() >= end + 4 + std::stoul(answer.substr(length + 16));
}

// One raw exchange with the daemon: `request` as bytes, then everything it answers until it
// closes the connection (or 20 s pass, or a keep-alive answer is complete); the seconds that
// took in `seconds`.
// A TCP connection to 127.0.0.1:port; -1 when it fails.
int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string raw_exchange(int port, const std::string& request, double* seconds = nullptr) {
  const auto begin = std::chrono::steady_clock::now();
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size())) {
    char buffer[4096];
    pollfd p{fd, POLLIN, 0};
    while (::poll(&p, 1, 20'000) == 1) {
      const auto n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) {
        break;
      }
      answer.append(buffer, static_cast<std::size_t>(n));
      if (complete_keep_alive(answer)) {
        break;
      }
    }
  }
  ::close(fd);
  if (seconds != nullptr) {
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  }
  return answer;
}

// Requests nobody should send, each answered with a proper status and a JSON reason, the
// daemon serving on; 64 connections that send nothing hold every thread only until the read
// timeout, so a scrape behind them is answered; refusals are counted and logged (rate-limited).
TEST(ServeTest, HostileRequestsGetProperStatusesAndTheDaemonKeepsServing) {
  TempDir dir;
  const auto log = dir.path() / "events.jsonl";
  Daemon d(
      {"--simulate", "1", "--listen", "127.0.0.1:0", "--interval", "200ms", "--log", log.string()});
  ASSERT_GT(d.port(), 0) << d.early_stderr();
  const std::string close = "Host: 127.0.0.1\r\nConnection: close\r\n\r\n";
  const struct {
    std::string name;
    std::string request;
    std::string status;
    std::string body;
  } cases[] = {
      {"a header line past 8 KiB",
       "GET /healthz HTTP/1.1\r\nX-Big: " + std::string(20'000, 'a') + "\r\n" + close,
       "HTTP/1.1 431 ", "request headers too large (a line past 8 KiB or 64 KiB in all)"},
      {"headers past 64 KiB in all",
       "GET /healthz HTTP/1.1\r\n" +
           [] {
             std::string h;
             for (int i = 0; i < 100; ++i) {
               h += "X-H" + std::to_string(i) + ": " + std::string(1000, 'v') + "\r\n";
             }
             return h;
           }() +
           close,
       "HTTP/1.1 431 ", "request headers too large"},
      {"300 headers",
       "GET /healthz HTTP/1.1\r\n" +
           [] {
             std::string h;
             for (int i = 0; i < 300; ++i) {
               h += "X-H" + std::to_string(i) + ": v\r\n";
             }
             return h;
           }() +
           close,
       "HTTP/1.1 200 ", "ok"},
      {"a body on GET", "GET /healthz HTTP/1.1\r\nContent-Length: 5\r\n" + close + "hello",
       "HTTP/1.1 200 ", "ok"},
      {"an absolute URI", "GET http://127.0.0.1/metrics HTTP/1.1\r\n" + close, "HTTP/1.1 400 ",
       "an absolute URI is for a proxy; send the path alone"},
      {"repeated and malformed parameters",
       "GET /api/v1/series?name=power_watts&name=bogus&since=abc HTTP/1.1\r\n" + close,
       "HTTP/1.1 400 ", "since: expected Unix time in nanoseconds"},
      {"a bad percent escape", "GET /api/v1/series?name=%ZZ HTTP/1.1\r\n" + close, "HTTP/1.1 400 ",
       "name: unknown series"},
      {"a request line past 8 KiB", "GET /" + std::string(10'000, 'a') + " HTTP/1.1\r\n" + close,
       "HTTP/1.1 414 ", "request refused (414)"},
      {"not HTTP", "GARBAGE\r\n\r\n", "HTTP/1.1 400 ", "request refused (400)"},
      {"POST to a page", "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n" + close, "HTTP/1.1 405 ",
       "method not allowed"},
      {"a body past 64 KiB",
       "POST /api/v1/jobs HTTP/1.1\r\nContent-Length: 100000\r\n" + close +
           std::string(100'000, 'x'),
       "HTTP/1.1 413 ", "request refused (413)"},
  };
  for (const auto& c : cases) {
    double seconds = 0;
    const auto answer = raw_exchange(d.port(), c.request, &seconds);
    EXPECT_THAT(answer, ::testing::StartsWith(c.status)) << c.name << ": " << answer.substr(0, 200);
    EXPECT_THAT(answer, HasSubstr(c.body)) << c.name;
    if (c.request.find("Connection: close") != std::string::npos &&
        answer.find("Connection: close") != std::string::npos) {
      EXPECT_LT(seconds, 4.0) << c.name << ": closed only by the 5 s keep-alive timeout";
    }
  }

  // 64 connections that send nothing: half the threads wait on them (until the 5 s read
  // timeout), the others are cut, so a scrape behind them is answered at once.
  std::vector<int> idle;
  for (int i = 0; i < 64; ++i) {
    const int fd = connect_to(d.port());
    ASSERT_GE(fd, 0);
    idle.push_back(fd);
  }
  httplib::Client scraper("127.0.0.1", d.port());
  scraper.set_read_timeout(30, 0);
  scraper.set_connection_timeout(30, 0);
  const auto scrape = scraper.Get("/metrics");
  ASSERT_TRUE(scrape) << "a scrape behind 64 idle connections was never answered";
  EXPECT_EQ(scrape->status, 200);
  for (const int fd : idle) {
    ::close(fd);
  }
  // Over a second after the first refusals: this one is told, with those that were not.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_THAT(raw_exchange(d.port(), "GARBAGE\r\n\r\n"), ::testing::StartsWith("HTTP/1.1 400 "));
  const auto metrics = scraper.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(metrics->body, HasSubstr("acco_http_requests_total{code=\"400\",path=\"other\"}"));
  EXPECT_THAT(metrics->body, HasSubstr("acco_http_requests_total{code=\"405\",path=\"/metrics\"}"));
  EXPECT_THAT(metrics->body, HasSubstr("acco_http_requests_total{code=\"431\",path=\"/healthz\"}"));
  EXPECT_THAT(metrics->body, HasSubstr("acco_http_cut_total{reason=\"too_many_waiting\"}"));
  EXPECT_EQ(d.stop(SIGTERM).exit_code, 0);
  const auto events = slurp(log);
  EXPECT_THAT(events, HasSubstr("\"event\":\"http_request_refused\""));
  EXPECT_THAT(events, ::testing::ContainsRegex("more refused since the last told"));
}

// Slowloris: 64 connections that send a request line, then their headers a byte at a time. Half the
// threads wait on them, the others are cut at once, and each slow request ends 5 s after its first
// byte (408), so a scrape in the middle of it is answered while they still send (without the guards
// they hold every thread for as long as they keep sending: 8 s here).
TEST(ServeTest, SlowClientsCannotHoldEveryThread) {
  TempDir dir;
  const auto log = dir.path() / "events.jsonl";
  Daemon d(
      {"--simulate", "1", "--listen", "127.0.0.1:0", "--interval", "200ms", "--log", log.string()});
  ASSERT_GT(d.port(), 0) << d.early_stderr();
  std::vector<int> slow;
  const std::string request_line = "GET /metrics HTTP/1.1\r\n";
  for (int i = 0; i < 64; ++i) {
    const int fd = connect_to(d.port());
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::send(fd, request_line.data(), request_line.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request_line.size()));
    slow.push_back(fd);
  }
  const auto attack_ends = std::chrono::steady_clock::now() + std::chrono::seconds(8);
  std::thread attacker([&] {
    const std::string header = "X-Slow: ";
    for (std::size_t sent = 0; std::chrono::steady_clock::now() < attack_ends; ++sent) {
      for (const int fd : slow) {
        const char byte = sent < header.size() ? header[sent] : 'a';
        (void)::send(fd, &byte, 1, MSG_NOSIGNAL);  // a cut connection fails: ignored
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  httplib::Client scraper("127.0.0.1", d.port());
  scraper.set_read_timeout(30, 0);
  scraper.set_connection_timeout(30, 0);
  const auto begin = std::chrono::steady_clock::now();
  const auto scrape = scraper.Get("/metrics");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  const bool attack_still_on = std::chrono::steady_clock::now() < attack_ends;
  attacker.join();
  ASSERT_TRUE(scrape) << "a scrape during the slow requests was never answered";
  EXPECT_EQ(scrape->status, 200);
  EXPECT_TRUE(attack_still_on) << "the scrape waited " << seconds
                               << " s, until the slow "
                                  "clients stopped sending";
  // Each slow connection got a 408 or was cut without an answer.
  int answered_408 = 0;
  for (const int fd : slow) {
    char buffer[512];
    const auto n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n > 0 && std::string(buffer, static_cast<std::size_t>(n)).rfind("HTTP/1.1 408 ", 0) == 0) {
      ++answered_408;
    }
    ::close(fd);
  }
  EXPECT_GT(answered_408, 0);
  const auto metrics = scraper.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(metrics->body, HasSubstr("acco_http_cut_total{reason=\"too_many_waiting\"}"));
  EXPECT_THAT(metrics->body, HasSubstr("acco_http_cut_total{reason=\"request_deadline\"}"));
  EXPECT_THAT(metrics->body, HasSubstr("acco_http_requests_total{code=\"408\",path=\"/metrics\"}"));
  EXPECT_EQ(d.stop(SIGTERM).exit_code, 0);
  const auto events = slurp(log);
  EXPECT_THAT(events,
              HasSubstr("GET /metrics: 503 (32 connections already wait on their clients)"));
  EXPECT_THAT(events, ::testing::ContainsRegex("GET /metrics: 408 \\(request not whole within 5 s "
                                               "of its first byte\\); [0-9]+ more refused"));
}

TEST(ServeTest, DashboardWithoutADeviceSaysWhatItLookedForAndShowsTheHost) {
  if (!have("chromium")) {
    GTEST_SKIP() << "chromium is not installed (Debian package chromium; scripts/install-deps "
                    "installs it)";
  }
  Daemon d({"--listen", "127.0.0.1:0", "--interval", "200ms", "--nvml-library",
            "/nonexistent/libnvidia-ml.so.1"});
  ASSERT_GT(d.port(), 0) << d.early_stderr();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  TempDir dir;
  const auto page = load_in_chromium(dir, d.port(), 4000);
  ASSERT_EQ(page.exit_code, 0) << page.console;
  const std::string& dom = page.dom;
  expect_no_script_error(page);
  EXPECT_EQ(body_attribute(dom, "devices"), std::optional<std::string>("0"));
  EXPECT_EQ(body_attribute(dom, "device-charts"), std::optional<std::string>("0"));
  EXPECT_EQ(body_attribute(dom, "host-charts"), std::optional<std::string>("4"));
  EXPECT_THAT(dom, HasSubstr("<section id=\"no-device\">"));  // shown
  EXPECT_THAT(dom, HasSubstr("acco serve found no accelerator to show. It looked for:"));
  EXPECT_THAT(dom,
              HasSubstr("NVIDIA GPUs through NVML (<code>/nonexistent/libnvidia-ml.so.1</code>): "
                        "unavailable ("));
  EXPECT_THAT(dom, HasSubstr("simulated devices: none asked for"));
  EXPECT_THAT(dom, HasSubstr("<code>acco serve --simulate 4</code>"));
  EXPECT_THAT(dom, HasSubstr("<code>--nvml-library PATH</code>"));
  EXPECT_THAT(dom, HasSubstr("The host panel below is live either way."));
  EXPECT_THAT(dom, ::testing::Not(HasSubstr("<section class=\"device\"")));
  EXPECT_EQ(chart_blocks(dom).size(), 4U);
  EXPECT_EQ(d.stop(SIGTERM).exit_code, 0);
}

}  // namespace
}  // namespace acco::testing
