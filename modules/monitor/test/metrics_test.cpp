#include "acco/monitor/metrics.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/analyze/pcie_peak.hpp"
#include "acco/power/simulated_device.hpp"
#include "acco/testing/files.hpp"

namespace acco::monitor {
namespace {

using ::acco::testing::expect_golden;
using ::acco::testing::slurp;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::int64_t kTime = 1'764'600'000'000'000'000;

power::HostSample host_sample() {
  power::HostSample h;
  h.time_unix_nanos = kTime;
  h.cpu.seconds = {{"user", 1234.5}, {"system", 321.25}, {"idle", 99999}};
  h.cpu.cpus = 2;
  h.memory_bytes = {{"total", 16ULL << 30}, {"available", 8ULL << 30}};
  h.pressure = {{"cpu", "some", 12.5, 0.01}};
  h.disks = {{"nvme0n1", 4096, 8192, 1, 2, 0.5, {}}};
  h.net = {{"eth0", 1000, 2000, 10, 20, 0, 1, 0, 0, true}};
  h.ib_ports = {{"mlx5_0", 1, 4000, 8000, 10, 20, 0, 0, 0}};
  h.hwmon = {{"k10temp", "Tctl", 55.5}};
  h.rapl = {{"intel-rapl:0", "package-0", 1e6, 280}};
  return h;
}

analyze::Snapshot snapshot(bool lost_second = false) {
  analyze::Snapshot s;
  s.time_unix_nanos = kTime;
  power::SimulatedDevice busy(0);
  busy.set_load({.utilization = 1,
                 .activity = 0.8,
                 .pcie_rx_bytes_per_second = 12.6e9,
                 .pcie_tx_bytes_per_second = 1e9,
                 .memory_used_bytes = 1ULL << 30});
  busy.advance(30);
  s.devices.push_back(busy.sample(kTime));
  power::SimulatedModel no_hbm;
  no_hbm.memory_temperature_supported = false;
  power::SimulatedDevice other(1, no_hbm);
  auto second = other.sample(kTime);
  if (lost_second) {
    power::DeviceSample lost;
    lost.device = "1";
    lost.uuid = second.uuid;
    lost.model = second.model;
    lost.source = "simulated";
    lost.time_unix_nanos = kTime;
    lost.lost = true;
    second = lost;
  }
  s.devices.push_back(second);
  s.host = host_sample();
  s.stats.rounds = 7;
  s.stats.read_errors = {{"nvml", 2}};
  s.stats.interval_seconds = 1;
  return s;
}

// What `acco schedule --serve` adds: one device's runtime and engine counters.
analyze::ProcessCounters process_counters() {
  analyze::RuntimeDeviceActivity d;
  d.device = "0";
  d.queued = 3;
  d.running = 1;
  d.started = 40;
  d.finished = 38;
  d.failed = 1;
  d.task_seconds = 1.5;
  d.queue_wait_seconds = 0.25;
  d.transfers = {{"host-to-device", 1 << 20, 4}, {"device-to-host", 4096, 1}};
  return {{d}};
}

power::GovernorStatus governor_status() {
  power::GovernorStatus g;
  g.mode = "thermal";
  g.allow_control = false;
  power::GovernorDevice warm;
  warm.device = "0";
  warm.uuid = "SIM-0";
  warm.state = power::GovernorState::kWarm;
  warm.limit_watts = 612.5;
  warm.weight = 0.53;
  power::GovernorDevice hot;
  hot.device = "1";
  hot.uuid = "SIM-1";
  hot.state = power::GovernorState::kHot;
  hot.limit_watts = 200;
  hot.weight = 0.25;
  hot.no_new_work = true;
  g.devices = {warm, hot};
  for (const auto kind : power::all_action_kinds()) {
    g.actions_total[power::to_string(kind)] = 0;
  }
  g.actions_total["set_power_limit"] = 12;
  g.actions_total["no_new_work"] = 1;
  g.hands_off["SIM-1"] = "the limit changed from 200 W to 450 W outside acco";
  return g;
}

analyze::Snapshot snapshot_with_process() {
  analyze::Snapshot s = snapshot();
  s.process = process_counters();
  s.governor = governor_status();
  return s;
}

TEST(MetricsTest, SnapshotRendersAsTheGoldenText) {
  expect_golden("metrics.sim.txt", render_metrics(snapshot(), {.version = "0.1.0"}));
}

TEST(MetricsTest, EveryFamilyIsInTheMetricsReference) {
  const std::string doc =
      slurp(std::filesystem::path(ACCO_MON_GOLDEN_DIR) / "../../../docs/metrics.md");
  ASSERT_FALSE(doc.empty());
  auto s = snapshot_with_process();
  s.devices[0].nvlinks = {{0, true, 25e9, 1, 2}};
  std::istringstream lines(render_metrics(s, {.dcgm_compat = true, .version = "x"}));
  std::string line;
  int families = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("# TYPE ", 0) == 0) {
      const auto name = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_THAT(doc, HasSubstr("`" + name + "`")) << name << " is not in docs/metrics.md";
      ++families;
    }
  }
  EXPECT_GT(families, 60);
  EXPECT_THAT(doc, HasSubstr("`acco_http_requests_total`"));
}

