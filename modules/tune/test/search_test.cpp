#include "acco/tune/search.hpp"

#include <chrono>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/matchers.hpp"

namespace acco::tune {
namespace {

using ::acco::testing::StatusIs;
using std::chrono::milliseconds;
using std::chrono::steady_clock;
using ::testing::HasSubstr;

// A deterministic machine: rate depends on the profile only, and every measurement advances a
// fake clock by 1 ms, so budgets are counted in measurements.
struct FakeMachine {
  steady_clock::time_point now{};
  int measurements = 0;
  // bytes per second of a profile: best at chunk 1 MiB and 2 threads.
  double (*rate)(const transfer::Profile&) = [](const transfer::Profile& p) {
    double r = 1e9;
    if (p.chunk_bytes == std::size_t{1} << 20) {
      r *= 1.5;
    }
    if (p.host_copy_threads == 2) {
      r *= 1.2;
    }
    return r;
  };

  Measure measure() {
    return
        [this](const Target&, const transfer::Profile& p, std::uint64_t bytes) -> Result<double> {
          ++measurements;
          now += milliseconds(1);
          return 1e-6 + static_cast<double>(bytes) / rate(p);
        };
  }
  Clock clock() {
    return [this] { return now; };
  }
};

SearchOptions options(milliseconds budget) {
  SearchOptions o;
  o.space.host_copy_threads = {1, 2, 3};
  o.budget = budget;
  return o;
}

TEST(SearchTest, FindsTheFastestCoordinatesAndConfirmsThem) {
  FakeMachine m;
  auto out =
      search({{"d0", "h2d_pageable"}}, options(std::chrono::seconds(10)), m.measure(), m.clock());
  ASSERT_TRUE(out.has_value()) << out.error().message;
  ASSERT_EQ(out->paths.size(), 1U);
  const auto& p = out->paths[0];
  EXPECT_FALSE(out->budget_exhausted);
  EXPECT_TRUE(p.confirmed);
  EXPECT_TRUE(p.tuned);
  EXPECT_EQ(p.profile.chunk_bytes, std::size_t{1} << 20);
  EXPECT_EQ(p.profile.host_copy_threads, 2);
  EXPECT_EQ(p.default_bytes_per_second.size(), 3U);
  EXPECT_EQ(p.winner_bytes_per_second.size(), 3U);
  EXPECT_NEAR(p.gain, 0.8, 0.01);
  ASSERT_TRUE(p.fit.has_value());
  EXPECT_NEAR(p.fit->alpha_seconds, 1e-6, 1e-9);
  EXPECT_TRUE(p.profile.stage_pageable);
  // 1 default + 1 unstaged + 6 chunks + 4 slots + 3 queues + 3 threads, 6 confirmations, 4 fit
  // sizes.
  EXPECT_EQ(m.measurements, 1 + 1 + 6 + 4 + 3 + 3 + 6 + 4);
}

TEST(SearchTest, UnstagedPageableCopiesWinWhereFasterAndSkipTheStagingAxes) {
  FakeMachine m;
  m.rate = [](const transfer::Profile& p) { return p.stage_pageable ? 1e9 : 2e9; };
  auto out =
      search({{"d0", "d2h_pageable"}}, options(std::chrono::seconds(10)), m.measure(), m.clock());
  ASSERT_TRUE(out.has_value()) << out.error().message;
  const auto& p = out->paths.at(0);
  EXPECT_TRUE(p.tuned);
  EXPECT_FALSE(p.profile.stage_pageable);
  EXPECT_EQ(p.profile.chunk_bytes, transfer::Profile{}.chunk_bytes);
  // 1 default + 1 unstaged + 3 queues (chunk, slots and threads do not apply unstaged), 6
  // confirmations, 4 fit sizes.
  EXPECT_EQ(m.measurements, 1 + 1 + 3 + 6 + 4);
}

// On the host backend the engine's defaults copy pageable memory unstaged
// (transfer::default_profile): the search starts there, staging must beat it, and a lost search
// keeps those defaults.
TEST(SearchTest, TheSearchStartsFromTheEnginesDefaultsForTheDevice) {
  FakeMachine m;
  m.rate = [](const transfer::Profile& p) { return p.stage_pageable ? 1e9 : 2e9; };
  transfer::Profile unstaged;
  unstaged.stage_pageable = false;
  auto out = search({{"d0", "h2d_pageable", unstaged}}, options(std::chrono::seconds(10)),
                    m.measure(), m.clock());
  ASSERT_TRUE(out.has_value()) << out.error().message;
  const auto& p = out->paths.at(0);
  ASSERT_FALSE(p.candidates.empty());
  EXPECT_EQ(p.candidates.front().profile, unstaged);  // the first measurement is the defaults
  EXPECT_FALSE(p.tuned);
  EXPECT_EQ(p.profile, unstaged);
}

TEST(SearchTest, PinnedPathsDoNotTryUnstaged) {
  FakeMachine m;
  m.rate = [](const transfer::Profile& p) { return p.stage_pageable ? 1e9 : 2e9; };
  auto out =
      search({{"d0", "h2d_pinned"}}, options(std::chrono::seconds(10)), m.measure(), m.clock());
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_TRUE(out->paths.at(0).profile.stage_pageable);
  EXPECT_FALSE(out->paths.at(0).tuned);
}

TEST(SearchTest, DefaultsStayWhenNothingBeatsThem) {
  FakeMachine m;
  m.rate = [](const transfer::Profile&) { return 1e9; };
  auto out =
      search({{"d0", "d2h_pinned"}}, options(std::chrono::seconds(10)), m.measure(), m.clock());
  ASSERT_TRUE(out.has_value());
  EXPECT_FALSE(out->paths[0].tuned);
  EXPECT_EQ(out->paths[0].profile, transfer::Profile{});
}

TEST(SearchTest, GainWithinNoiseKeepsTheDefaults) {
  FakeMachine m;
  m.rate = [](const transfer::Profile& p) { return p.slots == 8 ? 1.01e9 : 1e9; };  // +1% < 2%
  auto out =
      search({{"d0", "h2d_pinned"}}, options(std::chrono::seconds(10)), m.measure(), m.clock());
  ASSERT_TRUE(out.has_value());
  const auto& p = out->paths[0];
  EXPECT_TRUE(p.confirmed);
  EXPECT_FALSE(p.tuned);
  EXPECT_EQ(p.profile, transfer::Profile{});
  EXPECT_NEAR(p.gain, 0.01, 1e-3);
}

TEST(SearchTest, ExhaustedBudgetKeepsTheBestSoFarAndSaysSo) {
  FakeMachine m;
  // 10 ms: 7 for the search (the default and 6 chunks), 3 for confirmation and fit.
  auto out = search({{"d0", "h2d_pageable"}}, options(milliseconds(10)), m.measure(), m.clock());
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(out->budget_exhausted);
  const auto& p = out->paths[0];
  EXPECT_EQ(p.candidates.size(), 7U);
  // The chunk axis finished and found 1 MiB; the thread axis was never reached. Confirmation
  // needs 6 measurements and has 3, so the defaults stay.
  EXPECT_FALSE(p.confirmed);
  EXPECT_FALSE(p.tuned);
  EXPECT_EQ(p.profile, transfer::Profile{});
  EXPECT_EQ(m.measurements, 7 + 4);  // two rounds of confirmation started before the deadline
}

TEST(SearchTest, BudgetIsSharedAcrossPaths) {
  FakeMachine m;
  auto out = search({{"d0", "h2d_pageable"}, {"d0", "d2h_pageable"}}, options(milliseconds(40)),
                    m.measure(), m.clock());
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(out->paths.size(), 2U);
  EXPECT_LE(m.measurements, 40 + 2);  // each measurement may start just before a deadline
  EXPECT_GT(out->paths[1].candidates.size(), 1U);  // the second path got a share
}

TEST(SearchTest, StopRequestedEndsTheRunAsInterrupted) {
  FakeMachine m;
  auto out =
      search({{"d0", "h2d_pageable"}, {"d0", "d2h_pageable"}}, options(std::chrono::seconds(10)),
             m.measure(), m.clock(), [&] { return m.measurements >= 5; });
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(out->interrupted);
  EXPECT_TRUE(out->paths.empty());
}

TEST(SearchTest, FailingDefaultsNameThePath) {
  FakeMachine m;
  const Measure broken = [](const Target&, const transfer::Profile&,
                            std::uint64_t) -> Result<double> {
    return fail(Errc::kDeviceError, "copy failed");
  };
  EXPECT_THAT(search({{"d0", "h2d_pinned"}}, options(std::chrono::seconds(1)), broken, m.clock()),
              StatusIs(Errc::kDeviceError, HasSubstr("d0 h2d_pinned: the defaults")));
}

TEST(SearchTest, NoTargetsIsInvalid) {
  FakeMachine m;
  EXPECT_THAT(search({}, options(std::chrono::seconds(1)), m.measure(), m.clock()),
              StatusIs(Errc::kInvalidArgument));
}

// A deterministic storage reader: best at 4 MiB blocks and depth 4; every read advances the fake
// clock by 1 ms.
struct FakeDisk {
  steady_clock::time_point now{};
  int measurements = 0;
  std::vector<io::ReaderOptions> seen;
  double (*rate)(const io::ReaderOptions&) = [](const io::ReaderOptions& o) {
    double r = 1e9;
    if (o.block_bytes == std::size_t{4} << 20) {
      r *= 1.5;
    }
    if (o.depth == 4) {
      r *= 1.2;
    }
    return r;
  };

