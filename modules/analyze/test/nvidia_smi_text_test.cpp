// nvidia-smi's text outputs, dmon and -q, generated here from their documented layout, read
// through parse_recording as acco analyze reads them, with the verdict a person would give.
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/analyze/analyze.hpp"
#include "acco/analyze/recorded_readers.hpp"
#include "acco/analyze/recording.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::analyze {
namespace {

using ::acco::testing::IsOk;
using ::testing::Contains;
using ::testing::HasSubstr;

// 2026-12-01 16:25:24 read as UTC
constexpr std::int64_t kT0 = 1'796'142'324'000'000'000;
constexpr std::int64_t kSecond = 1'000'000'000;

// `nvidia-smi dmon -s pucv -d 5` on two GPUs, its command echoed first: GPU 0 held by the power
// cap (pviol 100 %) at full SM use, GPU 1 idle; '-' where there is no memory temperature.
std::string dmon_two_gpus(int rounds, bool echo = true) {
  std::string out = echo ? "$ nvidia-smi dmon -s pucv -d 5\n" : "";
  out +=
      "# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec   mclk   pclk  pviol  tviol\n"
      "# Idx      W      C      C      %      %      %      %    MHz    MHz      %   bool\n";
  for (int r = 0; r < rounds; ++r) {
    out += "    0    692     71      -    100     35      0      0   2619   1755    100      0\n";
    out += "    1     70     35      -      0      0      0      0   2619    345      0      0\n";
  }
  return out;
}

TEST(NvidiaSmiDmonTest, TwoGpusWithTheCommandEchoedAreTwoDevicesAtItsInterval) {
  const auto r = parse_recording(dmon_two_gpus(4), "dmon.log");
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->format, "nvidia-smi-dmon");
  ASSERT_EQ(r->rounds.size(), 4U);
  EXPECT_EQ(r->rounds[1].time_unix_nanos, 5 * kSecond);
  EXPECT_EQ(r->rounds[1].stats.interval_seconds, 5);
  EXPECT_EQ(r->time_base, TimeBase::kNone);
  ASSERT_EQ(r->rounds[0].devices.size(), 2U);
  const auto& d = r->rounds[0].devices[0];
  EXPECT_EQ(d.power_watts, 692);
  EXPECT_EQ(d.temperature_memory_celsius, std::nullopt);  // '-'
  EXPECT_EQ(d.utilization_ratio, 1.0);
  EXPECT_EQ(d.sm_clock_hertz, 1755e6);
  EXPECT_EQ(d.clock_event_reasons, power::clock_event::kSwPowerCap);
  EXPECT_THAT(r->notes, Contains("dmon.log: dmon column enc is not read"));

  const auto report = analyze(r->rounds, {}, "dmon.log");
  ASSERT_EQ(report.devices.size(), 2U);
  EXPECT_EQ(report.devices[0].dominant, Verdict::kPowerCap)
      << acco::report::render_text(analyze_report(report));
  EXPECT_EQ(report.devices[1].dominant, Verdict::kIdle)
      << acco::report::render_text(analyze_report(report));
}

TEST(NvidiaSmiDmonTest, WithoutTheEchoTheIntervalFlagOrOneSecondWithANote) {
  RecordingOptions options;
  options.interval_seconds = 0.5;
  const auto flagged = parse_recording(dmon_two_gpus(3, false), "dmon.log", options);
  ASSERT_THAT(flagged, IsOk());
  EXPECT_EQ(flagged->rounds[2].time_unix_nanos, kSecond);
  const auto plain = parse_recording(dmon_two_gpus(3, false), "dmon.log");
  ASSERT_THAT(plain, IsOk());
  EXPECT_EQ(plain->rounds[2].time_unix_nanos, 2 * kSecond);
  EXPECT_THAT(plain->notes, Contains(HasSubstr("rows taken 1 s apart, dmon's default (give "
                                               "--interval)")));
}

TEST(NvidiaSmiDmonTest, DateAndTimeColumnsAreLocalTimesAndRepeatedHeadersAreSkipped) {
  const std::string text =
      "#Date       Time        gpu    pwr     sm    mem   pclk\n"
      "#YYYYMMDD   HH:MM:SS    Idx      W      %      %    MHz\n"
      " 20261201   16:25:24      0    300     97     40   1980\n"
      "#Date       Time        gpu    pwr     sm    mem   pclk\n"
      "#YYYYMMDD   HH:MM:SS    Idx      W      %      %    MHz\n"
      " 20261201   16:25:25      0    301     98     41   1980\n";
  const auto r = parse_recording(text, "dmon.log");
  ASSERT_THAT(r, IsOk());
  ASSERT_EQ(r->rounds.size(), 2U);
  EXPECT_EQ(r->rounds[1].time_unix_nanos, kT0 + kSecond);
  EXPECT_EQ(r->time_base, TimeBase::kLocalUnknownZone);
  EXPECT_EQ(r->rounds[1].devices.at(0).power_watts, 301);
}

