#include "acco/bench/peer_verdicts.hpp"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/core/units.hpp"

#include "runs.hpp"

namespace acco::bench {
namespace {

using ::testing::HasSubstr;
using testing::measured;

// The verdicts' blocks rendered as they read after the run's report (a block before them).
std::string text_peer_verdicts(const PeerVerdicts& v) {
  report::Document doc;
  doc.add(report::Preformatted{});
  add_peer_verdicts(doc, v);
  return report::render_text(doc);
}

BenchResult storage_read(std::string key, double median, double peak, std::string source) {
  BenchResult r = measured(std::move(key), median, peak);
  r.peak_source = std::move(source);
  return r;
}

TEST(PeerVerdicts, AReadAt96PercentOfFioIsOkAndAt80PercentBelowFio) {
  BenchRun run;
  run.results = {storage_read("storage_read_1MiB_qd8", 2.4e9, 3.94e9, "Gen4 x4 at 0000:01:00.0"),
                 measured("fio_read_1MiB_qd8", 2.5e9),
                 storage_read("storage_read_4KiB_qd32", 0.8e9, 3.94e9, "Gen4 x4 at 0000:01:00.0"),
                 measured("fio_read_4KiB_qd32", 1.0e9)};
  const PeerVerdicts v = peer_verdicts(run);
  ASSERT_TRUE(v.peak.has_value());
  EXPECT_DOUBLE_EQ(v.peak->bytes_per_second, 3.94e9);
  EXPECT_EQ(v.peak->source, "Gen4 x4 at 0000:01:00.0");
  ASSERT_EQ(v.fio.size(), 2U);
  EXPECT_EQ(v.fio[0].case_key, "storage_read_1MiB_qd8");
  EXPECT_DOUBLE_EQ(v.fio[0].ratio.ratio, 0.96);
  EXPECT_EQ(v.fio[0].verdict, "ok");
  EXPECT_EQ(v.fio[1].verdict, "below fio");
  EXPECT_FALSE(v.naive.has_value());
}

TEST(PeerVerdicts, SpreadsThatOverlapAreTheSameWithinNoise) {
  BenchRun run;
  auto ours = storage_read("storage_read_1MiB_qd8", 2.0e9, 0, "");
  ours.min_bytes_per_second = 1.5e9;
  ours.max_bytes_per_second = 2.6e9;
  run.results = {ours, measured("fio_read_1MiB_qd8", 2.5e9)};
  const PeerVerdicts v = peer_verdicts(run);
  ASSERT_EQ(v.fio.size(), 1U);
  EXPECT_TRUE(v.fio[0].ratio.within_noise);
  EXPECT_EQ(v.fio[0].verdict, "same within noise");
}

TEST(PeerVerdicts, TheStagedPathNeedsOneAndAHalfTimesTheNaiveOne) {
  BenchRun run;
  run.results = {measured("storage_h2d", 3.0e9), measured("storage_h2d_naive", 2.0e9)};
  auto v = peer_verdicts(run);
  ASSERT_TRUE(v.naive.has_value());
  EXPECT_DOUBLE_EQ(v.naive->ratio, 1.5);
  EXPECT_EQ(v.naive->verdict, "ok");
  run.results[0].median_bytes_per_second = 2.9e9;
  v = peer_verdicts(run);
  ASSERT_TRUE(v.naive.has_value());
  EXPECT_EQ(v.naive->verdict, "below 1.5x");
  EXPECT_FALSE(v.peak.has_value());
}

TEST(PeerVerdicts, WaivedCasesAndPeersAtZeroGiveNoVerdict) {
  BenchRun run;
  auto waived = storage_read("storage_read_1MiB_qd8", 0, 0, "");
  waived.status = kStatusWaived;
  run.results = {waived, measured("fio_read_1MiB_qd8", 2.5e9), measured("storage_h2d", 3.0e9),
                 measured("storage_h2d_naive", 0)};
  const PeerVerdicts v = peer_verdicts(run);
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(text_peer_verdicts(v), "");
}

TEST(PeerVerdictsText, SaysWhatTheVerdictsAreAgainstThenOneLineAPair) {
  BenchRun run;
  run.results = {storage_read("storage_read_1MiB_qd8", 2.4e9, 3.94e9, "Gen4 x4 at 0000:01:00.0"),
                 measured("fio_read_1MiB_qd8", 2.5e9), measured("storage_h2d", 3.0e9),
                 measured("storage_h2d_naive", 2.0e9)};
  const std::string text = text_peer_verdicts(peer_verdicts(run));
  EXPECT_THAT(text, HasSubstr("\nacco against its peers (median rates;"));
  EXPECT_THAT(text, HasSubstr("  peak " + units::format_rate(3.94e9) +
                              " (Gen4 x4 at 0000:01:00.0): verdicts against it, ok from "));
  EXPECT_THAT(text, HasSubstr("  storage_read_1MiB_qd8        "));
  EXPECT_THAT(text, HasSubstr(" vs fio "));
  EXPECT_THAT(text, HasSubstr("0.96x ("));
  EXPECT_THAT(text, HasSubstr("  storage_h2d                  "));
  EXPECT_THAT(text, HasSubstr("1.50x  ok\n"));
}

TEST(PeerVerdictsText, WithoutAPeakTheVerdictsAreOnlyAgainstFio) {
  BenchRun run;
  run.results = {storage_read("storage_read_1MiB_qd8", 2.4e9, 0, "")};
  EXPECT_THAT(text_peer_verdicts(peer_verdicts(run)),
              HasSubstr("  no peak (unknown): verdicts only against fio\n"));
}

}  // namespace
}  // namespace acco::bench
