#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/bench/compare.hpp"
#include "acco/bench/result.hpp"
#include "acco/testing/json_schema.hpp"
#include "acco/testing/matchers.hpp"

#include "runs.hpp"

namespace acco::bench {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using testing::sample_run;

nlohmann::json schema() {
  return acco::testing::published_schema("bench.schema.json");
}

// The run's JSON with one field replaced, as a reader would receive it.
nlohmann::json with(const std::string& pointer, nlohmann::json value) {
  nlohmann::json j = nlohmann::json::parse(to_json(sample_run()).dump());
  j[nlohmann::json::json_pointer(pointer)] = std::move(value);
  return j;
}

std::string error_of(const nlohmann::json& j) {
  const auto run = run_from_json(j);
  EXPECT_THAT(run, StatusIs(Errc::kInvalidArgument));
  return run.has_value() ? "" : run.error().message;
}

TEST(ResultJsonTest, RunRoundTripsThroughJsonText) {
  const auto run = sample_run();
  const auto back = run_from_json(nlohmann::json::parse(to_json(run).dump()));
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(*back, run);
}

TEST(ResultJsonTest, ResultKeysAreTheDocumentedOnesInOrder) {
  const auto j = to_json(sample_run().results[0]);
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) {
    keys.push_back(key);
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"case",
                                            "device",
                                            "status",
                                            "reason",
                                            "bytes",
                                            "median_bytes_per_second",
                                            "min_bytes_per_second",
                                            "max_bytes_per_second",
                                            "cov",
                                            "peak_bytes_per_second",
                                            "efficiency",
                                            "peak_source",
                                            "verdict",
                                            "strategy",
                                            "timer",
                                            "latency_seconds",
                                            "latency_min_seconds",
                                            "latency_max_seconds",
                                            "latency_p99_seconds",
                                            "sweep",
                                            "against_plain"}));
  EXPECT_EQ(j["case"], "h2d_pinned_ce");
  EXPECT_EQ(j["bytes"], 512ULL << 20);
}

TEST(ResultJsonTest, UnknownPeakEfficiencyAndLatencyAreNull) {
  const auto j = to_json(testing::measured("host_memcpy", 12e9));
  EXPECT_TRUE(j["peak_bytes_per_second"].is_null());
  EXPECT_TRUE(j["efficiency"].is_null());
  EXPECT_TRUE(j["latency_seconds"].is_null());
  const auto back = result_from_json(nlohmann::json::parse(j.dump()));
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(back->peak_bytes_per_second, 0);
  EXPECT_EQ(back->efficiency, 0);
}

TEST(ResultJsonTest, OutputConformsToThePublishedSchema) {
  const auto s = schema();
  auto j = nlohmann::json::parse(to_json(sample_run()).dump());
  EXPECT_EQ(acco::testing::validate(s, j), std::vector<std::string>{});

  auto previous = sample_run();
  previous.results[0].median_bytes_per_second = 60e9;
  j["comparisons"] = nlohmann::json::parse(to_json(compare(previous, sample_run())).dump());
  EXPECT_EQ(acco::testing::validate(s, j), std::vector<std::string>{});
}

TEST(ResultJsonTest, ThePeaksSourceRoundTripsAndIsNullWhenNothingSaysAndEmptyWhenAbsent) {
  auto r = testing::measured("storage_read_1MiB_qd32", 6e9);
  r.peak_source = "nvme1n1 on nvme1 at 0000:c1:00.0, Gen4 x4, 7.88 GB/s";
  const auto j = nlohmann::json::parse(to_json(r).dump());
  EXPECT_EQ(j["peak_source"], r.peak_source);
  const auto back = result_from_json(j);
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(back->peak_source, r.peak_source);
  EXPECT_TRUE(to_json(testing::measured("host_memcpy", 12e9))["peak_source"].is_null());
  auto older = j;
  older.erase("peak_source");  // documents written before the field, and the history's rows
  const auto old_back = result_from_json(older);
  ASSERT_THAT(old_back, IsOk());
  EXPECT_EQ(old_back->peak_source, "");
  older["peak_source"] = 7;
  EXPECT_FALSE(result_from_json(older).has_value());
}

TEST(ResultJsonTest, SchemaRequiresEveryKeyTheWriterEmits) {
  // The schema and the writer must not drift: every key written is required, and no more.
  const auto s = schema();
  const auto run = nlohmann::json::parse(to_json(sample_run()).dump());
  EXPECT_EQ(s["required"].size(), run.size());
  EXPECT_EQ(s["$defs"]["result"]["required"].size(), run["results"][0].size());
}

TEST(ResultJsonTest, SchemaValidatorCatchesAWrongType) {
  auto j = nlohmann::json::parse(to_json(sample_run()).dump());
  j["results"][0]["cov"] = "0.5%";
  EXPECT_FALSE(acco::testing::validate(schema(), j).empty());
}

TEST(ResultJsonTest, RejectsANonObject) {
  EXPECT_EQ(error_of(nlohmann::json::array()), "expected a JSON object (an acco.bench document)");
}

TEST(ResultJsonTest, RejectsAnotherSchemaVersion) {
  EXPECT_EQ(error_of(with("/schema", "acco.bench/2")),
            "schema: expected \"acco.bench/1\", got \"acco.bench/2\"");
}

TEST(ResultJsonTest, RejectsAMissingField) {
  auto j = with("/host", "x");
  j.erase("results");
  EXPECT_EQ(error_of(j), "results: missing");
}

TEST(ResultJsonTest, NamesTheResultAndFieldOfAWrongType) {
  EXPECT_EQ(error_of(with("/results/1/cov", "high")),
            "results[1].cov: expected a non-negative number, got \"high\"");
}