TEST(NvidiaSmiDmonTest, WhatCannotBeReadIsRefusedWithTheReason) {
  const auto error = [](const std::string& text) {
    const auto r = parse_recording(text, "dmon.log");
    EXPECT_FALSE(r.has_value());
    return r.has_value() ? std::string() : r.error().message;
  };
  EXPECT_EQ(error("# gpu pwr sm\n# Idx W %\n 0 300\n"),
            "dmon.log:3: expected 3 columns as the dmon header names, got 2");
  EXPECT_EQ(error("# gpu pwr sm\n# Idx W %\n 0 hot 97\n"),
            "dmon.log:3: pwr: cannot read 'hot' as a number");
  EXPECT_EQ(error("$ nvidia-smi dmon\n 0 300 97\n"),
            "dmon.log:2: expected nvidia-smi dmon's '# gpu ...' header line before the first row "
            "(the columns are unknown without it)");
}

TEST(NvidiaSmiDmonTest, ReviewedBadInputIsRefusedNamingTheLine) {
  const auto error = [](const std::string& text) {
    const auto r = parse_recording(text, "dmon.log");
    EXPECT_FALSE(r.has_value());
    return r.has_value() ? std::string() : r.error().message;
  };
  // An echoed interval is bounded as --interval is: rounds * interval stays in 64 bits.
  EXPECT_EQ(error("$ nvidia-smi dmon -d 1e300\n# gpu pwr sm\n# Idx W %\n 0 100 50\n"),
            "dmon.log:1: the command's interval -d 1e+300 s is more than a day (at most 1d, as "
            "--interval)");
  EXPECT_EQ(error("# gpu pwr sm\n# Idx W %\n -1 100 50\n"),
            "dmon.log:3: gpu: cannot read '-1' as a GPU index");
  EXPECT_EQ(error("# gpu pviol tviol\n# Idx % bool\n 0 150 0\n"),
            "dmon.log:3: pviol: cannot read '150' as a percentage from 0 to 100");
  EXPECT_EQ(error("# gpu pviol tviol\n# Idx % bool\n 0 50 2\n"),
            "dmon.log:3: tviol: cannot read '2' as 0 or 1");
  // A step back of 5 s is no midnight: only more than 12 h back is a new day.
  EXPECT_EQ(error("#Time gpu pwr sm\n#HH:MM:SS Idx W %\n 16:00:05 0 100 50\n"
                  " 16:00:00 0 100 50\n"),
            "dmon.log:4: times go backwards (5.00 s back; only a step back of more than 12 h is "
            "taken as midnight passing)");
  EXPECT_EQ(error("$ nvidia-smi dmon\n# gpu pwr sm\n# Idx W %\n"),
            "dmon.log: the file has a header and no rows");
  EXPECT_EQ(error("# pwr sm\n# W %\n 100 50\n"),
            "dmon.log:1: a dmon header without its gpu column (expected '# gpu ...'; dmon prints "
            "it with every -s)");
}

TEST(NvidiaSmiDmonTest, MidnightPassesAndOutOfRangeReadingsAreDroppedAndCounted) {
  const auto r = parse_recording(
      "#Time gpu pwr gtemp pclk fb\n#HH:MM:SS Idx W C MHz MB\n"
      " 23:59:59 0 -5 -3 -1 1e300\n 00:00:00 0 1e308 40 1000 -2\n",
      "dmon.log");
  ASSERT_THAT(r, IsOk());
  ASSERT_EQ(r->rounds.size(), 2U);
  EXPECT_EQ(r->rounds[1].time_unix_nanos - r->rounds[0].time_unix_nanos, kSecond);
  const auto& a = r->rounds[0].devices.at(0);
  EXPECT_FALSE(a.power_watts);
  EXPECT_FALSE(a.temperature_gpu_celsius);
  EXPECT_FALSE(a.sm_clock_hertz);
  EXPECT_FALSE(a.memory_used_bytes);
  EXPECT_EQ(a.dropped_readings, 4U);
  const auto& b = r->rounds[1].devices.at(0);
  EXPECT_FALSE(b.power_watts);  // above 10 kW
  EXPECT_FALSE(b.memory_used_bytes);
  EXPECT_EQ(b.temperature_gpu_celsius, 40);
  EXPECT_EQ(b.dropped_readings, 2U);
}

