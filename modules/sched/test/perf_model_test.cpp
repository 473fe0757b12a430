#include "acco/sched/perf_model.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "acco/testing/files.hpp"
#include "acco/testing/json_schema.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::sched {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::acco::testing::TempDir;

namespace stdfs = std::filesystem;
using namespace std::chrono_literals;

const ModelKey kGemm{"gemm", "cuda:0000:18:00.0", 20};
const CostHint kNoHint{};
const DevicePeak kNoPeak{};

nlohmann::json schema() {
  return acco::testing::published_schema("perfmodel.schema.json");
}

void write(const stdfs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

void record_all(PerfModels& models, const ModelKey& key,
                std::initializer_list<std::chrono::nanoseconds> times) {
  for (const auto t : times) {
    models.record(key, t);
  }
}

std::chrono::nanoseconds predicted(const PerfModels& models, const ModelKey& key = kGemm) {
  const auto p = models.predict(key, kNoHint, kNoPeak);
  EXPECT_TRUE(p.has_value());
  return p.has_value() ? p->time : -1ns;
}

// Two keys with a few samples each and no pending outliers, so a JSON round trip is exact.
PerfModels sample_models() {
  PerfModels models;
  record_all(models, {"potrf", "host:0", 12}, {5us, 6us, 7us});
  record_all(models, kGemm, {190us, 191us, 189us, 90ms, 190us});
  return models;
}

nlohmann::json sample_json() {
  return nlohmann::json::parse(sample_models().to_json().dump());
}

std::string error_of(const nlohmann::json& j) {
  const auto models = PerfModels::from_json(j);
  EXPECT_FALSE(models.has_value());
  if (models.has_value()) {
    return "";
  }
  EXPECT_THAT(models, StatusIs(Errc::kInvalidArgument));
  return models.error().message;
}

TEST(SizeClassTest, ZeroAndOneByteAreClassZero) {
  EXPECT_EQ(size_class(0), 0);
  EXPECT_EQ(size_class(1), 0);
}

TEST(SizeClassTest, ClassKHoldsTwoToTheKUpToTwoToTheKPlusOne) {
  EXPECT_EQ(size_class(2), 1);
  EXPECT_EQ(size_class(3), 1);
  EXPECT_EQ(size_class(4), 2);
  EXPECT_EQ(size_class(1023), 9);
  EXPECT_EQ(size_class(1024), 10);
  EXPECT_EQ(size_class(std::uint64_t{1} << 40), 40);
  EXPECT_EQ(size_class(std::numeric_limits<std::uint64_t>::max()), 63);
}

TEST(PriorTest, ComputeBoundTaskTakesFlopsOverPeakFlops) {
  // 2 TFLOP on a 1 TFLOP/s device, 1 GB at 1 TB/s: the flops term (2 s) dominates.
  EXPECT_EQ(prior_estimate({2e12, 1e9}, {1e12, 1e12}), std::chrono::nanoseconds(2s));
}

TEST(PriorTest, MemoryBoundTaskTakesBytesOverBandwidth) {
  EXPECT_EQ(prior_estimate({1e6, 4e9}, {1e12, 2e12}), std::chrono::nanoseconds(2ms));
}

TEST(PriorTest, UsesOnlyTermsWhoseAmountAndRateAreBothKnown) {
  EXPECT_EQ(prior_estimate({1e12, 3e6}, {0, 1e12}), std::chrono::nanoseconds(3us));
  EXPECT_EQ(prior_estimate({0, 3e6}, {1e12, 1e12}), std::chrono::nanoseconds(3us));
}

TEST(PriorTest, IsUnknownWhenNoTermIsKnown) {
  EXPECT_EQ(prior_estimate({}, {1e12, 1e12}), std::nullopt);
  EXPECT_EQ(prior_estimate({1e12, 1e9}, {}), std::nullopt);
  EXPECT_EQ(prior_estimate({1e12, 0}, {0, 1e12}), std::nullopt);
}

TEST(PerfModelTest, PredictsNothingWithoutSamplesOrPrior) {
  EXPECT_EQ(PerfModels().predict(kGemm, kNoHint, kNoPeak), std::nullopt);
}

TEST(PerfModelTest, UsesThePriorBeforeCalibration) {
  PerfModels models;
  record_all(models, kGemm, {190us, 200us});
  const auto p = models.predict(kGemm, {1e9, 0}, {1e12, 0});
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->time, 1ms);
  EXPECT_FALSE(p->calibrated);
  EXPECT_EQ(p->samples, 2U);
}