  ReaderMeasure measure() {
    return [this](const io::ReaderOptions& o, std::uint64_t bytes) -> Result<double> {
      ++measurements;
      seen.push_back(o);
      now += milliseconds(1);
      return static_cast<double>(bytes) / rate(o);
    };
  }
  Clock clock() {
    return [this] { return now; };
  }
};

const ReaderTarget kFile{"/data/f", std::uint64_t{64} << 20};

TEST(ReaderSearchTest, FindsTheFastestBlockAndDepthAndConfirmsThem) {
  FakeDisk d;
  auto out = search_reader(kFile, options(std::chrono::seconds(10)), d.measure(), d.clock());
  ASSERT_TRUE(out.has_value()) << out.error().message;
  const auto& r = out->reader;
  EXPECT_FALSE(out->budget_exhausted);
  EXPECT_FALSE(out->interrupted);
  EXPECT_EQ(r.file, "/data/f");
  EXPECT_EQ(r.bytes, std::uint64_t{64} << 20);
  EXPECT_TRUE(r.confirmed);
  EXPECT_TRUE(r.tuned);
  EXPECT_EQ(r.options.block_bytes, std::size_t{4} << 20);
  EXPECT_EQ(r.options.depth, 4);
  EXPECT_EQ(r.options.threads, 1);
  EXPECT_NEAR(r.gain, 0.8, 0.01);
  EXPECT_EQ(r.default_bytes_per_second.size(), 3U);
  EXPECT_EQ(r.winner_bytes_per_second.size(), 3U);
  // 1 default + 4 blocks + 3 depths + 1 thread count, then 6 confirmations; no fit.
  EXPECT_EQ(r.candidates.size(), 1U + 4 + 3 + 1);
  EXPECT_EQ(d.measurements, 9 + 6);
  EXPECT_EQ(r.candidates.front().options, io::ReaderOptions{});
}

TEST(ReaderSearchTest, FalseWinnerKeepsTheDefaults) {
  FakeDisk d;
  // The search sees depth 64 as 10 % faster; the confirmation finds it as fast as the defaults.
  static int calls = 0;
  calls = 0;
  d.rate = [](const io::ReaderOptions& o) {
    ++calls;
    return o.depth == 64 && calls <= 9 ? 1.1e9 : 1e9;
  };
  auto out = search_reader(kFile, options(std::chrono::seconds(10)), d.measure(), d.clock());
  ASSERT_TRUE(out.has_value());
  const auto& r = out->reader;
  EXPECT_TRUE(r.confirmed);
  EXPECT_FALSE(r.tuned);
  EXPECT_EQ(r.options, io::ReaderOptions{});
  EXPECT_NEAR(r.gain, 0.0, 1e-9);
}

TEST(ReaderSearchTest, StagingAboveTheCapIsNotMeasured) {
  FakeDisk d;
  d.rate = [](const io::ReaderOptions& o) {
    return static_cast<double>(o.block_bytes) * o.depth;  // bigger staging is always faster
  };
  auto o = options(std::chrono::seconds(10));
  o.reader_space.max_staging_bytes = std::size_t{64} << 20;
  auto out = search_reader(kFile, o, d.measure(), d.clock());
  ASSERT_TRUE(out.has_value());
  for (const auto& seen : d.seen) {
    EXPECT_LE(seen.block_bytes * static_cast<std::size_t>(seen.depth * seen.threads),
              std::size_t{64} << 20);
  }
  // 16 MiB x 16 is above the cap; 4 MiB x 16 = 64 MiB is the largest allowed.
  EXPECT_EQ(out->reader.options.block_bytes, std::size_t{4} << 20);
  EXPECT_EQ(out->reader.options.depth, 16);
}

TEST(ReaderSearchTest, ExhaustedBudgetKeepsTheDefaultsAndSaysSo) {
  FakeDisk d;
  d.rate = [](const io::ReaderOptions& o) {
    return o.block_bytes == std::size_t{256} << 10 ? 1.5e9 : 1e9;
  };
  // 4 ms: 2.8 for the search (the default and 2 blocks, 256 KiB the best), the rest cannot hold
  // the 3 rounds of the confirmation.
  auto out = search_reader(kFile, options(milliseconds(4)), d.measure(), d.clock());
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(out->budget_exhausted);
  EXPECT_EQ(out->reader.candidates.size(), 3U);
  EXPECT_FALSE(out->reader.confirmed);
  EXPECT_FALSE(out->reader.tuned);
  EXPECT_EQ(out->reader.options, io::ReaderOptions{});
}

TEST(ReaderSearchTest, StopRequestedEndsAsInterrupted) {
  FakeDisk d;
  auto out = search_reader(kFile, options(std::chrono::seconds(10)), d.measure(), d.clock(),
                           [&] { return d.measurements >= 3; });
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(out->interrupted);
  EXPECT_EQ(d.measurements, 3);
}

TEST(ReaderSearchTest, FailingDefaultsNameTheFile) {
  FakeDisk d;
  const ReaderMeasure broken = [](const io::ReaderOptions&, std::uint64_t) -> Result<double> {
    return fail(Errc::kDeviceError, "EIO at offset 0");
  };
  EXPECT_THAT(search_reader(kFile, options(std::chrono::seconds(1)), broken, d.clock()),
              StatusIs(Errc::kDeviceError, HasSubstr("reader on /data/f: the defaults")));
}

TEST(ReaderSearchTest, FailedCandidateIsRecordedAtRateZero) {
  FakeDisk d;
  const ReaderMeasure flaky = [&](const io::ReaderOptions& o, std::uint64_t b) -> Result<double> {
    if (o.block_bytes == std::size_t{64} << 10) {
      return fail(Errc::kDeviceError, "EIO");
    }
    return d.measure()(o, b);
  };
  auto out = search_reader(kFile, options(std::chrono::seconds(10)), flaky, d.clock());
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->reader.candidates[1].options.block_bytes, std::size_t{64} << 10);
  EXPECT_EQ(out->reader.candidates[1].bytes_per_second, 0);
  EXPECT_EQ(out->reader.options.block_bytes, std::size_t{4} << 20);
}

TEST(ReaderSearchTest, BadTargetsAndAxesAreInvalid) {
  FakeDisk d;
  const auto o = options(std::chrono::seconds(1));
  EXPECT_THAT(search_reader({"", 1 << 20}, o, d.measure(), d.clock()),
              StatusIs(Errc::kInvalidArgument, HasSubstr("needs a file")));
  EXPECT_THAT(search_reader({"/data/f", 100}, o, d.measure(), d.clock()),
              StatusIs(Errc::kInvalidArgument, HasSubstr("/data/f: 100 bytes")));
  auto empty = o;
  empty.reader_space.depth.clear();
  EXPECT_THAT(search_reader(kFile, empty, d.measure(), d.clock()),
              StatusIs(Errc::kInvalidArgument, HasSubstr("reader's search")));
  EXPECT_EQ(d.measurements, 0);
}

TEST(JudgeTest, NoiseIsTheLargerSpreadOfTheTwoSeries) {
  const auto v = judge({1.0, 1.1, 0.9}, {1.3, 1.2, 1.25}, 0.02);
  EXPECT_NEAR(v.noise, 0.2, 1e-9);
  EXPECT_NEAR(v.gain, 0.25, 1e-9);
  EXPECT_TRUE(v.keep_winner);
  EXPECT_FALSE(judge({1.0, 1.3, 0.9}, {1.2, 1.2, 1.2}, 0.02).keep_winner);
}

TEST(JudgeTest, OverlappingSeriesKeepTheDefaults) {
  // Median gain 20 % beyond the 17.5 % spread, but one winner repeat is slower than the fastest
  // default: not kept.
  const auto v = judge({1.0, 1.0, 1.0}, {1.2, 1.2, 0.99}, 0.02);
  EXPECT_NEAR(v.gain, 0.2, 1e-9);
  EXPECT_NEAR(v.noise, 0.175, 1e-9);
  EXPECT_FALSE(v.keep_winner);
}

}  // namespace
}  // namespace acco::tune
