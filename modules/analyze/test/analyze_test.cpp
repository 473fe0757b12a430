#include "acco/analyze/analyze.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/analyze/json.hpp"
#include "acco/analyze/recording.hpp"
#include "acco/power/simulated_device.hpp"
#include "acco/testing/files.hpp"

namespace acco::analyze {
namespace {

using ::acco::testing::expect_golden;
using ::acco::testing::slurp;
using ::acco::testing::updating_goldens;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::int64_t kStart = 1'767'225'600'000'000'000;  // 2026-01-01T00:00:00Z

// `seconds` of rounds at 1 s of simulated time, as `acco record --fast` takes them: each round
// is what monitor's sampler publishes at a 1 s interval (its round count, the readings it left
// out), with its own timings zero, which vary run to run and must not in the recordings kept as
// files (keep_recording compares them byte for byte).
std::vector<Snapshot> record(power::SimulatedScenario scenario, int devices, int seconds) {
  std::int64_t now = kStart;
  power::SimulatedSource source(devices, scenario, [&] { return now; });
  std::vector<Snapshot> out;
  std::uint64_t dropped = 0;
  for (int i = 0; i < seconds; ++i) {
    Snapshot s;
    s.time_unix_nanos = now;
    auto samples = source.read();
    EXPECT_TRUE(samples.has_value()) << samples.error().message;
    for (auto& d : samples.value_or(std::vector<power::DeviceSample>{})) {
      dropped += static_cast<std::uint64_t>(std::max(0, d.dropped_readings));
      s.devices.push_back(std::move(d));
    }
    s.stats.rounds = static_cast<std::uint64_t>(i) + 1;
    s.stats.interval_seconds = 1;
    s.stats.dropped_readings = dropped;
    out.push_back(std::move(s));
    now += 1'000'000'000;
  }
  return out;
}

// The recordings behind the golden reports, kept as files for `acco analyze` to read.
void keep_recording(const std::string& name, const std::vector<Snapshot>& rounds) {
  const auto path = std::filesystem::path(ACCO_ANALYZE_RECORDED_DIR) / name;
  std::string text;
  for (const auto& r : rounds) {
    text += to_json(r).dump() + "\n";
  }
  if (updating_goldens()) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return;
  }
  EXPECT_EQ(text, slurp(path)) << "recording " << name << " differs from the simulator's";
}

struct Case {
  power::SimulatedScenario scenario;
  Verdict expected;
};

class ScenarioTest : public ::testing::TestWithParam<Case> {};

TEST_P(ScenarioTest, ScriptedLoadGetsItsVerdict) {
  const auto rounds = record(GetParam().scenario, 1, 120);
  const std::string name = to_string(GetParam().scenario);
  keep_recording(name + ".jsonl", rounds);
  const auto report = analyze(rounds, {}, name + ".jsonl");
  ASSERT_EQ(report.devices.size(), 1U);
  EXPECT_EQ(report.devices[0].dominant, GetParam().expected)
      << acco::report::render_text(analyze_report(report));
  expect_golden("analyze." + name + ".txt", acco::report::render_text(analyze_report(report)));
}

INSTANTIATE_TEST_SUITE_P(
    Scenarios, ScenarioTest,
    ::testing::Values(Case{power::SimulatedScenario::kIdle, Verdict::kIdle},
                      Case{power::SimulatedScenario::kCompute, Verdict::kCompute},
                      Case{power::SimulatedScenario::kTransferBound, Verdict::kPcie},
                      Case{power::SimulatedScenario::kPowerCapped, Verdict::kPowerCap},
                      Case{power::SimulatedScenario::kThermalThrottle, Verdict::kThermal}),
    [](const ::testing::TestParamInfo<Case>& param) {
      std::string n = to_string(param.param.scenario);
      std::erase(n, '-');
      return n;
    });

TEST(AnalyzeTest, ARecordingAddsItsTimeBaseInstancesAndNotesFirst) {
  Recording recording;
  recording.rounds = record(power::SimulatedScenario::kCompute, 2, 60);
  recording.time_base = TimeBase::kNone;
  recording.instances["1"] = {"1 (1g.10gb): 7"};
  recording.notes = {"line 3: skipped"};
  const AnalyzeReport report = analyze_recording(recording, AnalyzeOptions{}, "run.jsonl");
  EXPECT_EQ(report.input, "run.jsonl");
  EXPECT_EQ(report.time_base, TimeBase::kNone);
  ASSERT_EQ(report.devices.size(), 2U);
  EXPECT_TRUE(report.devices[0].instances.empty());
  EXPECT_EQ(report.devices[1].instances, std::vector<std::string>{"1 (1g.10gb): 7"});
  ASSERT_FALSE(report.notes.empty());
  EXPECT_EQ(report.notes.front(), "line 3: skipped");
}

TEST(AnalyzeTest, CycleGivesEachPhaseItsVerdictPerDevice) {
  const auto report = analyze(record(power::SimulatedScenario::kCycle, 2, 120), {});
  ASSERT_EQ(report.devices.size(), 2U);
  // 30 s phases: device 0 idles, computes, transfers, computes hard; device 1 one phase ahead.
  std::vector<std::string> v0;
  for (const auto& w : report.devices[0].windows) {
    v0.push_back(to_string(w.verdict));
  }
  // The hard phase draws 75 + 1.1 x 625 = 762 W, above the 700 W limit.
  EXPECT_THAT(v0, ::testing::ElementsAre("idle", "compute", "pcie", "power_cap"));
  EXPECT_EQ(to_string(report.devices[1].windows[0].verdict), std::string("compute"));
  expect_golden("analyze.cycle.txt", acco::report::render_text(analyze_report(report)));
}

TEST(AnalyzeTest, VerdictsCiteTheirNumbers) {
  const auto capped = analyze(record(power::SimulatedScenario::kPowerCapped, 1, 60), {});
  const auto& w = capped.devices[0].windows.back();
  EXPECT_THAT(w.why, HasSubstr("the power-cap reasons held the clocks in 100% of the busy samples "
                               "at 300 W = 100% of the 300 W limit"));
  EXPECT_NEAR(*w.numbers.power_watts, 300, 1);
  const auto json = to_json(capped);
  EXPECT_EQ(json["schema"], "acco.analyze/1");
  EXPECT_EQ(json["devices"][0]["dominant"], "power_cap");
  EXPECT_EQ(json["devices"][0]["windows"][1]["numbers"]["power_cap_share"], 1.0);
}

power::DeviceSample busy_with(double util) {
  power::DeviceSample d;
  d.device = "0";
  d.utilization_ratio = util;
  d.clock_event_reasons = 0;
  d.sm_clock_hertz = 1980e6;
  d.sm_clock_max_hertz = 1980e6;
  d.pcie_gen_current = 5;
  d.pcie_width_current = 16;
  d.pcie_rx_bytes_per_second = 0;
  d.pcie_tx_bytes_per_second = 0;
  return d;
}

std::vector<Snapshot> rounds_of(const std::vector<power::DeviceSample>& per_round,
                                const std::vector<std::optional<power::HostSample>>& hosts = {}) {
  std::vector<Snapshot> out;
  for (std::size_t i = 0; i < per_round.size(); ++i) {
    Snapshot s;
    s.time_unix_nanos = kStart + static_cast<std::int64_t>(i) * 1'000'000'000;
    s.devices = {per_round[i]};
    if (i < hosts.size()) {
      s.host = hosts[i];
    }
    out.push_back(s);
  }
  return out;
}

TEST(AnalyzeTest, StarvedDeviceOnABusyHostIsHostBound) {
  std::vector<power::DeviceSample> devices(5, busy_with(0.2));
  std::vector<std::optional<power::HostSample>> hosts;
  for (int i = 0; i < 5; ++i) {
    power::HostSample h;
    h.cpu.seconds = {{"user", 100.0 + i * 1.9}, {"idle", 50.0 + i * 0.1}};
    hosts.push_back(h);
  }
  const auto report = analyze(rounds_of(devices, hosts), {});
  EXPECT_EQ(report.devices[0].dominant, Verdict::kHost)
      << acco::report::render_text(analyze_report(report));
  EXPECT_THAT(report.devices[0].windows[0].why, HasSubstr("host CPUs were 95% busy"));
}

TEST(AnalyzeTest, IdleNvlinksWhilePcieIsBusyAreLinkUnderuse) {
  std::vector<power::DeviceSample> devices;
  for (int i = 0; i < 5; ++i) {
    auto d = busy_with(0.6);
    d.pcie_rx_bytes_per_second = 40e9;
    d.nvlinks = {{0, true, 25e9, 1000, 1000}, {1, true, 25e9, 1000, 1000}};
    devices.push_back(d);
  }
  const auto report = analyze(rounds_of(devices), {});
  EXPECT_EQ(report.devices[0].dominant, Verdict::kLinkUnderuse)
      << acco::report::render_text(analyze_report(report));
}

TEST(AnalyzeTest, SaturatedNvlinkWithLittleComputeIsNvlinkBound) {
  std::vector<power::DeviceSample> devices;
  for (std::uint64_t i = 0; i < 5; ++i) {
    auto d = busy_with(0.3);
    const std::uint64_t bytes = i * 40'000'000'000ULL;  // 40 GB/s on 2 x 25 GB/s links
    d.nvlinks = {{0, true, 25e9, bytes / 2, bytes / 2}, {1, true, 25e9, bytes / 2, bytes / 2}};
    devices.push_back(d);
  }
  const auto report = analyze(rounds_of(devices), {});
  EXPECT_EQ(report.devices[0].dominant, Verdict::kNvlink)
      << acco::report::render_text(analyze_report(report));
}

TEST(AnalyzeTest, BusyMemoryIsMemoryBound) {
  std::vector<power::DeviceSample> devices;
  for (int i = 0; i < 5; ++i) {
    auto d = busy_with(0.7);
    d.memory_utilization_ratio = 0.8;
    devices.push_back(d);
  }
  EXPECT_EQ(analyze(rounds_of(devices), {}).devices[0].dominant, Verdict::kMemory);
}

TEST(AnalyzeTest, FiltersByTimeAndDeviceAndSaysWhatIsMissing) {
  const auto rounds = record(power::SimulatedScenario::kCycle, 2, 60);
  AnalyzeOptions only;
  only.device = "1";
  only.since_unix_nanos = kStart + 30'000'000'000LL;
  const auto report = analyze(rounds, only);
  ASSERT_EQ(report.devices.size(), 1U);
  EXPECT_EQ(report.devices[0].device, "1");
  EXPECT_EQ(report.rounds, 30U);
  EXPECT_THAT(report.notes, ::testing::Contains(HasSubstr("no host readings")));
  only.device = "7";
  EXPECT_THAT(analyze(rounds, only).notes, ::testing::Contains("device 7 is not in the recording"));
  EXPECT_THAT(analyze({}, {}).notes, ::testing::Contains("no rounds in the selected time range"));
}

TEST(AnalyzeTest, ThrottleEventsAreGroupedWarningsFirst) {
  const auto report = analyze(record(power::SimulatedScenario::kThermalThrottle, 1, 120), {});
  ASSERT_FALSE(report.events.empty());
  EXPECT_EQ(report.events[0].event, "throttle_start");
  EXPECT_GE(report.events[0].numbers.at("count"), 1);
}

TEST(AnalyzeTest, NoUtilizationReadingIsUnknownNeverIdle) {
  // A DCGM scrape where the GPU has only a power limit and a replay counter.
  power::DeviceSample d;
  d.device = "0";
  d.power_limit_requested_watts = 700;
  d.pcie_replays = 0;
  const auto report = analyze(rounds_of(std::vector<power::DeviceSample>(5, d)), {});
  ASSERT_EQ(report.devices.size(), 1U);
  const auto& w = report.devices[0].windows.at(0);
  EXPECT_EQ(w.verdict, Verdict::kUnknown) << acco::report::render_text(analyze_report(report));
  EXPECT_THAT(w.why, HasSubstr("no utilization readings"));
  EXPECT_EQ(w.numbers.utilization, std::nullopt);
  EXPECT_EQ(w.numbers.power_cap_share, std::nullopt);
  const auto json = to_json(report);
  EXPECT_TRUE(json["devices"][0]["windows"][0]["numbers"]["utilization"].is_null());
  EXPECT_EQ(json["devices"][0]["dominant"], "unknown");
  EXPECT_THAT(acco::report::render_text(analyze_report(report)), Not(HasSubstr("idle")));
}

TEST(AnalyzeTest, WithoutPcieReadingsNoPcieNumberIsClaimed) {
  auto d = busy_with(0.97);
  d.pcie_gen_current.reset();
  d.pcie_width_current.reset();
  d.pcie_rx_bytes_per_second.reset();
  d.pcie_tx_bytes_per_second.reset();
  const auto report = analyze(rounds_of(std::vector<power::DeviceSample>(5, d)), {});
  const auto& w = report.devices[0].windows.at(0);
  EXPECT_EQ(w.verdict, Verdict::kCompute);
  EXPECT_THAT(w.why, HasSubstr("with no throttling, PCIe not recorded"));
  EXPECT_THAT(w.why, Not(HasSubstr("PCIe at")));
  EXPECT_EQ(w.numbers.pcie_rx_utilization, std::nullopt);
}

TEST(AnalyzeTest, PowerCapBitsInMostBusySamplesArePowerCapWellBelowTheLimit) {
  // An H800 held by sw_power_cap in every busy row at 600 W of 700 W, the clock 200 MHz under
  // its uncapped value: the bitmask is direct evidence, whatever the power reads.
  std::vector<power::DeviceSample> devices;
  for (int i = 0; i < 10; ++i) {
    auto d = busy_with(0.98);
    d.clock_event_reasons = power::clock_event::kSwPowerCap;
    d.power_watts = 600;
    d.power_limit_enforced_watts = 700;
    d.memory_utilization_ratio = 0.7;  // would be "memory" without the bits
    d.sm_clock_hertz = i == 0 ? 1980e6 : 1780e6;
    d.sm_clock_max_hertz.reset();
    devices.push_back(d);
  }
  const auto report = analyze(rounds_of(devices), {});
  const auto& w = report.devices[0].windows.at(0);
  EXPECT_EQ(w.verdict, Verdict::kPowerCap) << acco::report::render_text(analyze_report(report));
  EXPECT_THAT(w.why, HasSubstr("the power-cap reasons held the clocks in 100% of the busy samples "
                               "at 600 W = 86% of the 700 W limit; SM clock 1800 MHz, 91% of "
                               "the highest recorded"));
  EXPECT_EQ(w.numbers.sm_clock_reference, "highest_seen");
}

TEST(AnalyzeTest, ThermalBitsInMostBusySamplesAreThermalWithoutAClockReading) {
  std::vector<power::DeviceSample> devices;
  for (int i = 0; i < 5; ++i) {
    auto d = busy_with(0.95);
    d.clock_event_reasons = power::clock_event::kHwThermalSlowdown;
    d.sm_clock_hertz.reset();
    devices.push_back(d);
  }
  const auto report = analyze(rounds_of(devices), {});
  EXPECT_EQ(report.devices[0].windows.at(0).verdict, Verdict::kThermal)
      << acco::report::render_text(analyze_report(report));
}

TEST(AnalyzeTest, SomePowerCapSamplesAreNamedNeverNoThrottling) {
  std::vector<power::DeviceSample> devices;
  for (int i = 0; i < 10; ++i) {
    auto d = busy_with(0.97);
    d.clock_event_reasons = i < 3 ? power::clock_event::kSwPowerCap : 0;
    devices.push_back(d);
  }
  const auto report = analyze(rounds_of(devices), {});
  const auto& w = report.devices[0].windows.at(0);
  EXPECT_EQ(w.verdict, Verdict::kCompute);
  EXPECT_THAT(w.why, HasSubstr("power cap in 30% and thermal slowdown in 0% of the busy samples"));
  EXPECT_THAT(w.why, Not(HasSubstr("no throttling")));
}

TEST(AnalyzeTest, TheManagementLimitIsThePowerLimitWithoutAnEnforcedOne) {
  auto d = busy_with(0.97);
  d.power_watts = 650;
  d.power_limit_requested_watts = 700;  // DCGM_FI_DEV_POWER_MGMT_LIMIT, nvidia-smi power.limit
  const auto report = analyze(rounds_of(std::vector<power::DeviceSample>(3, d)), {});
  EXPECT_EQ(report.devices[0].windows.at(0).numbers.power_limit_watts, 700);
  EXPECT_THAT(acco::report::render_text(analyze_report(report)), HasSubstr("650 W / 700 W"));
}

TEST(AnalyzeTest, OffsetsRollOverTheMinute) {
  std::vector<Snapshot> rounds;
  for (const std::int64_t ms : {0, 60'000, 119'700, 179'600, 239'600}) {
    Snapshot s;
    s.time_unix_nanos = kStart + ms * 1'000'000;
    s.devices = {busy_with(0.97)};
    rounds.push_back(s);
  }
  AnalyzeOptions options;
  options.window_seconds = 60;
  const auto text = acco::report::render_text(analyze_report(analyze(rounds, options)));
  EXPECT_THAT(text, HasSubstr("+4:00"));
  EXPECT_THAT(text, Not(HasSubstr(":60")));
}

TEST(AnalyzeTest, LocalTimesAreNotShownAsUtcAndAFileWithoutTimesHasNoDate) {
  auto report = analyze(rounds_of(std::vector<power::DeviceSample>(3, busy_with(0.97))), {});
  report.time_base = TimeBase::kLocalUnknownZone;
  EXPECT_THAT(acco::report::render_text(analyze_report(report)),
              HasSubstr("(2026-01-01T00:00:00.000 to 2026-01-01T00:00:02.000, local time, zone "
                        "unknown)"));
  EXPECT_EQ(to_json(report)["start"], "2026-01-01T00:00:00.000");
  EXPECT_EQ(to_json(report)["time_base"], "local");

  std::vector<Snapshot> untimed = rounds_of(std::vector<power::DeviceSample>(3, busy_with(0.97)));
  for (std::size_t i = 0; i < untimed.size(); ++i) {
    untimed[i].time_unix_nanos = static_cast<std::int64_t>(i) * 1'000'000'000;
  }
  auto none = analyze(untimed, {}, "run.csv");
  none.time_base = TimeBase::kNone;
  const auto text = acco::report::render_text(analyze_report(none));
  EXPECT_THAT(text, HasSubstr("run.csv: 3 round(s) over 2.00 s, no dates in the file (times are "
                              "offsets from the first round), 1 device(s)"));
  EXPECT_THAT(text, Not(HasSubstr("1970")));
  EXPECT_TRUE(to_json(none)["start"].is_null());

  auto one = analyze(rounds_of({busy_with(0.97)}), {});
  EXPECT_THAT(acco::report::render_text(analyze_report(one)),
              HasSubstr("1 round(s) at 2026-01-01T00:00:00.000Z"));
  one.time_base = TimeBase::kNone;
  EXPECT_THAT(acco::report::render_text(analyze_report(one)),
              HasSubstr(": 1 round(s), no dates in the file, 1 device(s)"));
}

TEST(AnalyzeTest, SinceAtAFractionalUnixTimeKeepsTheSampleAtExactlyThatTime) {
  std::vector<Snapshot> rounds = rounds_of(std::vector<power::DeviceSample>(3, busy_with(0.97)));
  rounds[1].time_unix_nanos = 1'767'225'600'123'456'789;
  rounds[2].time_unix_nanos = 1'767'225'601'000'000'000;
  AnalyzeOptions options;
  options.since_unix_nanos = parse_time("1767225600.123456789").value();
  EXPECT_EQ(analyze(rounds, options).rounds, 2U);
}

}  // namespace
}  // namespace acco::analyze