TEST(ResultJsonTest, RejectsNegativeRates) {
  EXPECT_EQ(error_of(with("/results/0/median_bytes_per_second", -1.0)),
            "results[0].median_bytes_per_second: expected a non-negative number, got -1.0");
}

TEST(ResultJsonTest, RejectsAnUnknownStatusVerdictOrTimer) {
  EXPECT_EQ(error_of(with("/results/0/status", "skipped")),
            "results[0].status: expected one of \"ok\", \"waived\", \"error\", got \"skipped\"");
  EXPECT_EQ(error_of(with("/results/0/verdict", "great")).substr(0, 20), "results[0].verdict: ");
  EXPECT_EQ(error_of(with("/results/0/timer", "wall")).substr(0, 18), "results[0].timer: ");
}

TEST(ResultJsonTest, RejectsNegativeOrFractionalBytes) {
  EXPECT_EQ(error_of(with("/results/0/bytes", -4096)),
            "results[0].bytes: expected a non-negative integer, got -4096");
  EXPECT_EQ(error_of(with("/results/0/bytes", 1.5)),
            "results[0].bytes: expected a non-negative integer, got 1.5");
}

TEST(ResultJsonTest, NamesTheSweepPoint) {
  EXPECT_EQ(error_of(with("/results/1/sweep/3", 7)),
            "results[1].sweep[3]: expected an object, got 7");
  EXPECT_EQ(error_of(with("/results/1/sweep/2", nlohmann::json::object())),
            "results[1].sweep[2].bytes: missing");
  EXPECT_EQ(error_of(with("/results/1/sweep", "none")),
            "results[1].sweep: expected an array, got \"none\"");
}

TEST(ResultJsonTest, RejectsAResultThatIsNotAnObject) {
  EXPECT_EQ(error_of(with("/results/2", "h2d")), "results[2]: expected an object");
}

TEST(ResultJsonTest, RejectsATimeThatIsNotUtcSeconds) {
  EXPECT_EQ(error_of(with("/created", "2025-03-01 12:00")),
            "created: expected a UTC time like 2025-03-01T12:00:00Z, got \"2025-03-01 12:00\"");
}

TEST(ResultJsonTest, RejectsAMachineThatIsNotAnObject) {
  EXPECT_EQ(error_of(with("/machine", "h200")), "machine: expected an object, got \"h200\"");
}

TEST(ResultJsonTest, ResultFromJsonNamesTheFieldWithoutPrefix) {
  auto j = nlohmann::json::parse(to_json(sample_run().results[0]).dump());
  j["efficiency"] = true;
  EXPECT_EQ(result_from_json(j).error().message,
            "efficiency: expected a non-negative number, got true");
  EXPECT_EQ(result_from_json(nlohmann::json(3)).error().message, "result: expected an object");
}

TEST(ResultJsonTest, BuildersForWaivedAndFailedCases) {
  const auto w = waived("p2p_read_ce", "0000:18:00.0", "needs two GPUs");
  EXPECT_EQ(w.status, "waived");
  EXPECT_EQ(w.reason, "needs two GPUs");
  EXPECT_EQ(w.verdict, "unknown");
  const auto f = failed("h2d_pinned_ce", "0000:18:00.0",
                        Error{Errc::kDeviceError, "cudaMemcpyAsync: invalid argument"});
  EXPECT_EQ(f.status, "error");
  EXPECT_EQ(f.reason, "device error: cudaMemcpyAsync: invalid argument");
}

TEST(ResultJsonTest, SetRatesCopiesTheSummary) {
  BenchResult r;
  Summary s;
  s.median = 3;
  s.min = 1;
  s.max = 5;
  s.cov = 0.25;
  set_rates(r, s);
  EXPECT_EQ(r.median_bytes_per_second, 3);
  EXPECT_EQ(r.min_bytes_per_second, 1);
  EXPECT_EQ(r.max_bytes_per_second, 5);
  EXPECT_EQ(r.cov, 0.25);
}

TEST(HalfPeakTest, InterpolatesOnALog2SizeAxis) {
  const std::vector<SweepPoint> sweep = {{8192, 30e9}, {4096, 10e9}};  // any order
  // Half of 40 GB/s lies midway in rate, so midway between 2^12 and 2^13 on the log axis.
  EXPECT_EQ(half_peak_bytes(sweep, 40e9), 5793U);
}

TEST(HalfPeakTest, ExactHitAndFirstPoint) {
  const std::vector<SweepPoint> sweep = {{4096, 10e9}, {8192, 20e9}, {16384, 30e9}};
  EXPECT_EQ(half_peak_bytes(sweep, 40e9), 8192U);
  EXPECT_EQ(half_peak_bytes(sweep, 10e9), 4096U);
}

TEST(HalfPeakTest, NeverReachedOrNothingToJudge) {
  const std::vector<SweepPoint> sweep = {{4096, 1e9}, {8192, 2e9}};
  EXPECT_FALSE(half_peak_bytes(sweep, 63e9).has_value());
  EXPECT_FALSE(half_peak_bytes({}, 63e9).has_value());
  EXPECT_FALSE(half_peak_bytes(sweep, 0).has_value());
}

TEST(HalfPeakTest, LatencyBoundLinkReachesHalfNearLatencyTimesRate) {
  // rate(n) = n / (10 us + n / 55 GB/s) is half of 55 GB/s at n = 10 us x 55 GB/s = 550 kB.
  const auto half = half_peak_bytes(testing::latency_bound_sweep(), 55e9);
  ASSERT_TRUE(half.has_value());
  EXPECT_NEAR(static_cast<double>(*half), 550e3, 550e3 * 0.1);
}

}  // namespace
}  // namespace acco::bench
