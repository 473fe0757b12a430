#include "acco/monitor/top_view.hpp"

#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/files.hpp"

namespace acco::monitor {
namespace {

using ::acco::testing::expect_golden;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::int64_t kTime = 1'764'600'000'000'000'000;
constexpr std::uint64_t kGiB = 1ULL << 30;

power::DeviceSample busy_device() {
  power::DeviceSample d;
  d.device = "0";
  d.uuid = "GPU-0";
  d.pci_bus_id = "0000:18:00.0";
  d.model = "NVIDIA H100 80GB HBM3";
  d.source = "nvml";
  d.time_unix_nanos = kTime;
  d.temperature_gpu_celsius = 71;
  d.threshold_gpu_max_celsius = 87;
  d.power_watts = 688.4;
  d.power_limit_enforced_watts = 700;
  d.utilization_ratio = 0.97;
  d.memory_used_bytes = 61 * kGiB;
  d.memory_total_bytes = 80 * kGiB;
  d.sm_clock_hertz = 1755e6;
  d.sm_clock_max_hertz = 1980e6;
  d.pcie_rx_bytes_per_second = 12.6e9;
  d.pcie_tx_bytes_per_second = 1.5e9;
  d.pcie_gen_current = 5;
  d.pcie_width_current = 16;
  d.clock_event_reasons = power::clock_event::kSwPowerCap | power::clock_event::kSwThermalSlowdown;
  return d;
}

power::DeviceSample idle_device() {
  power::DeviceSample d = busy_device();
  d.device = "1";
  d.uuid = "GPU-1";
  d.pci_bus_id = "0000:2a:00.0";
  d.temperature_gpu_celsius = 34;
  d.power_watts = 71.9;
  d.utilization_ratio = 0;
  d.memory_used_bytes = 0;
  d.sm_clock_hertz = 345e6;
  d.pcie_rx_bytes_per_second = 0;
  d.pcie_tx_bytes_per_second = 0;
  d.clock_event_reasons = power::clock_event::kGpuIdle;
  return d;
}

power::DeviceSample gone_device(const std::string& id, bool lost) {
  power::DeviceSample d;
  d.device = id;
  d.model = "NVIDIA H100 80GB HBM3";
  d.source = "nvml";
  d.lost = lost;
  d.suspended = !lost;
  return d;
}

power::HostSample host(std::int64_t time, double busy_seconds, double idle_seconds,
                       std::uint64_t bytes) {
  power::HostSample h;
  h.time_unix_nanos = time;
  h.cpu.seconds = {{"user", busy_seconds}, {"system", 10}, {"idle", idle_seconds}};
  h.cpu.cpus = 4;
  h.memory_bytes = {{"total", 64 * kGiB}, {"available", 48 * kGiB}};
  h.pressure = {{"cpu", "some", 1, 0.025}, {"cpu", "full", 1, 0.5}, {"io", "some", 1, 0.001}};
  h.net = {{"lo", bytes * 100, bytes * 100, 0, 0, 0, 0, 0, 0, false},
           {"eth0", bytes, bytes / 2, 0, 0, 0, 0, 0, 0, true},
           {"ib0", bytes * 4, bytes * 4, 0, 0, 0, 0, 0, 0, true}};
  h.disks = {{"nvme0n1", bytes, bytes / 4, 0, 0, 0, {}}, {"loop0", bytes * 9, 0, 0, 0, 0, {}}};
  return h;
}

// Two rounds one second apart: the CPU went from 100 busy of 500 s to 103 busy of 504 s.
analyze::Snapshot round(int n) {
  analyze::Snapshot s;
  s.time_unix_nanos = kTime + static_cast<std::int64_t>(n) * 1'000'000'000;
  s.devices = {busy_device(), idle_device(), gone_device("2", true), gone_device("3", false)};
  s.host = n == 1 ? host(s.time_unix_nanos, 90, 400, 1'000'000'000)
                  : host(s.time_unix_nanos, 93, 401, 1'250'000'000);
  s.stats.rounds = static_cast<std::uint64_t>(n);
  s.stats.interval_seconds = 1;
  return s;
}

TopOptions options() {
  return {.hostname = "node-1", .source = "4 device(s), NVML on, host /", .status = {}};
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    lines.push_back(line);
  }
  return lines;
}

std::string line_starting(const std::string& text, const std::string& prefix) {
  for (const auto& line : lines_of(text)) {
    if (line.rfind(prefix, 0) == 0) {
      return line;
    }
  }
  return "";
}

TEST(TopViewTest, SecondFrameRendersAsTheGoldenText) {
  const auto first = round(1);
  expect_golden("top.frame.txt", render_top(round(2), &first, options()));
}

TEST(TopViewTest, ColumnsLineUpUnderTheirHeaders) {
  const auto first = round(1);
  const auto frame = render_top(round(2), &first, options());
  const auto header = line_starting(frame, "ID ");
  ASSERT_FALSE(header.empty()) << frame;
  const auto state = header.find("STATE");
  const auto throttle = header.find("THROTTLE");
  for (const auto* id : {"0 ", "1 ", "2 ", "3 "}) {
    const auto row = line_starting(frame, id);
    ASSERT_GT(row.size(), state) << row;
    EXPECT_NE(row[state], ' ') << row;
    EXPECT_EQ(row[state - 1], ' ') << row;
    EXPECT_NE(row[throttle], ' ') << row;
  }
}

// The text of device `id`'s cell under `header` (up to the next blank).
std::string cell(const std::string& frame, const std::string& id, const std::string& header) {
  const auto at = line_starting(frame, "ID ").find(header);
  const auto row = line_starting(frame, id + " ");
  if (at == std::string::npos || row.size() <= at) {
    return "";
  }
  return row.substr(at, row.find(' ', at) - at);
}

TEST(TopViewTest, ThrottleShowsActiveReasonsButNotIdle) {
  const auto frame = render_top(round(2), nullptr, options());
  EXPECT_EQ(cell(frame, "0", "THROTTLE"), "sw_power_cap,sw_thermal");
  EXPECT_EQ(cell(frame, "1", "THROTTLE"), "-");
  EXPECT_THAT(frame, Not(HasSubstr("gpu_idle")));
}

TEST(TopViewTest, LostAndSuspendedDevicesShowTheirStateAndNoReadings) {
  const auto frame = render_top(round(2), nullptr, options());
  EXPECT_EQ(cell(frame, "0", "STATE"), "ok");
  EXPECT_EQ(cell(frame, "2", "STATE"), "lost");
  EXPECT_EQ(cell(frame, "3", "STATE"), "suspended");
  // From TEMP C to STATE only dashes: nothing is read from such a device.
  const auto header = line_starting(frame, "ID ");
  const auto from = header.find("TEMP C");
  const auto to = header.find("STATE");
  for (const auto* id : {"2 ", "3 "}) {
    const auto readings = line_starting(frame, id).substr(from, to - from);
    EXPECT_EQ(readings.find_first_not_of("- "), std::string::npos) << readings;
  }
  EXPECT_EQ(cell(frame, "2", "THROTTLE"), "-");
  EXPECT_EQ(cell(frame, "3", "THROTTLE"), "-");
}

TEST(TopViewTest, FirstFrameWithoutPreviousShowsDashForRates) {
  const auto frame = render_top(round(1), nullptr, options());
  EXPECT_THAT(line_starting(frame, "HOST "), HasSubstr("CPU % BUSY - of 4 CPU(s)"));
  EXPECT_EQ(line_starting(frame, "NET "), "NET   -");
  EXPECT_EQ(line_starting(frame, "DISK "), "DISK  -");
}

TEST(TopViewTest, RatesComeFromTwoRoundsBusiestFirstWithoutLoopback) {
  const auto first = round(1);
  const auto frame = render_top(round(2), &first, options());
  // 3 of 4 CPU seconds busy.
  EXPECT_THAT(line_starting(frame, "HOST "), HasSubstr("CPU % BUSY 75.0 of 4 CPU(s)"));
  EXPECT_THAT(line_starting(frame, "HOST "), HasSubstr("MEM GiB USED / TOTAL 16.0 / 64.0"));
  EXPECT_THAT(line_starting(frame, "HOST "), HasSubstr("PSI SOME AVG10 % cpu 2.5 io 0.1"));
  const auto net = line_starting(frame, "NET ");
  EXPECT_THAT(net, ::testing::StartsWith("NET   ib0 rx 1.00 GB/s"));
  EXPECT_THAT(net, HasSubstr("eth0 rx 250"));
  EXPECT_THAT(net, Not(HasSubstr("lo ")));
  EXPECT_THAT(line_starting(frame, "DISK "), Not(HasSubstr("loop0")));
}

TEST(TopViewTest, BridgesAndVolumesOverCountedDevicesAreNotListedTwice) {
  auto first = round(1);
  auto later = round(2);
  // A bridge and a veth carry eth0's bytes again; md0 writes what nvme0n1 writes.
  for (auto* s : {&first, &later}) {
    const std::uint64_t bytes = s->host->net[1].rx_bytes;
    s->host->net.push_back({"br0", bytes * 8, bytes * 8, 0, 0, 0, 0, 0, 0, false});
    s->host->net.push_back({"veth1a2b", bytes * 8, bytes * 8, 0, 0, 0, 0, 0, 0, false});
    s->host->disks.push_back({"md0", bytes * 8, bytes * 8, 0, 0, 0, {"nvme0n1"}});
    s->host->disks.push_back({"dm-0", bytes * 8, bytes * 8, 0, 0, 0, {"nvme0n1"}});
  }
  const auto frame = render_top(later, &first, options());
  EXPECT_THAT(line_starting(frame, "NET "), ::testing::StartsWith("NET   ib0 rx 1.00 GB/s"));
  EXPECT_THAT(line_starting(frame, "NET "), Not(HasSubstr("br0")));
  EXPECT_THAT(line_starting(frame, "NET "), Not(HasSubstr("veth")));
  EXPECT_EQ(line_starting(frame, "DISK "), "DISK  nvme0n1 read 250.0 MB/s write 62.5 MB/s");
}

TEST(TopViewTest, WithoutPhysicalInterfacesEveryOneButLoopbackIsListed) {
  auto first = round(1);
  auto later = round(2);
  for (auto* s : {&first, &later}) {
    for (auto& n : s->host->net) {
      n.physical = false;  // read from /proc/net/dev inside a container
    }
  }
  const auto net = line_starting(render_top(later, &first, options()), "NET ");
  EXPECT_THAT(net, HasSubstr("ib0 rx"));
  EXPECT_THAT(net, HasSubstr("eth0 rx"));
  EXPECT_THAT(net, Not(HasSubstr("lo ")));
}

TEST(TopViewTest, CounterThatWentBackwardsHasNoRate) {
  auto later = round(2);
  const auto first = round(1);
  later.host->net[1].rx_bytes = 0;  // eth0 reset
  const auto frame = render_top(later, &first, options());
  EXPECT_THAT(line_starting(frame, "NET "), Not(HasSubstr("eth0")));
}

TEST(TopViewTest, HeaderNamesHostTimeSourceAndRound) {
  auto o = options();
  o.status = "cannot reach http://127.0.0.1:1/api/v1/snapshot: Connection";
  const auto frame = render_top(round(2), nullptr, o);
  EXPECT_EQ(lines_of(frame)[0],
            "acco top - node-1 - 2025-12-01T14:40:02.000Z - 4 device(s), NVML on, host / - round "
            "2 every 1.00 s");
  EXPECT_EQ(lines_of(frame)[1], o.status);
}

TEST(TopViewTest, WidthCutsLinesAndColourKeepsAlignment) {
  auto o = options();
  o.width = 40;
  for (const auto& line : lines_of(render_top(round(2), nullptr, o))) {
    EXPECT_LE(line.size(), 40U) << line;
  }
  o.width = 0;
  o.colour = true;
  const auto coloured = render_top(round(2), nullptr, o);
  EXPECT_THAT(coloured, HasSubstr("\x1b[31mlost "));
  EXPECT_THAT(coloured, HasSubstr("\x1b[33msw_power_cap,sw_thermal"));
  const auto plain = render_top(round(2), nullptr, options());
  EXPECT_THAT(plain, Not(HasSubstr("\x1b")));
}

TEST(TopViewTest, NoDevicesAndNoHostStillDrawAFrame) {
  analyze::Snapshot empty;
  const auto frame = render_top(empty, nullptr, options());
  EXPECT_THAT(frame, HasSubstr("no devices"));
  EXPECT_THAT(frame, HasSubstr("HOST  -"));
}

TEST(TopViewTest, TheTableFitsTheWidthAndNamesTheColumnsItHid) {
  const auto first = round(1);
  auto o = options();
  o.width = 160;
  const auto wide = render_top(round(2), &first, o);
  EXPECT_THAT(wide, Not(HasSubstr("hidden to fit")));
  EXPECT_THAT(line_starting(wide, "ID "), HasSubstr("SM MHz / MAX"));
  // Every column fits at 160; the busy device's reasons run past it and the cut says so.
  const auto busy = line_starting(wide, "0 ");
  EXPECT_EQ(busy.size(), 160U) << busy;
  EXPECT_EQ(busy.back(), '~') << busy;
  for (const std::size_t width : {100U, 80U}) {
    o.width = width;
    const auto frame = render_top(round(2), &first, o);
    const auto header = line_starting(frame, "ID ");
    EXPECT_LE(header.size(), width) << frame;
    EXPECT_THAT(header, HasSubstr("THROTTLE")) << "the reason a device is slow stays";
    EXPECT_THAT(header, HasSubstr("POWER W / LIMIT W"));
    EXPECT_THAT(header, Not(HasSubstr("SM MHz"))) << "hidden first";
    EXPECT_THAT(line_starting(frame, "hidden to fit " + std::to_string(width) + " columns: "),
                HasSubstr("SM MHz / MAX, PCIe TX GB/s (%)"))
        << frame;
    for (const auto& line : lines_of(frame)) {
      EXPECT_LE(line.size(), width) << line;
    }
    EXPECT_EQ(cell(frame, "0", "STATE"), "ok") << frame;
    // THROTTLE is never cut: the busy device's reasons are whole.
    EXPECT_EQ(cell(frame, "0", "THROTTLE"), "sw_power_cap,sw_thermal") << frame;
  }
  // At 80 columns the header wraps at its " - " rather than losing the round.
  EXPECT_EQ(line_starting(render_top(round(2), &first, o), "  round "), "  round 2 every 1.00 s");
}

TEST(TopViewTest, SortAndDeviceFilterChangeTheRowsAndTheKeysLineSaysSo) {
  auto o = options();
  o.keys = true;
  const auto by_id = render_top(round(2), nullptr, o);
  EXPECT_EQ(line_starting(by_id, "keys: "), "keys: q quit   s sort (by id)   f device (all)");
  o.sort = TopSort::kPower;
  const auto by_power = render_top(round(2), nullptr, o);
  const auto header_at = by_power.find("\nID ");
  const auto first_row = by_power.substr(by_power.find('\n', header_at + 1) + 1, 2);
  EXPECT_EQ(first_row, "0 ") << by_power;  // the busy device draws the most
  EXPECT_LT(by_power.find("\n1 "), by_power.find("\n2 ")) << "lost and suspended go last";
  EXPECT_THAT(by_power, HasSubstr("s sort (by power)"));
  o.sort = TopSort::kId;
  o.device = "1";
  const auto one = render_top(round(2), nullptr, o);
  EXPECT_FALSE(line_starting(one, "1 ").empty()) << one;
  EXPECT_TRUE(line_starting(one, "0 ").empty()) << one;
  EXPECT_THAT(one, HasSubstr("f device (1)"));
  o.device = "9";
  EXPECT_THAT(render_top(round(2), nullptr, o), HasSubstr("no device 9 in this round"));
  EXPECT_EQ(next_sort(TopSort::kTemperature), TopSort::kId);
  EXPECT_EQ(to_string(next_sort(TopSort::kId)), "util");
}

}  // namespace
}  // namespace acco::monitor