namespace acco::analyze {
namespace {

TEST(AnalyzeSetupTest, TheFlagsBecomeTheOptionsAndTheRecordingOnlyFlagsAreListed) {
  auto s = analyze_setup({.since = "2026-12-01T16:25:24Z", .device = "1", .window = "1m"});
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ(s->analyze.since_unix_nanos, std::int64_t{1796142324} * 1'000'000'000);
  EXPECT_FALSE(s->analyze.until_unix_nanos.has_value());
  EXPECT_DOUBLE_EQ(s->analyze.window_seconds, 60);
  EXPECT_EQ(s->analyze.device, "1");
  EXPECT_EQ(s->recording_flags, (std::vector<std::string>{"--since", "--device", "--window"}));
  auto defaults = analyze_setup({});
  ASSERT_TRUE(defaults.has_value());
  EXPECT_DOUBLE_EQ(defaults->analyze.window_seconds, 30);
  EXPECT_TRUE(defaults->recording_flags.empty());
}

TEST(AnalyzeSetupTest, EachBadValueIsNamedAsItsFlag) {
  const auto message = [](const AnalyzeRequest& r) {
    auto s = analyze_setup(r);
    EXPECT_FALSE(s.has_value());
    return s ? std::string() : s.error().message;
  };
  EXPECT_EQ(message({.since = "2000", .until = "1000"}), "--until is before --since");
  EXPECT_EQ(message({.window = "2d"}), "--window: '2d' is not a duration from 1s to 1d (e.g. 30s)");
  EXPECT_EQ(message({.interval = "0s"}),
            "--interval: '0s' is not a duration up to 1d (e.g. 1s, 100ms)");
  EXPECT_EQ(message({.until = "yesterday"}),
            "--until: 'yesterday' is not a time (RFC 3339 such as 2026-12-01T16:25:24Z)");
}

}  // namespace
}  // namespace acco::analyze
