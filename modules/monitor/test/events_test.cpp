#include "acco/monitor/events.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "acco/testing/matchers.hpp"

namespace acco::monitor {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

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

TEST(EventLogTest, KeepsRecentEventsAndWritesJsonLines) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("acco_events_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "events.jsonl";
  auto log = EventLog::open({.path = path.string(), .keep = 2});
  ASSERT_THAT(log, IsOk());
  for (int i = 0; i < 3; ++i) {
    Event e;
    e.time_unix_nanos = kT0 + i;
    e.level = "info";
    e.event = "device_found";
    e.message = std::to_string(i);
    (*log)->add(e);
  }
  EXPECT_EQ((*log)->size(), 2U);
  const auto recent = (*log)->since(kT0 + 2);
  EXPECT_THAT(recent, HasSubstr("\"message\":\"2\""));
  EXPECT_THAT(recent, ::testing::Not(HasSubstr("\"message\":\"1\"")));
  (*log)->flush();
  std::ifstream in(path);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    EXPECT_FALSE(nlohmann::json::parse(line, nullptr, false).is_discarded()) << line;
    ++lines;
  }
  EXPECT_EQ(lines, 3);  // the file keeps everything; memory keeps the last two
  std::filesystem::remove_all(dir);
}

TEST(EventLogTest, UnwritablePathIsCannotWrite) {
  const auto r = EventLog::open({.path = "/proc/acco-no-such-dir/events.jsonl"});
  ASSERT_THAT(r, StatusIs(Errc::kCannotWrite));
  EXPECT_THAT(r.error().message, HasSubstr("cannot open the event log /proc/acco-no-such-dir"));
}

// spdlog's sink would make the directory (a robustness sweep: `serve --log /nonexist/l.jsonl`
// created /nonexist); a missing one is refused as for every other output.
TEST(EventLogTest, AMissingDirectoryIsCannotWriteAndIsNotMade) {
  const auto dir = std::filesystem::temp_directory_path() / "acco-events-missing-dir";
  std::filesystem::remove_all(dir);
  const auto r = EventLog::open({.path = (dir / "events.jsonl").string()});
  ASSERT_THAT(r, StatusIs(Errc::kCannotWrite));
  EXPECT_THAT(r.error().message, HasSubstr("does not exist"));
  EXPECT_FALSE(std::filesystem::exists(dir));
}

// A named pipe no one reads held spdlog's open() for ever (`serve --log FIFO` never started, and
// SIGTERM could not stop it). A pipe with a reader, or a device (/dev/stdout), is written.
TEST(EventLogTest, APipeThatNoOneReadsIsRefusedNotOpened) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("acco-events-fifo-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto pipe = dir / "events.jsonl";
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  const auto r = EventLog::open({.path = pipe.string()});
  ASSERT_THAT(r, StatusIs(Errc::kCannotWrite));
  EXPECT_THAT(r.error().message, HasSubstr("a pipe that no one reads"));
  EXPECT_TRUE(std::filesystem::is_fifo(pipe));
  const int reader = ::open(pipe.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  EXPECT_THAT(EventLog::open({.path = pipe.string()}), IsOk());
  ::close(reader);
  EXPECT_THAT(EventLog::open({.path = "/dev/null"}), IsOk());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace acco::monitor