// `nvidia-smi -q -d PERFORMANCE,POWER,CLOCK,UTILIZATION -l 1` on one H800 held at its power cap:
// the current reasons say SW Power Cap; the counters are time summed since the driver loaded.
std::string query_report(int second, bool sw_power_cap, long long capped_us) {
  return fmt::format(
      "\n==============NVSMI LOG==============\n\n"
      "Timestamp                                 : Tue Dec  1 16:25:{:02} 2026\n"
      "Driver Version                            : 550.54.15\n"
      "CUDA Version                              : 12.4\n\n"
      "Attached GPUs                             : 1\n"
      "GPU 00000000:18:00.0\n"
      "    Performance State                     : P0\n"
      "    Clocks Event Reasons\n"
      "        Idle                              : Not Active\n"
      "        Applications Clocks Setting       : Not Active\n"
      "        SW Power Cap                      : {}\n"
      "        HW Slowdown                       : Not Active\n"
      "            HW Thermal Slowdown           : Not Active\n"
      "            HW Power Brake Slowdown       : Not Active\n"
      "        Sync Boost                        : Not Active\n"
      "        SW Thermal Slowdown               : Not Active\n"
      "        Display Clock Setting             : Not Active\n"
      "    Clocks Event Reasons Counters\n"
      "        SW Power Capping                  : {} us\n"
      "        Sync Boost                        : 0 us\n"
      "        SW Thermal Slowdown               : 5000000 us\n"
      "        HW Thermal Slowdown               : 0 us\n"
      "        HW Power Braking                  : 0 us\n"
      "    Utilization\n"
      "        Gpu                               : 100 %\n"
      "        Memory                            : 70 %\n"
      "        Encoder                           : 0 %\n"
      "    GPU Power Readings\n"
      "        Power Draw                        : 692.50 W\n"
      "        Current Power Limit               : 700.00 W\n"
      "        Requested Power Limit             : 700.00 W\n"
      "        Default Power Limit               : 700.00 W\n"
      "    Clocks\n"
      "        Graphics                          : 1780 MHz\n"
      "        SM                                : 1780 MHz\n"
      "        Memory                            : 2619 MHz\n"
      "    Max Clocks\n"
      "        Graphics                          : 1980 MHz\n"
      "        SM                                : 1980 MHz\n"
      "        Memory                            : 2619 MHz\n",
      24 + second, sw_power_cap ? "Active" : "Not Active", capped_us);
}

TEST(NvidiaSmiQueryTest, ANameThatIsNotUtf8IsStoredEscaped) {
  const auto r = parse_recording(
      "==============NVSMI LOG==============\n"
      "Timestamp : Tue Dec  1 16:25:20 2026\n"
      "GPU 00000000:18:00.0\n"
      "    Product Name : H\xff\xfe\n"
      "    Utilization\n"
      "        Gpu : 100 %\n",
      "q.txt");
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->rounds.at(0).devices.at(0).model, "H\\xff\\xfe");
}

TEST(NvidiaSmiQueryTest, ABusIdTwiceInOneReportIsRefusedAndHugeOrZeroReadingsAreNone) {
  const std::string head =
      "==============NVSMI LOG==============\n"
      "Timestamp : Tue Dec  1 16:25:20 2026\n"
      "GPU 00000000:18:00.0\n"
      "    Utilization\n"
      "        Gpu : 100 %\n";
  const auto twice = parse_recording(head + "GPU 00000000:18:00.0\n", "q.txt");
  ASSERT_FALSE(twice.has_value());
  EXPECT_EQ(twice.error().message,
            "q.txt:6: GPU 0000:18:00.0 is listed twice in one report (expected one 'GPU <bus "
            "id>' section per GPU)");
  const auto r = parse_recording(head +
                                     "    FB Memory Usage\n"
                                     "        Used : 1e300 MiB\n"
                                     "    GPU Power Readings\n"
                                     "        Power Draw : 1e308 W\n"
                                     "        Current Power Limit : 0.00 W\n",
                                 "q.txt");
  ASSERT_THAT(r, IsOk());
  const auto& d = r->rounds.at(0).devices.at(0);
  EXPECT_FALSE(d.memory_used_bytes);
  EXPECT_FALSE(d.power_watts);
  EXPECT_FALSE(d.power_limit_enforced_watts);
  EXPECT_EQ(d.dropped_readings, 2U);
}

