// /metrics text read back through analyze's Prometheus reader: what the daemon serves, a saved
// scrape of it gives back to `acco analyze`.
#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/analyze/recorded_readers.hpp"
#include "acco/monitor/metrics.hpp"
#include "acco/power/simulated_device.hpp"

namespace acco::monitor {
namespace {

std::vector<analyze::Snapshot> read(const std::string& text) {
  auto r = analyze::read_prometheus_scrapes(text, "scrape.prom");
  EXPECT_TRUE(r.has_value()) << r.error().message;
  return r.value_or(std::vector<analyze::Snapshot>{});
}

analyze::Snapshot simulated_snapshot() {
  constexpr std::int64_t kRenderedAt = 1'796'142'324'250'000'000;
  analyze::Snapshot s;
  s.time_unix_nanos = kRenderedAt;
  power::SimulatedDevice busy(0);
  busy.set_load({.utilization = 1,
                 .activity = 0.8,
                 .pcie_rx_bytes_per_second = 12.6e9,
                 .pcie_tx_bytes_per_second = 1e9,
                 .memory_used_bytes = 1ULL << 30});
  busy.advance(30);
  s.devices.push_back(busy.sample(kRenderedAt));
  power::SimulatedDevice idle(1);
  s.devices.push_back(idle.sample(kRenderedAt));
  power::DeviceSample lost;
  lost.device = "2";
  lost.uuid = "SIM-2";
  lost.model = "acco simulated H100-class 700 W";
  lost.source = "simulated";
  lost.time_unix_nanos = kRenderedAt;
  lost.lost = true;
  s.devices.push_back(lost);
  s.stats.rounds = 7;
  s.stats.read_errors = {{"nvml", 2}};
  s.stats.interval_seconds = 0.5;
  s.stats.last_round_seconds = 0.002;
  s.stats.cpu_seconds = 1.25;
  s.stats.dropped_readings = 3;
  return s;
}

// What render_metrics carries of a sample: all but the source, XIDs and per-device drops.
power::DeviceSample carried(power::DeviceSample d) {
  d.source = "acco";
  d.xids.clear();
  d.dropped_readings = 0;
  return d;
}

// One device of `original` read back as `got` from its rendering (`back` the whole snapshot read).
void expect_device_reads_back(const analyze::Snapshot& original, const analyze::Snapshot& back,
                              const power::DeviceSample& want, const power::DeviceSample& got,
                              bool compat) {
  // Prometheus text carries 16 significant digits: compare numbers to the last bit or two.
  EXPECT_TRUE(got.temperature_gpu_celsius.has_value() == want.temperature_gpu_celsius.has_value());
  if (want.power_watts) {
    EXPECT_DOUBLE_EQ(*got.power_watts, *want.power_watts);
    EXPECT_DOUBLE_EQ(*got.energy_joules, *want.energy_joules);
    EXPECT_DOUBLE_EQ(*got.sm_clock_hertz, *want.sm_clock_hertz);
    EXPECT_DOUBLE_EQ(*got.utilization_ratio, *want.utilization_ratio);
    EXPECT_DOUBLE_EQ(*got.temperature_gpu_celsius, *want.temperature_gpu_celsius);
  }
  EXPECT_EQ(got.memory_used_bytes, want.memory_used_bytes);
  EXPECT_EQ(got.clock_event_reasons, want.clock_event_reasons);
  EXPECT_EQ(got.lost, want.lost);
  EXPECT_EQ(got.uuid, want.uuid);
  EXPECT_EQ(got.dropped_readings, 0);
  // Rendering what was read gives the same text, so every series was read back.
  analyze::Snapshot one = original;
  one.devices = {want};
  analyze::Snapshot one_back = back;
  one_back.devices = {got};
  EXPECT_EQ(render_metrics(one_back, {.dcgm_compat = compat, .version = "1.0"}),
            render_metrics(one, {.dcgm_compat = compat, .version = "1.0"}));
}

TEST(MetricsReadBackTest, AccoMetricsReadBackToTheSnapshotTheyWereRenderedFrom) {
  const analyze::Snapshot original = simulated_snapshot();
  for (const bool compat : {false, true}) {
    const std::string text = render_metrics(original, {.dcgm_compat = compat, .version = "1.0"});
    const auto scrapes = read(text);
    ASSERT_EQ(scrapes.size(), 1U);
    const analyze::Snapshot& back = scrapes[0];
    EXPECT_EQ(back.time_unix_nanos, original.time_unix_nanos);
    EXPECT_EQ(back.stats, original.stats);
    ASSERT_EQ(back.devices.size(), original.devices.size());
    for (std::size_t i = 0; i < back.devices.size(); ++i) {
      SCOPED_TRACE("device " + std::to_string(i) + (compat ? " with --compat=dcgm" : ""));
      expect_device_reads_back(original, back, carried(original.devices[i]), back.devices[i],
                               compat);
    }
  }
}

// Every field /metrics carries, with values the text holds exactly, comes back equal.
TEST(MetricsReadBackTest, EveryFieldAccoRendersComesBackEqual) {
  power::DeviceSample d;
  d.device = "3";
  d.uuid = "GPU-8d1c0f4e";
  d.pci_bus_id = "0000:3b:00.0";
  d.model = "NVIDIA H100 80GB HBM3";
  d.source = "acco";
  d.time_unix_nanos = 1'796'142'324'000'000'000;
  d.temperature_gpu_celsius = 61;
  d.temperature_memory_celsius = 70.5;
  d.threshold_gpu_max_celsius = 87;
  d.threshold_slowdown_celsius = 90;
  d.threshold_shutdown_celsius = 92;
  d.threshold_memory_max_celsius = 95;
  d.thermal_margin_celsius = 26;
  d.power_watts = 650.25;
  d.power_limit_enforced_watts = 700;
  d.power_limit_requested_watts = 690;
  d.power_limit_default_watts = 700;
  d.power_limit_min_watts = 200;
  d.power_limit_max_watts = 700;
  d.energy_joules = 123456.75;
  d.sm_clock_hertz = 1755e6;
  d.memory_clock_hertz = 2619e6;
  d.sm_clock_max_hertz = 1980e6;
  d.memory_clock_max_hertz = 2619e6;
  d.pstate = 2;
  d.utilization_ratio = 0.5;
  d.memory_utilization_ratio = 0.25;
  d.memory_total_bytes = 81559ULL << 20;
  d.memory_used_bytes = 70000ULL << 20;
  d.memory_free_bytes = 11559ULL << 20;
  d.pcie_tx_bytes_per_second = 1e9;
  d.pcie_rx_bytes_per_second = 12.5e9;
  d.pcie_replays = 4;
  d.pcie_gen_current = 5;
  d.pcie_width_current = 16;
  d.pcie_gen_max = 5;
  d.pcie_width_max = 16;
  d.clock_event_reasons = power::clock_event::kSwPowerCap | power::clock_event::kHwSlowdown;
  d.throttle_seconds = {{"power", 12.5}, {"thermal", 0.25}};
  d.nvlinks = {{0, true, 25e9, 1000, 2000}, {1, false, std::nullopt, 0, 0}};
  power::DeviceSample suspended;
  suspended.device = "4";
  suspended.uuid = "GPU-2f6b9a7c";
  suspended.pci_bus_id = "0000:5e:00.0";
  suspended.model = d.model;
  suspended.source = "acco";
  suspended.time_unix_nanos = d.time_unix_nanos;
  suspended.suspended = true;
  analyze::Snapshot s;
  s.time_unix_nanos = d.time_unix_nanos;
  s.devices = {d, suspended};
  s.stats.rounds = 3;
  const auto back = read(render_metrics(s, {}));
  ASSERT_EQ(back.size(), 1U);
  EXPECT_EQ(back[0], s);
}

}  // namespace
}  // namespace acco::monitor