TEST(MetricsTest, DcgmCompatAddsDcgmNamesAndUnits) {
  const auto text =
      render_metrics(snapshot(), {.dcgm_compat = true, .version = "0.1.0", .hostname = "node-1"});
  expect_golden("metrics.sim.dcgm.txt", text);
  EXPECT_THAT(text, HasSubstr("# TYPE DCGM_FI_DEV_GPU_TEMP gauge"));
  // Energy in millijoules, clocks in MHz, utilization in percent, as dcgm-exporter writes them.
  EXPECT_THAT(text, HasSubstr("DCGM_FI_DEV_GPU_UTIL{Hostname=\"node-1\",UUID="));
  EXPECT_THAT(text, HasSubstr("modelName=\"acco simulated H100-class 700 W\""));
}

TEST(MetricsTest, UnsupportedReadingsHaveNoSeries) {
  const auto text = render_metrics(snapshot(), {});
  // Device 1 has no memory temperature: only device 0's memory series exists.
  EXPECT_THAT(text, HasSubstr("device=\"0\",model=\"acco simulated H100-class 700 "
                              "W\",pci_bus_id=\"\",sensor=\"memory\""));
  EXPECT_THAT(text, Not(HasSubstr("device=\"1\",model=\"acco simulated H100-class 700 "
                                  "W\",pci_bus_id=\"\",sensor=\"memory\"")));
  EXPECT_THAT(text, Not(HasSubstr("NaN")));
  EXPECT_THAT(text, Not(HasSubstr("4294967295")));
}

TEST(MetricsTest, LostDeviceIsDownWithNothingElse) {
  const auto text = render_metrics(snapshot(true), {.dcgm_compat = true});
  std::istringstream lines(text);
  std::string line;
  int series_of_device_1 = 0;
  while (std::getline(lines, line)) {
    if (line.find("device=\"1\"") != std::string::npos ||
        line.find("gpu=\"1\"") != std::string::npos) {
      ++series_of_device_1;
      EXPECT_THAT(line, ::testing::AnyOf(HasSubstr("acco_gpu_up{"), HasSubstr("acco_gpu_lost{"),
                                         HasSubstr("acco_gpu_suspended{")))
          << line;
    }
  }
  EXPECT_EQ(series_of_device_1, 3);
  EXPECT_THAT(text, HasSubstr("acco_gpu_lost{device=\"1\""));
}

TEST(MetricsTest, LinkUtilizationIsTheRateOverTheCurrentLinksPeak) {
  const auto s = snapshot();
  EXPECT_NEAR(analyze::pcie_peak_bytes_per_second(s.devices[0]), 63.0e9, 0.1e9);
  const auto text = render_metrics(s, {});
  // 12.6 GB/s of 63.0 GB/s
  EXPECT_THAT(
      text,
      HasSubstr("direction=\"rx\",link_type=\"pcie\",model=\"acco simulated H100-class 700 "
                "W\",pci_bus_id=\"\",uuid=\"SIM-0000acc0-0000-4000-8000-000000000000\"} 0.19995"));
  power::DeviceSample unknown;
  EXPECT_EQ(analyze::pcie_peak_bytes_per_second(unknown), 0);
}

