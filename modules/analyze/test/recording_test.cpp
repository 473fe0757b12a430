#include "acco/analyze/recording.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"

namespace acco::analyze {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::HasSubstr;

TEST(RecordingTest, JsonLinesAreReadRoundByRound) {
  const auto r = parse_recording(
      "{\"time_unix_nanos\": 1, \"devices\": [{\"device\": \"0\", \"power_watts\": 100}]}\n"
      "\n"
      "{\"time_unix_nanos\": 2, \"devices\": []}\n",
      "run.jsonl");
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->format, "acco-jsonl");
  ASSERT_EQ(r->rounds.size(), 2U);
  EXPECT_EQ(*r->rounds[0].devices[0].power_watts, 100);
  EXPECT_TRUE(r->notes.empty());
}

TEST(RecordingTest, CutOffLastLineIsSkippedWithANote) {
  const auto r = parse_recording(
      "{\"time_unix_nanos\": 1, \"devices\": []}\n{\"time_unix_nanos\": 2, \"dev", "run.jsonl");
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->rounds.size(), 1U);
  EXPECT_THAT(r->notes, ::testing::ElementsAre("run.jsonl:2: skipped a cut-off last line"));
}

// A file of one cut-off line (half of a one-line Chrome trace) holds nothing: an error, not a
// recording of zero rounds.
TEST(RecordingTest, AFileThatIsOnlyACutOffLineIsMalformed) {
  const auto jsonl = parse_recording("{\"time_unix_nanos\": 2, \"dev", "run.jsonl");
  ASSERT_THAT(jsonl, StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(jsonl.error().message, HasSubstr("run.jsonl:1: not a JSON object"));
  const auto trace = parse_recording("{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1", "t.json");
  ASSERT_THAT(trace, StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(trace.error().message, HasSubstr("t.json: a Chrome trace that is not valid JSON"));
}

TEST(RecordingTest, BrokenLinesNameTheFileAndLine) {
  const auto middle = parse_recording(
      "{\"time_unix_nanos\": 1, \"devices\": []}\nnot json\n{\"time_unix_nanos\": 3, "
      "\"devices\": []}\n",
      "run.jsonl");
  ASSERT_THAT(middle, StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(middle.error().message, HasSubstr("run.jsonl:2: not a JSON object"));
  const auto field = parse_recording(
      "{\"time_unix_nanos\": 1, \"devices\": [{\"device\": \"0\", \"power_watts\": \"x\"}]}\n",
      "run.jsonl");
  ASSERT_FALSE(field.has_value());
  EXPECT_THAT(field.error().message,
              HasSubstr("run.jsonl:1: devices[0].power_watts: expected a number"));
  EXPECT_THAT(parse_recording("", "e.jsonl"), StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(parse_recording("hello,world\n", "x.csv").error().message, HasSubstr("x.csv"));
  EXPECT_THAT(read_recording("/no/such/file.jsonl"), StatusIs(Errc::kNotFound));
  EXPECT_THAT(read_recording("/"), StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(read_recording("/dev/zero"), StatusIs(Errc::kInvalidArgument));
}

TEST(RecordingTest, NvidiaSmiLogsAndPrometheusScrapesAreDetected) {
  const auto csv = parse_recording(
      "timestamp, index, utilization.gpu [%], power.draw [W]\n"
      "2026/12/01 16:25:24.000, 0, 87 %, 350.50 W\n"
      "2026/12/01 16:25:25.000, 0, 90 %, 351.00 W\n",
      "smi.csv");
  ASSERT_THAT(csv, IsOk());
  EXPECT_EQ(csv->format, "nvidia-smi-csv");
  ASSERT_EQ(csv->rounds.size(), 2U);
  EXPECT_EQ(*csv->rounds[1].devices[0].power_watts, 351);
  const auto prom = parse_recording(
      "# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).\n"
      "# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n"
      "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-1\",pci_bus_id=\"00000000:18:00.0\"} 45\n",
      "dcgm.prom");
  ASSERT_THAT(prom, IsOk());
  EXPECT_EQ(prom->format, "prometheus");
  EXPECT_EQ(*prom->rounds[0].devices[0].temperature_gpu_celsius, 45);
  // A scrape without comments whose first sample has labels (commas) was read as CSV.
  const std::string long_labels(300, 'x');
  const auto bare = parse_recording("DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",modelName=\"" + long_labels +
                                        "\"} 46\nDCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 70\n",
                                    "bare.prom");
  ASSERT_THAT(bare, IsOk());
  EXPECT_EQ(bare->format, "prometheus");
  EXPECT_EQ(*bare->rounds[0].devices[0].temperature_gpu_celsius, 46);
  // A noheader log whose first field is a GPU's name is nvidia-smi's, refused as such.
  const auto noheader = parse_recording("NVIDIA H100 80GB HBM3, 0, 350.50 W\n", "smi.csv");
  ASSERT_FALSE(noheader.has_value());
  EXPECT_THAT(noheader.error().message, ::testing::HasSubstr("logs written with noheader"));
  // Headers nvidia-smi prints: the first field followed by a comma, or with a dot and a unit.
  for (const char* header :
       {"index, power.draw [W]\n0, 350.50 W\n", "power.draw [W], index\n350.50 W, 0\n"}) {
    const auto smi = parse_recording(header, "smi.csv");
    ASSERT_THAT(smi, IsOk()) << header;
    EXPECT_EQ(smi->format, "nvidia-smi-csv") << header;
  }
}

TEST(RecordingTest, TimesAreRfc3339OrUnixSeconds) {
  EXPECT_EQ(parse_time("2026-01-01T00:00:00Z").value(), 1'767'225'600'000'000'000);
  EXPECT_EQ(parse_time("2026-01-01T00:00:00.25Z").value(), 1'767'225'600'250'000'000);
  EXPECT_EQ(parse_time("2026-01-01T01:00:00+01:00").value(), 1'767'225'600'000'000'000);
  EXPECT_EQ(parse_time("1767225600.5").value(), 1'767'225'600'500'000'000);
  // Digits, not a double, which is 256 ns coarse at this size.
  EXPECT_EQ(parse_time("1767225600.123456789").value(), 1'767'225'600'123'456'789);
  EXPECT_EQ(parse_time("1767225600").value(), 1'767'225'600'000'000'000);
  for (const char* bad : {"", "yesterday", "2026-01-01", "2026-01-01T00:00:00", "2026-13-45T99Z",
                          "2026-01-01T00:00:00+1", "2026-13-45T99:99:99Z", "2026-02-01T24:00:00Z",
                          "1e30", "1969-12-31T23:59:59Z", "-1", "1767225600.", "12a"}) {
    const auto r = parse_time(bad);
    EXPECT_FALSE(r.has_value()) << bad;
  }
}

}  // namespace
}  // namespace acco::analyze
