#include "acco/doctor/periodic_bench.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace acco::doctor {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;

bench::Comparison comparison(const char* case_key, bench::Change change) {
  bench::Comparison c;
  c.case_key = case_key;
  c.device = "0";
  c.change = change;
  c.previous = 50e9;
  c.current = 40e9;
  c.relative_change = -0.2;
  c.threshold = 0.05;
  return c;
}

TEST(PeriodicBenchTest, OnlyRegressedCasesAreRegressionsWithTheirNumbers) {
  const auto regressions = bench_regressions(
      {comparison("h2d_pinned_plain", bench::Change::kRegressed),
       comparison("d2h_pinned_plain", bench::Change::kUnchanged),
       comparison("h2d_pageable", bench::Change::kImproved), comparison("d2d", bench::Change::kNew),
       comparison("d2h_pageable", bench::Change::kMissing),
       comparison("host_memcpy", bench::Change::kRegressed)});
  ASSERT_THAT(regressions,
              ElementsAre(Field(&monitor::BenchRegression::case_key, "h2d_pinned_plain"),
                          Field(&monitor::BenchRegression::case_key, "host_memcpy")));
  const monitor::BenchRegression expected{"h2d_pinned_plain", "0", 50e9, 40e9, -0.2, 0.05};
  EXPECT_EQ(regressions[0], expected);
}

}  // namespace
}  // namespace acco::doctor