// promtool's lint of the text, or nullopt when promtool is not installed.
struct Lint {
  int status = 0;
  std::string output;
};
std::optional<Lint> promtool(const std::string& text) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) {
    return std::nullopt;
  }
  const auto path = std::filesystem::temp_directory_path() /
                    ("acco_metrics_" + std::to_string(::getpid()) + ".txt");
  std::ofstream(path) << text;
  const std::string cmd = "promtool check metrics < " + path.string() + " 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  Lint lint;
  if (pipe == nullptr) {
    lint.status = -1;
    return lint;
  }
  std::array<char, 256> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) {
    lint.output += buffer.data();
  }
  lint.status = ::pclose(pipe);
  std::filesystem::remove(path);
  return lint;
}

TEST(MetricsTest, ProcessCountersRenderPerDeviceAndDirection) {
  const auto text = render_metrics(snapshot_with_process(), {});
  EXPECT_THAT(text, HasSubstr("# TYPE acco_transfer_bytes_total counter"));
  EXPECT_THAT(text,
              HasSubstr("acco_transfer_bytes_total{device=\"0\",direction=\"host-to-device\"} "
                        "1048576"));
  EXPECT_THAT(text, HasSubstr("acco_transfer_copies_total{device=\"0\",direction=\"device-to-"
                              "host\"} 1"));
  EXPECT_THAT(text, HasSubstr("acco_runtime_queue_depth{device=\"0\"} 3"));
  EXPECT_THAT(text, HasSubstr("acco_runtime_running_tasks{device=\"0\"} 1"));
  EXPECT_THAT(text, HasSubstr("acco_runtime_tasks_total{device=\"0\",state=\"started\"} 40"));
  EXPECT_THAT(text, HasSubstr("acco_runtime_tasks_total{device=\"0\",state=\"finished\"} 38"));
  EXPECT_THAT(text, HasSubstr("acco_runtime_tasks_total{device=\"0\",state=\"failed\"} 1"));
  EXPECT_THAT(text, HasSubstr("acco_runtime_task_seconds_total{device=\"0\"} 1.5"));
  EXPECT_THAT(text, HasSubstr("acco_runtime_queue_wait_seconds_total{device=\"0\"} 0.25"));
  // Without process counters (plain acco serve) none of these families exists.
  EXPECT_THAT(render_metrics(snapshot(), {}), Not(HasSubstr("acco_runtime_")));
  EXPECT_THAT(render_metrics(snapshot(), {}), Not(HasSubstr("acco_transfer_")));
}

TEST(MetricsTest, PromtoolAcceptsTheOutput) {
  const auto lint = promtool(render_metrics(snapshot_with_process(), {.version = "0.1.0"}));
  if (!lint) {
    GTEST_SKIP() << "promtool is not installed (Debian package prometheus; scripts/install-deps "
                    "installs it)";
  }
  EXPECT_EQ(lint->status, 0) << lint->output;
  EXPECT_EQ(lint->output, "");
}

TEST(MetricsTest, GovernorStatusRendersAsTheGoldenText) {
  analyze::Snapshot s;
  s.time_unix_nanos = 1764606324000000000;
  s.governor = governor_status();
  expect_golden("metrics.governor.txt", render_metrics(s, {.version = "0.1.0"}));
  const auto lint = promtool(render_metrics(s, {.version = "0.1.0"}));
  if (lint) {
    EXPECT_EQ(lint->status, 0) << lint->output;
  }
}

TEST(MetricsTest, PromtoolFindsFaultOnlyWithDcgmsOwnNames) {
  // DCGM's names break Prometheus conventions (camelCase labels, counters without _total);
  // compat mode copies them on purpose, and adds nothing else that promtool rejects.
  const auto lint = promtool(render_metrics(snapshot(), {.dcgm_compat = true, .version = "0.1.0"}));
  if (!lint) {
    GTEST_SKIP() << "promtool is not installed";
  }
  std::istringstream lines(lint->output);
  std::string line;
  int complaints = 0;
  while (std::getline(lines, line)) {
    ++complaints;
    EXPECT_THAT(line, ::testing::StartsWith("DCGM_")) << line;
  }
  EXPECT_GT(complaints, 0);
}

}  // namespace
}  // namespace acco::monitor