TEST(NvidiaSmiQueryTest, LoopedReportsAreRoundsWithCurrentReasonsAndCumulativeCounters) {
  const auto r =
      parse_recording(query_report(0, true, 2'000'000) + query_report(1, true, 3'000'000) +
                          query_report(2, true, 4'000'000),
                      "q.txt");
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->format, "nvidia-smi-q");
  EXPECT_EQ(r->time_base, TimeBase::kLocalUnknownZone);
  ASSERT_EQ(r->rounds.size(), 3U);
  EXPECT_EQ(r->rounds[0].time_unix_nanos, kT0);
  const auto& d = r->rounds[1].devices.at(0);
  EXPECT_EQ(d.device, "0");
  EXPECT_EQ(d.pci_bus_id, "0000:18:00.0");
  EXPECT_EQ(d.pstate, 0);
  // The counters' "SW Thermal Slowdown : 5000000 us" is no current thermal slowdown.
  EXPECT_EQ(d.clock_event_reasons, power::clock_event::kSwPowerCap);
  EXPECT_EQ(d.throttle_seconds.at("power"), 3.0);
  EXPECT_EQ(d.throttle_seconds.at("sw_thermal"), 5.0);
  EXPECT_EQ(d.utilization_ratio, 1.0);
  EXPECT_EQ(d.power_watts, 692.5);
  EXPECT_EQ(d.power_limit_enforced_watts, 700);
  EXPECT_EQ(d.sm_clock_hertz, 1780e6);
  EXPECT_EQ(d.sm_clock_max_hertz, 1980e6);

  const auto report = analyze(r->rounds, {}, "q.txt");
  ASSERT_EQ(report.devices.size(), 1U);
  EXPECT_EQ(report.devices[0].windows.at(0).verdict, Verdict::kPowerCap)
      << acco::report::render_text(analyze_report(report));
}

TEST(NvidiaSmiQueryTest, AFragmentWithoutGpuOrTimestampIsOneGpuAtNoTime) {
  const auto r = parse_recording(
      "    Clocks Event Reasons\n"
      "        SW Power Cap                      : Not Active\n"
      "        SW Thermal Slowdown               : Active\n"
      "    Clocks Event Reasons Counters\n"
      "        SW Power Capping                  : 99999999 us\n",
      "fragment.txt");
  ASSERT_THAT(r, IsOk());
  ASSERT_EQ(r->rounds.size(), 1U);
  EXPECT_EQ(r->time_base, TimeBase::kNone);
  EXPECT_EQ(r->rounds[0].devices.at(0).clock_event_reasons, power::clock_event::kSwThermalSlowdown);
  // Nothing says how busy it was: no verdict beyond what the reasons hold.
  const auto report = analyze(r->rounds, {});
  EXPECT_EQ(report.devices.at(0).windows.at(0).verdict, Verdict::kThermal);
}

TEST(NvidiaSmiQueryTest, AnUnreadableTimestampOrNoGpuReadingIsRefused) {
  const auto bad =
      parse_recording("==============NVSMI LOG==============\nTimestamp : yesterday\n", "q.txt");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message,
            "q.txt:2: Timestamp: cannot read 'yesterday' as a time like 'Fri Dec  4 09:06:33 "
            "2026'");
  const auto empty = parse_recording(
      "==============NVSMI LOG==============\nDriver Version : 550.54.15\n", "q.txt");
  ASSERT_FALSE(empty.has_value());
  EXPECT_EQ(empty.error().message, "q.txt: an nvidia-smi -q report with no GPU readings");
}

TEST(NvidiaSmiQueryTest, XmlReportsAreRefusedNamingWhatToSaveInstead) {
  const auto r = parse_recording(
      "<?xml version=\"1.0\" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi_device_v12.dtd\">\n"
      "<nvidia_smi_log>\n</nvidia_smi_log>\n",
      "q.xml");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
  EXPECT_EQ(r.error().message,
            "q.xml: nvidia-smi -q -x XML is not read; save the text report (nvidia-smi -q) or a "
            "--query-gpu CSV log instead");
}

}  // namespace
}  // namespace acco::analyze
