// /api/v1/summary's document: each device's scales as it reported them, the host's rates and
// what the daemon looked for; golden for a simulated device beside a lost one.
#include "acco/monitor/summary.hpp"

#include <cstdint>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "acco/power/simulated_device.hpp"
#include "acco/testing/files.hpp"

namespace acco::monitor {
namespace {

using ::acco::testing::expect_golden;

constexpr std::int64_t kSummaryT0 = 1'767'225'600'000'000'000;  // 2026-01-01T00:00:00Z
constexpr std::int64_t kSummarySecond = 1'000'000'000;

power::HostSample summary_host(std::int64_t t, std::uint64_t step) {
  power::HostSample h;
  h.time_unix_nanos = t;
  h.cpu.cpus = 4;
  h.cpu.seconds = {{"user", 10.0 + 3.0 * static_cast<double>(step)},
                   {"idle", 100.0 + static_cast<double>(step)}};
  h.memory_bytes = {{"total", 32ULL << 30}, {"available", 24ULL << 30}};
  h.net = {{"lo", 0, 0, 0, 0, 0, 0, 0, 0, false},
           {"eth0", 1'000'000 * step, 250'000 * step, 0, 0, 0, 0, 0, 0, true},
           {"docker0", 500'000 * step, 0, 0, 0, 0, 0, 0, 0, false}};
  h.disks = {{"nvme0n1", 4'000'000 * step, 2'000'000 * step, 0, 0, 0, {}},
             {"dm-0", 4'000'000 * step, 2'000'000 * step, 0, 0, 0, {"nvme0n1p3"}}};
  return h;
}

analyze::Snapshot summary_round(std::int64_t t, std::uint64_t step) {
  analyze::Snapshot s;
  s.time_unix_nanos = t;
  power::SimulatedDevice d(0);
  s.devices.push_back(d.sample(t));
  power::DeviceSample lost;
  lost.device = "1";
  lost.uuid = "GPU-lost";
  lost.model = "NVIDIA H100 80GB HBM3";
  lost.source = "nvml";
  lost.pci_bus_id = "0000:19:00.0";
  lost.lost = true;
  s.devices.push_back(lost);
  s.host = summary_host(t, step);
  return s;
}

TEST(SummaryTest, DevicesCarryTheirScalesAndTheHostItsRates) {
  const auto before = summary_round(kSummaryT0, 1);
  const auto now = summary_round(kSummaryT0 + kSummarySecond, 2);
  SourceOptions options;
  options.simulate = 1;
  const auto sources = sources_info(options, "/", "unavailable (cannot load libnvidia-ml.so.1)");
  expect_golden("summary.sim.json",
                nlohmann::ordered_json::parse(summary_json(now, &before, &sources)).dump(2) + "\n");
}

TEST(SummaryTest, TheSimulatedDeviceLinkIsGen5X16AndItsThresholdsAscend) {
  const auto now = summary_round(kSummaryT0, 1);
  const auto j = nlohmann::json::parse(summary_json(now, nullptr, nullptr));
  const auto& d = j["devices"][0];
  EXPECT_EQ(d["pcie_link"], "PCIe Gen5 x16");
  EXPECT_EQ(d["pcie_peak"], "63.0 GB/s");
  EXPECT_EQ(d["power_limit_watts"], 700.0);
  // The simulated device reports its memory temperature, so the memory's limit is there too.
  ASSERT_EQ(d["temperature_limits"].size(), 4U);
  EXPECT_EQ(d["temperature_limits"][0]["name"], "max operating");
  EXPECT_EQ(d["temperature_limits"][2]["name"], "shutdown");
  EXPECT_EQ(d["temperature_limits"][2]["celsius"], 92.0);
  EXPECT_EQ(d["temperature_limits"][3]["name"], "memory max");
  EXPECT_EQ(j["devices"][1]["state"], "lost");
  EXPECT_FALSE(j["devices"][1].contains("pcie_link"));
  EXPECT_TRUE(j["sources"].is_null());
  // The first round: no previous one, so no CPU share and no rates, but the names.
  EXPECT_FALSE(j["host"].contains("cpu_busy_ratio"));
  EXPECT_FALSE(j["host"].contains("network_receive_bytes_per_second"));
  EXPECT_EQ(j["host"]["interfaces"], nlohmann::json::array({"eth0"}));
}

TEST(SummaryTest, NoDeviceAndNoHostAreAnEmptyListAndNull) {
  analyze::Snapshot s;
  s.time_unix_nanos = kSummaryT0;
  SourceOptions options;
  options.nvml_mode = "off";
  options.host = false;
  const auto sources = sources_info(options, "/tmp/root", "off");
  const auto j = nlohmann::json::parse(summary_json(s, nullptr, &sources));
  EXPECT_EQ(j["time"], "2026-01-01T00:00:00.000Z");
  EXPECT_EQ(j["devices"], nlohmann::json::array());
  EXPECT_TRUE(j["host"].is_null());
  EXPECT_EQ(j["sources"]["nvml"], "off");
  EXPECT_EQ(j["sources"]["nvml_mode"], "off");
  EXPECT_EQ(j["sources"]["simulated"], 0);
  EXPECT_EQ(j["sources"]["host"], false);
  EXPECT_EQ(j["sources"]["sysroot"], "/tmp/root");
}

}  // namespace
}  // namespace acco::monitor