TEST(PerfModelTest, UsesTheFewSamplesThereAreWhenNoPriorIsKnown) {
  PerfModels models;
  models.record(kGemm, 190us);
  const auto p = models.predict(kGemm, kNoHint, kNoPeak);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->time, 190us);
  EXPECT_FALSE(p->calibrated);
  EXPECT_EQ(p->samples, 1U);
}

TEST(PerfModelTest, IsCalibratedAfterCalibratedAfterSamplesAndThenIgnoresThePrior) {
  PerfModels models(ModelOptions{.calibrated_after = 4});
  record_all(models, kGemm, {190us, 200us, 210us});
  EXPECT_FALSE(models.predict(kGemm, {1e9, 0}, {1e12, 0})->calibrated);
  models.record(kGemm, 220us);
  const auto p = models.predict(kGemm, {1e9, 0}, {1e12, 0});
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->calibrated);
  EXPECT_EQ(p->time, 205us);
  EXPECT_EQ(p->samples, 4U);
}

TEST(PerfModelTest, OddCountMedianIsTheMiddleValue) {
  PerfModels models;
  record_all(models, kGemm, {1000ns, 1300ns, 1100ns});
  EXPECT_EQ(predicted(models), 1100ns);
}

TEST(PerfModelTest, EvenCountMedianIsTheMeanOfTheMiddleTwoRoundedToNanoseconds) {
  PerfModels models;
  record_all(models, kGemm, {1000ns, 1004ns, 1001ns, 1002ns});
  EXPECT_EQ(predicted(models), 1002ns);  // (1001 + 1002) / 2 = 1001.5
}

TEST(PerfModelTest, SamplesBeforeCalibrationAreNeverRejected) {
  PerfModels models;
  EXPECT_TRUE(models.record(kGemm, 190us));
  EXPECT_TRUE(models.record(kGemm, 90ms));
  EXPECT_EQ(models.entries().at(kGemm).samples_ns.size(), 2U);
  EXPECT_EQ(models.entries().at(kGemm).rejected, 0U);
}

TEST(PerfModelTest, ATimingSpikeDoesNotPoisonTheModel) {
  // StarPU #50: 70-100 ms spikes against a normal 190 us made six H100s look slow.
  PerfModels models;
  for (int i = 0; i < 20; ++i) {
    models.record(kGemm, 190us);
  }
  EXPECT_FALSE(models.record(kGemm, 90ms));
  EXPECT_EQ(predicted(models), 190us);
  const auto& entry = models.entries().at(kGemm);
  EXPECT_EQ(entry.rejected, 1U);
  EXPECT_EQ(entry.samples_ns.size(), 20U);
}

TEST(PerfModelTest, SpikesBetweenNormalRunsAreAllRejected) {
  PerfModels models;
  record_all(models, kGemm, {190us, 192us, 188us});
  for (int i = 0; i < 10; ++i) {
    EXPECT_FALSE(models.record(kGemm, i % 2 == 0 ? 70ms : 100ms));
    EXPECT_FALSE(models.record(kGemm, 95ms));
    EXPECT_TRUE(models.record(kGemm, 191us));
  }
  EXPECT_EQ(predicted(models), 191us);
  EXPECT_EQ(models.entries().at(kGemm).rejected, 20U);
  EXPECT_EQ(models.entries().at(kGemm).consecutive_outliers, 0U);
}

TEST(PerfModelTest, OrdinaryJitterIsTakenEvenWhenTheSamplesWereIdentical) {
  // MAD is 0 here; the floor (25 % of the median) keeps 10 % jitter in.
  PerfModels models;
  record_all(models, kGemm, {100us, 100us, 100us, 100us});
  EXPECT_TRUE(models.record(kGemm, 110us));
  EXPECT_TRUE(models.record(kGemm, 90us));
  EXPECT_FALSE(models.record(kGemm, 130us));
}

TEST(PerfModelTest, FastOutliersAreRejectedToo) {
  PerfModels models;
  record_all(models, kGemm, {190us, 190us, 190us});
  EXPECT_FALSE(models.record(kGemm, 1us));
  EXPECT_EQ(predicted(models), 190us);
}

