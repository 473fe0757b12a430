#include "acco/analyze/events.hpp"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace acco::analyze {
namespace {

using ::testing::ElementsAre;

constexpr std::int64_t kT0 = 1'764'600'000'000'000'000;

power::DeviceSample gpu(std::uint64_t reasons = 0) {
  power::DeviceSample d;
  d.device = "0";
  d.uuid = "GPU-1";
  d.model = "H100";
  d.source = "nvml";
  d.pci_bus_id = "0000:18:00.0";
  d.clock_event_reasons = reasons;
  d.temperature_gpu_celsius = 80;
  d.power_watts = 300;
  d.sm_clock_hertz = 1200e6;
  d.sm_clock_max_hertz = 1980e6;
  d.pcie_gen_current = 5;
  d.pcie_width_current = 16;
  return d;
}

Snapshot at(std::int64_t seconds, std::vector<power::DeviceSample> devices) {
  Snapshot s;
  s.time_unix_nanos = kT0 + seconds * 1'000'000'000;
  s.devices = std::move(devices);
  return s;
}

std::vector<std::string> names(const std::vector<Event>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    out.push_back(e.event);
  }
  return out;
}

TEST(EventsTest, FirstRoundFindsEachDevice) {
  const auto events = detect_events(nullptr, at(0, {gpu()}));
  EXPECT_THAT(names(events), ElementsAre("device_found"));
  EXPECT_EQ(events[0].message, "device 0 (H100, nvml, 0000:18:00.0) found");
}

TEST(EventsTest, ThrottleReasonsStartAndStopWithTheirNumbers) {
  const auto a = at(0, {gpu(power::clock_event::kGpuIdle)});
  const auto b = at(1, {gpu(power::clock_event::kSwPowerCap)});
  const auto c = at(2, {gpu(0)});
  const auto started = detect_events(&a, b);
  ASSERT_THAT(names(started), ElementsAre("throttle_start"));  // gpu_idle is not a throttle
  EXPECT_EQ(started[0].level, "warning");
  EXPECT_EQ(
      started[0].message,
      "device 0: sw_power_cap holds the clocks down (SM clock 1200 of 1980 MHz, 80 C, 300 W)");
  EXPECT_EQ(started[0].numbers.at("power_watts"), 300);
  const auto stopped = detect_events(&b, c);
  ASSERT_THAT(names(stopped), ElementsAre("throttle_stop"));
  EXPECT_EQ(stopped[0].level, "info");
}

TEST(EventsTest, AThrottleStartNamesOnlyTheReadingsThereAre) {
  auto without = gpu(power::clock_event::kSwPowerCap);
  without.temperature_gpu_celsius.reset();  // an nvidia-smi log without temperature.gpu
  const auto a = at(0, {gpu(0)});
  const auto events = detect_events(&a, at(1, {without}));
  ASSERT_THAT(names(events), ElementsAre("throttle_start"));
  EXPECT_EQ(events[0].message,
            "device 0: sw_power_cap holds the clocks down (SM clock 1200 of 1980 MHz, 300 W)");
}

TEST(EventsTest, LostDeviceRetrainedLinkAndXidAreReported) {
  auto lost = gpu();
  lost.lost = true;
  const auto a = at(0, {gpu()});
  EXPECT_THAT(names(detect_events(&a, at(1, {lost}))), ElementsAre("device_lost"));
  auto slow = gpu();
  slow.pcie_gen_current = 1;
  const auto retrained = detect_events(&a, at(1, {slow}));
  ASSERT_THAT(names(retrained), ElementsAre("link_retrain"));
  EXPECT_EQ(retrained[0].message, "device 0: PCIe link retrained from Gen5 x16 to Gen1 x16");
  auto xid = gpu();
  xid.xids = {{79, kT0 + 5}};
  const auto x = detect_events(&a, at(1, {xid}));
  ASSERT_THAT(names(x), ElementsAre("xid"));
  EXPECT_EQ(x[0].time_unix_nanos, kT0 + 5);
  EXPECT_EQ(x[0].numbers.at("xid"), 79);
}

TEST(EventsTest, SourceFailuresAndDroppedReadingsAreReportedWhenTheyGrow) {
  auto a = at(0, {});
  auto b = at(1, {});
  b.stats.read_errors = {{"nvml", 1}};
  b.stats.last_error = {{"nvml", "nvmlDeviceGetCount_v2: Unknown Error (999)"}};
  b.stats.dropped_readings = 3;
  const auto events = detect_events(&a, b);
  ASSERT_THAT(names(events), ElementsAre("source_error", "readings_dropped"));
  EXPECT_EQ(events[0].message, "source nvml failed: nvmlDeviceGetCount_v2: Unknown Error (999)");
  EXPECT_TRUE(detect_events(&b, b).empty());  // nothing grew
}

TEST(EventsTest, JsonLineHasTimeLevelEventDeviceMessageAndNumbers) {
  Event e;
  e.time_unix_nanos = kT0 + 123'000'000;
  e.level = "warning";
  e.event = "throttle_start";
  e.device = "0";
  e.message = "m";
  e.numbers = {{"power_watts", 300}, {"bad", std::nan("")}};
  EXPECT_EQ(to_json_line(e),
            "{\"time\":\"2025-12-01T14:40:00.123Z\",\"level\":\"warning\",\"event\":"
            "\"throttle_start\",\"device\":\"0\",\"message\":\"m\",\"power_watts\":300.0}");
}

}  // namespace
}  // namespace acco::analyze
