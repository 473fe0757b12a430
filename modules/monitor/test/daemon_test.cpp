// The daemon and the recorder as a library user runs them: public headers only, simulated
// devices, a real HTTP client on an ephemeral port.
#include "acco/monitor/daemon.hpp"

#include <chrono>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "acco/core/stop.hpp"
#include "acco/monitor/recorder.hpp"
#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"

#include "machines.hpp"

namespace acco::monitor {
namespace {

using ::acco::testing::HasValue;
using ::acco::testing::IsOk;
using ::acco::testing::slurp;
using ::acco::testing::StatusIs;
using ::acco::testing::TempDir;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::Not;

// Two simulated devices sampled every 100 ms on 127.0.0.1 with a free port, no host sensors; the
// periodic probe reads a generated sysroot (the CI VM), NVML off.
DaemonOptions simulated_daemon(const TempDir& dir) {
  if (!std::filesystem::exists(dir.path() / "root")) {
    acco::testing::write_ci_vm(dir.path() / "root");
  }
  DaemonOptions o;
  o.server.host = "127.0.0.1";
  o.server.port = 0;
  o.interval = std::chrono::milliseconds(100);
  o.sysroot = (dir.path() / "root").string();
  o.sources.nvml_mode = "off";
  o.sources.simulate = 2;
  o.sources.host = false;
  o.event_log = (dir.path() / "events.jsonl").string();
  o.checks.probe.sysroot = o.sysroot;
  o.checks.probe.nvml = topo::NvmlMode::kOff;
  return o;
}

httplib::Result get(int port, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(5, 0);
  return client.Get(path);
}

TEST(DaemonTest, ServesMetricsOfSimulatedDevicesForThreeSecondsThenStopsByItself) {
  const TempDir dir;
  auto daemon = Daemon::create(simulated_daemon(dir));
  ASSERT_THAT(daemon, IsOk());
  const auto started = daemon->start();
  ASSERT_THAT(started, IsOk());
  EXPECT_GT(started->port, 0);
  EXPECT_EQ(started->devices, 2U);
  EXPECT_EQ(started->nvml_note, "off");

  const core::StopFlag stop;
  const auto begin = std::chrono::steady_clock::now();
  std::optional<Result<DaemonSummary>> summary;
  std::thread runner([&] { summary = daemon->run(stop, std::chrono::seconds(3)); });

  const auto metrics = get(started->port, "/metrics");
  ASSERT_TRUE(metrics) << httplib::to_string(metrics.error());
  EXPECT_EQ(metrics->status, 200);
  EXPECT_THAT(metrics->body, HasSubstr("acco_gpu_up{device=\"0\""));
  EXPECT_THAT(metrics->body, HasSubstr("acco_gpu_up{device=\"1\""));
  EXPECT_THAT(metrics->body, HasSubstr("acco_sampler_rounds_total "));
  EXPECT_THAT(metrics->body, Not(HasSubstr("acco_sampler_read_errors_total")));
  const auto devices = get(started->port, "/api/v1/devices");
  ASSERT_TRUE(devices);
  EXPECT_EQ(nlohmann::json::parse(devices->body)["devices"].size(), 2U);

  runner.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_GE(seconds, 2.9);
  EXPECT_LT(seconds, 10.0);
  ASSERT_TRUE(summary.has_value());
  ASSERT_THAT(*summary, IsOk());
  EXPECT_EQ((*summary)->stopped_by, core::kStoppedByDuration);
  EXPECT_GE((*summary)->rounds, 10U);  // 30 at 100 ms, fewer on a loaded machine
  // Stopped: nothing listens any more, and a second stop answers the same summary.
  EXPECT_FALSE(get(started->port, "/metrics"));
  EXPECT_EQ(daemon->stop("again").rounds, (*summary)->rounds);

  const auto log = slurp(dir.path() / "events.jsonl");
  EXPECT_THAT(log, HasSubstr("\"event\":\"serve_started\""));
  EXPECT_THAT(log, HasSubstr("\"event\":\"device_found\""));
  EXPECT_THAT(log, HasSubstr("stopped by the end of --duration after"));
}

TEST(DaemonTest, AStopRequestEndsTheRunWithItsReasonAndTheFindingsAreServed) {
  const TempDir dir;
  DaemonOptions options = simulated_daemon(dir);
  options.governor = power::GovernorSettings{};  // dry run on the simulated devices
  auto daemon = Daemon::create(std::move(options));
  ASSERT_THAT(daemon, IsOk());
  const auto started = daemon->start();
  ASSERT_THAT(started, IsOk());

  // The first probe runs on the checks' thread: its findings come once it has finished.
  nlohmann::json findings;
  for (int i = 0; i < 100 && !findings.contains("time"); ++i) {
    const auto r = get(started->port, "/api/v1/findings");
    ASSERT_TRUE(r);
    findings = nlohmann::json::parse(r->body);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(findings["findings"].is_array()) << findings.dump();
  const auto metrics = get(started->port, "/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(metrics->body, HasSubstr("acco_governor_info{"));

  core::StopFlag stop;
  stop.request("the test");
  const auto summary = daemon->run(stop);
  EXPECT_THAT(summary, HasValue(Field(&DaemonSummary::stopped_by, "the test")));
  EXPECT_THAT(slurp(dir.path() / "events.jsonl"), HasSubstr("stopped by the test after"));
}

TEST(DaemonTest, AnAddressInUseIsUnavailableAndNothingRuns) {
  const TempDir dir;
  auto first = Daemon::create(simulated_daemon(dir));
  ASSERT_THAT(first, IsOk());
  const auto started = first->start();
  ASSERT_THAT(started, IsOk());
  DaemonOptions options = simulated_daemon(dir);
  options.server.port = started->port;
  options.event_log.clear();
  auto second = Daemon::create(std::move(options));
  ASSERT_THAT(second, IsOk());
  EXPECT_THAT(second->start(), StatusIs(Errc::kUnavailable));
  EXPECT_EQ(first->stop("the test").stopped_by, "the test");
}

TEST(RecorderTest, SimulatedTimeWritesEveryRoundAtOnce) {
  const TempDir dir;
  RecordOptions o;
  o.out = (dir.path() / "rec.jsonl").string();
  o.duration = std::chrono::seconds(2);
  o.interval = std::chrono::milliseconds(200);
  o.sources.simulate = 2;
  o.simulated_time = true;
  auto recorder = Recorder::create(o);
  ASSERT_THAT(recorder, IsOk());
  EXPECT_EQ(recorder->nvml_note(), "off");
  const core::StopFlag stop;
  const auto summary = recorder->run(stop);
  ASSERT_THAT(summary, IsOk());
  EXPECT_EQ(summary->rounds, 10U);
  EXPECT_EQ(summary->stopped_by, core::kStoppedByDuration);
  EXPECT_FALSE(std::filesystem::exists(o.out + ".partial"));
  std::istringstream lines(slurp(o.out));
  std::string line;
  std::int64_t previous = 0;
  int n = 0;
  while (std::getline(lines, line)) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["devices"].size(), 2U);
    const auto t = j["time_unix_nanos"].get<std::int64_t>();
    if (n > 0) {
      EXPECT_EQ(t - previous, 200'000'000);  // simulated time, one interval a round
    }
    previous = t;
    ++n;
  }
  EXPECT_EQ(n, 10);
}

TEST(RecorderTest, AStopRequestEndsARealTimeRecording) {
  const TempDir dir;
  acco::testing::write_ci_vm(dir.path() / "root");
  RecordOptions o;
  o.out = (dir.path() / "rec.jsonl").string();
  o.duration = std::chrono::hours(1);
  o.interval = std::chrono::milliseconds(100);
  o.sysroot = (dir.path() / "root").string();
  o.sources.nvml_mode = "off";
  o.sources.simulate = 1;
  auto recorder = Recorder::create(o);
  ASSERT_THAT(recorder, IsOk());
  core::StopFlag stop;
  std::thread stopper([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop.request("the test");
  });
  const auto summary = recorder->run(stop);
  stopper.join();
  ASSERT_THAT(summary, IsOk());
  EXPECT_EQ(summary->stopped_by, "the test");
  EXPECT_GE(summary->rounds, 1U);
  EXPECT_TRUE(std::filesystem::exists(o.out));
}

TEST(RecorderTest, AFileThatCannotBeCreatedIsCannotWrite) {
  const TempDir dir;
  RecordOptions o;
  o.out = (dir.path() / "no-such-dir" / "rec.jsonl").string();
  o.duration = std::chrono::seconds(1);
  o.sources.simulate = 1;
  o.simulated_time = true;
  EXPECT_THAT(Recorder::create(o), StatusIs(Errc::kCannotWrite, HasSubstr("rec.jsonl")));
}

}  // namespace
}  // namespace acco::monitor

namespace acco::monitor {
namespace {

TEST(DaemonRequestTest, TheFlagsTextsBecomeTheOptions) {
  DaemonOptions o;
  o.store_path = "/tmp/store.sqlite";
  DaemonRequest r;
  r.compat = "dcgm";
  r.log = "/tmp/events.jsonl";
  r.probe_every = "10m";
  r.retention = "raw=2h,minute=1d";
  r.memory_window = "1.5s";
  ASSERT_TRUE(apply_request(r, o).has_value());
  EXPECT_TRUE(o.metrics.dcgm_compat);
  EXPECT_EQ(o.event_log, "/tmp/events.jsonl");
  EXPECT_EQ(o.checks.probe_every, std::chrono::seconds(600));
  EXPECT_FALSE(o.checks.bench_every.has_value());
  EXPECT_EQ(o.memory_window, std::chrono::milliseconds(1500));
}

TEST(DaemonRequestTest, EachBadValueIsNamedAsItsFlag) {
  const auto message = [](const DaemonRequest& r, const std::string& store = "") {
    DaemonOptions o;
    o.store_path = store;
    const auto applied = apply_request(r, o);
    EXPECT_FALSE(applied.has_value());
    return applied ? std::string() : applied.error().message;
  };
  EXPECT_EQ(message({.compat = "prometheus"}), "--compat: 'prometheus' is not dcgm");
  EXPECT_EQ(message({.bench_every = "8d"}),
            "--bench-every: '8d' is not a duration from 1s to 7d (e.g. 10m)");
  EXPECT_EQ(message({.retention = "raw=1h"}),
            "--retention: applies to --store, which is not given");
  EXPECT_EQ(message({.retention = "forever"}, "/tmp/s.sqlite"),
            "--retention: 'forever' is not raw=DURATION,minute=DURATION (e.g. raw=1h,minute=7d)");
  EXPECT_EQ(message({.memory_window = "0s"}),
            "--memory-window: '0s' is not a duration from 1s to 7d (e.g. 15m)");
}

}  // namespace
}  // namespace acco::monitor

namespace acco::monitor {
namespace {

TEST(SamplingRequestTest, TheSamplingFlagsAreCheckedAndNamed) {
  auto s = sampling({.interval = "250ms", .simulate = 3, .scenario = "compute"});
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ(s->interval, std::chrono::milliseconds(250));
  EXPECT_EQ(s->simulate, 3);
  EXPECT_EQ(s->scenario, power::SimulatedScenario::kCompute);
  const auto message = [](const SamplingRequest& r) {
    auto o = sampling(r);
    EXPECT_FALSE(o.has_value());
    return o ? std::string() : o.error().message;
  };
  EXPECT_EQ(message({.interval = "50ms"}),
            "--interval: '50ms' is not a duration from 100ms to 1h (e.g. 1s)");
  EXPECT_EQ(message({.simulate = 65}), "--simulate: '65' is not a device count from 0 to 64");
  EXPECT_EQ(message({.scenario = "hot"}).rfind("--scenario: 'hot' is not one of cycle", 0), 0U);
  EXPECT_EQ(
      sampling_interval("--serve-interval", "10ms", 10).value_or(std::chrono::milliseconds(0)),
      std::chrono::milliseconds(10));
}

}  // namespace
}  // namespace acco::monitor