TEST(PerfModelTest, ADeviceThatSlowedDownIsRelearntAfterRegimeChangeAfterSamples) {
  // A throttled GPU runs at half speed from now on: after three slow runs in a row, the model
  // follows it, and the adopted runs no longer count as rejected.
  PerfModels models;
  for (int i = 0; i < 10; ++i) {
    models.record(kGemm, 100us);
  }
  EXPECT_FALSE(models.record(kGemm, 200us));
  EXPECT_FALSE(models.record(kGemm, 201us));
  EXPECT_EQ(predicted(models), 100us);
  EXPECT_EQ(models.entries().at(kGemm).consecutive_outliers, 2U);
  EXPECT_TRUE(models.record(kGemm, 199us));
  const auto p = models.predict(kGemm, kNoHint, kNoPeak);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->time, 200us);
  EXPECT_TRUE(p->calibrated);
  const auto& entry = models.entries().at(kGemm);
  EXPECT_EQ(entry.samples_ns, (std::vector<std::int64_t>{200'000, 201'000, 199'000}));
  EXPECT_EQ(entry.rejected, 0U);
  EXPECT_EQ(entry.consecutive_outliers, 0U);
  EXPECT_TRUE(entry.recent_outliers_ns.empty());
  // The new regime is the normal now: a run at the old speed is the outlier.
  EXPECT_TRUE(models.record(kGemm, 202us));
  EXPECT_FALSE(models.record(kGemm, 100us));
}

TEST(PerfModelTest, ANormalRunBetweenOutliersRestartsTheCount) {
  PerfModels models;
  record_all(models, kGemm, {100us, 100us, 100us});
  EXPECT_FALSE(models.record(kGemm, 200us));
  EXPECT_FALSE(models.record(kGemm, 200us));
  EXPECT_TRUE(models.record(kGemm, 100us));
  EXPECT_TRUE(models.entries().at(kGemm).recent_outliers_ns.empty());
  EXPECT_FALSE(models.record(kGemm, 200us));
  EXPECT_FALSE(models.record(kGemm, 200us));
  EXPECT_EQ(predicted(models), 100us);
  EXPECT_EQ(models.entries().at(kGemm).rejected, 4U);
}

TEST(PerfModelBatchTest, ABatchRejectsTheSameSpikesAsOneByOneRecording) {
  PerfModels one_by_one;
  PerfModels batched;
  record_all(one_by_one, kGemm, {190us, 192us, 188us});
  record_all(batched, kGemm, {190us, 192us, 188us});
  const std::vector<std::chrono::nanoseconds> runs = {191us, 90ms, 189us, 1us, 190us};
  std::size_t taken = 0;
  for (const auto t : runs) {
    taken += one_by_one.record(kGemm, t) ? 1 : 0;
  }
  EXPECT_EQ(taken, 3U);
  EXPECT_EQ(batched.record_batch(kGemm, runs), 3U);
  EXPECT_EQ(batched.entries().at(kGemm), one_by_one.entries().at(kGemm));
}

TEST(PerfModelBatchTest, SamplesAreJudgedAgainstTheWindowAtTheStartOfTheBatch) {
  // One by one, three 124 us runs move the median to 112 us and widen the spread, so 140 us is
  // taken. In one batch every run is judged against the 100 us window (floor 25 %): 140 us is not.
  const std::vector<std::chrono::nanoseconds> runs = {124us, 124us, 124us, 140us};
  PerfModels one_by_one;
  record_all(one_by_one, kGemm, {100us, 100us, 100us});
  std::size_t taken = 0;
  for (const auto t : runs) {
    taken += one_by_one.record(kGemm, t) ? 1 : 0;
  }
  EXPECT_EQ(taken, 4U);
  PerfModels batched;
  record_all(batched, kGemm, {100us, 100us, 100us});
  EXPECT_EQ(batched.record_batch(kGemm, runs), 3U);
  EXPECT_EQ(batched.entries().at(kGemm).rejected, 1U);
}

TEST(PerfModelBatchTest, ARegimeChangeInsideABatchJudgesTheRestAgainstTheNewWindow) {
  PerfModels models;
  record_all(models, kGemm, {100us, 100us, 100us, 100us});
  const std::vector<std::chrono::nanoseconds> runs = {200us, 201us, 199us, 202us, 100us};
  // Three outliers become the window; 202 us then fits it and 100 us is the outlier.
  EXPECT_EQ(models.record_batch(kGemm, runs), 2U);
  EXPECT_EQ(models.entries().at(kGemm).samples_ns,
            (std::vector<std::int64_t>{200'000, 201'000, 199'000, 202'000}));
  EXPECT_EQ(models.entries().at(kGemm).rejected, 1U);
}

TEST(PerfModelBatchTest, SamplesBeforeCalibrationAreTakenAndTheEmptyBatchIsANoOp) {
  PerfModels models;
  EXPECT_EQ(models.record_batch(kGemm, {}), 0U);
  const std::vector<std::chrono::nanoseconds> runs = {100us, 5ms, 1us};
  EXPECT_EQ(models.record_batch(kGemm, runs), 3U);
}

TEST(PerfModelTest, RegimeChangeAfterZeroNeverAdoptsOutliers) {
  PerfModels models(ModelOptions{.regime_change_after = 0});
  record_all(models, kGemm, {100us, 100us, 100us});
  for (int i = 0; i < 10; ++i) {
    EXPECT_FALSE(models.record(kGemm, 200us));
  }
  EXPECT_EQ(predicted(models), 100us);
}

TEST(PerfModelTest, WindowKeepsTheNewestSamples) {
  PerfModels models(ModelOptions{.window = 4});
  record_all(models, kGemm, {1000ns, 1010ns, 1020ns, 1030ns, 1040ns, 1050ns});
  EXPECT_EQ(models.entries().at(kGemm).samples_ns,
            (std::vector<std::int64_t>{1020, 1030, 1040, 1050}));
  EXPECT_EQ(predicted(models), 1035ns);
}

TEST(PerfModelTest, KeepsOneModelPerDeviceInstanceTypeAndSizeClass) {
  // One hot GPU among identical ones shows up as such instead of hiding in a shared mean.
  PerfModels models;
  const ModelKey hot{"gemm", "cuda:0000:19:00.0", 20};
  const ModelKey bigger{"gemm", "cuda:0000:18:00.0", 21};
  record_all(models, kGemm, {190us, 190us, 190us});
  record_all(models, hot, {400us, 400us, 400us});
  record_all(models, bigger, {380us, 380us, 380us});
  EXPECT_EQ(predicted(models, kGemm), 190us);
  EXPECT_EQ(predicted(models, hot), 400us);
  EXPECT_EQ(predicted(models, bigger), 380us);
  EXPECT_EQ(models.entries().size(), 3U);
}

TEST(PerfModelDeathTest, ANegativeTimeIsABug) {
  PerfModels models;
  EXPECT_DEATH(models.record(kGemm, -1ns), "internal check failed");
}

TEST(PerfModelJsonTest, RoundTripsThroughJsonText) {
  const auto models = sample_models();
  const auto back = PerfModels::from_json(nlohmann::json::parse(models.to_json().dump()));
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(back->entries(), models.entries());
  EXPECT_EQ(back->entries().at(kGemm).rejected, 1U);
}

TEST(PerfModelJsonTest, EntriesAreSortedByTypeDeviceAndSizeClass) {
  PerfModels models;
  models.record({"potrf", "host:0", 3}, 1us);
  models.record({"gemm", "host:0", 5}, 1us);
  models.record({"gemm", "cuda:0", 7}, 1us);
  models.record({"gemm", "cuda:0", 6}, 1us);
  const auto j = models.to_json();
  ASSERT_EQ(j["entries"].size(), 4U);
  std::vector<std::string> order;
  for (const auto& e : j["entries"]) {
    order.push_back(e["type"].get<std::string>() + " " + e["device"].get<std::string>() + " " +
                    std::to_string(e["size_class"].get<int>()));
  }
  EXPECT_EQ(order, (std::vector<std::string>{"gemm cuda:0 6", "gemm cuda:0 7", "gemm host:0 5",
                                             "potrf host:0 3"}));
  EXPECT_EQ(j["schema"], "acco.perfmodel/1");
}

TEST(PerfModelJsonTest, OutputConformsToThePublishedSchema) {
  EXPECT_EQ(acco::testing::validate(schema(), sample_json()), std::vector<std::string>{});
  EXPECT_EQ(acco::testing::validate(schema(), PerfModels().to_json()), std::vector<std::string>{});
}

TEST(PerfModelJsonTest, SchemaRequiresEveryKeyTheWriterEmits) {
  const auto s = schema();
  const auto j = sample_json();
  EXPECT_EQ(s["required"].size(), j.size());
  EXPECT_EQ(s["$defs"]["entry"]["required"].size(), j["entries"][0].size());
}

TEST(PerfModelJsonTest, SchemaValidatorCatchesAWrongType) {
  auto j = sample_json();
  j["entries"][0]["samples_ns"] = "190us";
  EXPECT_FALSE(acco::testing::validate(schema(), j).empty());
}

TEST(PerfModelJsonTest, FromJsonKeepsTheNewestSamplesOfASmallerWindow) {
  const auto back = PerfModels::from_json(sample_json(), ModelOptions{.window = 2});
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(back->entries().at(kGemm).samples_ns, (std::vector<std::int64_t>{189'000, 190'000}));
  EXPECT_EQ(back->options().window, 2U);
}

TEST(PerfModelJsonTest, RejectsANonObject) {
  EXPECT_EQ(error_of(nlohmann::json::array()),
            "expected a JSON object (an acco.perfmodel document)");
}

TEST(PerfModelJsonTest, RejectsAMissingOrUnknownSchema) {
  auto j = sample_json();
  j["schema"] = "acco.perfmodel/2";
  EXPECT_EQ(error_of(j), "schema: expected acco.perfmodel/1, got \"acco.perfmodel/2\"");
  j["schema"] = 1;
  EXPECT_EQ(error_of(j), "schema: expected acco.perfmodel/1, got 1");
  j.erase("schema");
  EXPECT_EQ(error_of(j), "schema: expected acco.perfmodel/1, got nothing");
}

TEST(PerfModelJsonTest, RejectsMissingOrNonArrayEntries) {
  auto j = sample_json();
  j["entries"] = nlohmann::json::object();
  EXPECT_EQ(error_of(j), "entries: expected an array");
  j.erase("entries");
  EXPECT_EQ(error_of(j), "entries: expected an array");
}

// One bad field in entry 1 (potrf; entries are sorted) and the message it must produce.
struct BadEntry {
  const char* name;
  const char* field;
  nlohmann::json value;  // discarded: the field is removed
  bool remove;
  const char* message;
};

class PerfModelBadEntryTest : public ::testing::TestWithParam<BadEntry> {};

TEST_P(PerfModelBadEntryTest, IsRejectedWithTheEntryIndexAndField) {
  auto j = sample_json();
  ASSERT_EQ(j["entries"][1]["type"], "potrf");
  auto& entry = j["entries"][1];
  if (GetParam().remove) {
    entry.erase(GetParam().field);
  } else {
    entry[GetParam().field] = GetParam().value;
  }
  EXPECT_EQ(error_of(j), GetParam().message);
}

const char* const kBadSamples =
    "perfmodel entry 1: samples_ns: expected an array of non-negative integers";

INSTANTIATE_TEST_SUITE_P(
    Fields, PerfModelBadEntryTest,
    ::testing::Values(
        BadEntry{"MissingType", "type", nullptr, true, "perfmodel entry 1: type: missing"},
        BadEntry{"NumericType", "type", 7, false,
                 "perfmodel entry 1: type: expected a non-empty string"},
        BadEntry{"EmptyType", "type", "", false,
                 "perfmodel entry 1: type: expected a non-empty string"},
        BadEntry{"MissingDevice", "device", nullptr, true, "perfmodel entry 1: device: missing"},
        BadEntry{"NullDevice", "device", nullptr, false,
                 "perfmodel entry 1: device: expected a non-empty string"},
        BadEntry{"MissingSizeClass", "size_class", nullptr, true,
                 "perfmodel entry 1: size_class: missing"},
        BadEntry{"NegativeSizeClass", "size_class", -1, false,
                 "perfmodel entry 1: size_class: expected an integer from 0 to 63"},
        BadEntry{"HugeSizeClass", "size_class", 64, false,
                 "perfmodel entry 1: size_class: expected an integer from 0 to 63"},
        BadEntry{"FractionalSizeClass", "size_class", 2.5, false,
                 "perfmodel entry 1: size_class: expected an integer from 0 to 63"},
        BadEntry{"MissingSamples", "samples_ns", nullptr, true,
                 "perfmodel entry 1: samples_ns: missing"},
        BadEntry{"SamplesNotAnArray", "samples_ns", 190000, false, kBadSamples},
        BadEntry{"NegativeSample", "samples_ns", nlohmann::json::array({190000, -5}), false,
                 kBadSamples},
        BadEntry{"FractionalSample", "samples_ns", nlohmann::json::array({190000.5}), false,
                 kBadSamples},
        BadEntry{"StringSample", "samples_ns", nlohmann::json::array({"190us"}), false,
                 kBadSamples},
        BadEntry{"SampleBeyondInt64", "samples_ns",
                 nlohmann::json::array({std::numeric_limits<std::uint64_t>::max()}), false,
                 kBadSamples},
        BadEntry{"MissingRejected", "rejected", nullptr, true,
                 "perfmodel entry 1: rejected: missing"},
        BadEntry{"NegativeRejected", "rejected", -1, false,
                 "perfmodel entry 1: rejected: expected a non-negative integer"}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(PerfModelJsonTest, RejectsAnEntryThatIsNotAnObject) {
  auto j = sample_json();
  j["entries"][1] = "gemm";
  EXPECT_EQ(error_of(j), "perfmodel entry 1: expected an object");
}

TEST(PerfModelJsonTest, RejectsADuplicateKey) {
  auto j = sample_json();
  j["entries"].push_back(j["entries"][0]);
  EXPECT_EQ(error_of(j),
            "perfmodel entry 2: duplicate of an earlier entry with the same type, device and "
            "size_class");
}

TEST(PerfModelFileTest, SaveThenLoadRoundTrips) {
  const TempDir dir;
  const auto path = dir.file("models.json");
  const auto models = sample_models();
  ASSERT_THAT(models.save(path), IsOk());
  const auto back = PerfModels::load(path);
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(back->entries(), models.entries());
  // A second run starts calibrated.
  const auto p = back->predict(kGemm, kNoHint, kNoPeak);
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->calibrated);
  EXPECT_EQ(p->time, 190us);
}

TEST(PerfModelFileTest, SaveReplacesAnExistingFile) {
  const TempDir dir;
  const auto path = dir.file("models.json");
  write(path, "old");
  ASSERT_THAT(sample_models().save(path), IsOk());
  const auto back = PerfModels::load(path);
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(back->entries().size(), 2U);
}

TEST(PerfModelFileTest, ASaveIntoAMissingDirectoryFailsNamingThePath) {
  const TempDir dir;
  const auto path = dir.file("no/such/models.json");
  const auto status = sample_models().save(path);
  ASSERT_THAT(status, StatusIs(Errc::kNotFound));
  EXPECT_NE(status.error().message.find(path), std::string::npos);
}

TEST(PerfModelFileTest, AMissingFileIsAnEmptyModelSet) {
  const TempDir dir;
  const auto models = PerfModels::load(dir.file("absent.json"), ModelOptions{.window = 8});
  ASSERT_THAT(models, IsOk());
  EXPECT_TRUE(models->entries().empty());
  EXPECT_EQ(models->options().window, 8U);
}

TEST(PerfModelFileTest, AMalformedFileIsAnErrorNamingThePath) {
  const TempDir dir;
  const auto path = dir.file("models.json");
  write(path, "{\"schema\": ");
  const auto models = PerfModels::load(path);
  ASSERT_THAT(models, StatusIs(Errc::kInvalidArgument));
  EXPECT_EQ(models.error().message.rfind(path + ": not valid JSON: ", 0), 0U)
      << models.error().message;
}

TEST(PerfModelFileTest, ABadEntryIsAnErrorNamingThePathAndTheEntry) {
  const TempDir dir;
  const auto path = dir.file("models.json");
  auto j = sample_json();
  j["entries"][0]["samples_ns"] = nlohmann::json::array({-1});
  write(path, j.dump());
  const auto models = PerfModels::load(path);
  ASSERT_THAT(models, StatusIs(Errc::kInvalidArgument));
  EXPECT_EQ(models.error().message,
            path + ": perfmodel entry 0: samples_ns: expected an array of non-negative integers");
}

TEST(PerfModelFileTest, ADirectoryIsNotAModelFile) {
  const TempDir dir;
  const auto models = PerfModels::load(dir.file(""));
  ASSERT_THAT(models, StatusIs(Errc::kInvalidArgument));
}

}  // namespace
TEST(PerfModelTest, SamplesTooLargeForADoubleMedianAreRejected) {
  nlohmann::json j = sample_json();
  j["entries"][0]["samples_ns"] = {100, std::int64_t{1} << 62};
  EXPECT_NE(error_of(j).find("at most 2^53 ns"), std::string::npos);
}

TEST(PriorTest, AHugeHintIsClampedInsteadOfOverflowing) {
  const auto p = prior_estimate(CostHint{1e300, 0}, DevicePeak{1, 0});
  ASSERT_TRUE(p.has_value());
  EXPECT_GT(p->count(), 0);
}

}  // namespace acco::sched
