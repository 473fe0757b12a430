#include "acco/analyze/json.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/power/simulated_device.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::analyze {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::HasSubstr;

TEST(JsonTest, DeviceSampleRoundTrips) {
  power::SimulatedModel model;
  model.nvlink_supported = true;
  power::SimulatedDevice d(2, model);
  d.set_load({.utilization = 1, .activity = 1, .pcie_rx_bytes_per_second = 1e9});
  (void)d.set_power_limit(300);
  d.advance(5);
  auto sample = d.sample(123);
  sample.xids = {{79, 5}};
  sample.dropped_readings = 1;
  const auto back = device_sample_from_json(nlohmann::json::parse(to_json(sample).dump()));
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(*back, sample);
}

TEST(JsonTest, SnapshotRoundTripsWithHostAndStats) {
  Snapshot s;
  s.time_unix_nanos = 1'764'600'000'000'000'000;
  power::SimulatedDevice d(0);
  s.devices.push_back(d.sample(s.time_unix_nanos));
  power::DeviceSample lost;
  lost.device = "1";
  lost.lost = true;
  s.devices.push_back(lost);
  power::HostSample h;
  h.cpu.cpus = 2;
  h.cpu.seconds = {{"user", 10}, {"idle", 90}};
  h.memory_bytes = {{"total", 1024}};
  h.pressure = {{"cpu", "some", 1.5, 0.25}};
  h.disks = {{"vda", 512, 1024, 1, 2, 0.5, {}}, {"md0", 0, 0, 0, 0, 0, {"vda1", "vdb1"}}};
  h.net = {{"eth0", 1, 2, 0, 0, 3, 4, 0, 0, true}, {"docker0", 5, 6, 0, 0, 0, 0, 0, 0, false}};
  h.issues = {"/proc/x: bad"};
  s.host = h;
  s.stats.rounds = 3;
  s.stats.read_errors = {{"nvml", 1}};
  const auto back = snapshot_from_json(nlohmann::json::parse(to_json(s).dump()));
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(back->devices, s.devices);
  EXPECT_EQ(back->time_unix_nanos, s.time_unix_nanos);
  ASSERT_TRUE(back->host.has_value());
  EXPECT_EQ(back->host->cpu, h.cpu);
  EXPECT_EQ(back->host->pressure, h.pressure);
  EXPECT_EQ(back->host->disks, h.disks);
  EXPECT_EQ(back->host->issues, h.issues);
  EXPECT_EQ(back->host->net[0].rx_bytes, 1U);
  EXPECT_TRUE(back->host->net[0].physical);
  EXPECT_FALSE(back->host->net[1].physical);
  EXPECT_EQ(back->stats.rounds, 3U);
  EXPECT_EQ(back->stats.read_errors.at("nvml"), 1U);
}

TEST(JsonTest, BadFieldsAreNamedByPath) {
  const auto bad = snapshot_from_json(nlohmann::json::parse(
      R"({"time_unix_nanos": 1, "devices": [{"device": "0"}, {"device": "1", "power_watts": "hot"}]})"));
  ASSERT_THAT(bad, StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(bad.error().message, HasSubstr("devices[1].power_watts: expected a number"));
  const auto busy = snapshot_from_json(nlohmann::json::parse(
      R"({"time_unix_nanos": 1, "devices": [{"device": "0", "utilization_ratio": 1e308}]})"));
  ASSERT_THAT(busy, StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(busy.error().message,
              HasSubstr("devices[0].utilization_ratio: expected a ratio from 0 to 1"));
  const auto missing = snapshot_from_json(nlohmann::json::parse(R"({"devices": []})"));
  ASSERT_FALSE(missing.has_value());
  EXPECT_THAT(missing.error().message, HasSubstr("time_unix_nanos: missing"));
  EXPECT_FALSE(snapshot_from_json(nlohmann::json::parse("[1]")).has_value());
}

}  // namespace
}  // namespace acco::analyze
