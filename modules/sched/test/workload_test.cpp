#include "acco/sched/workload.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/sched/schedule_math.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::sched {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;

using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::vector<DeviceModel> kCpuGpu = {{"cpu", 1}, {"gpu", 1}};

WorkloadSpec spec_named(const std::string& name) {
  WorkloadSpec spec;
  const auto kind = parse_workload_kind(name);
  EXPECT_TRUE(kind.has_value()) << name;
  spec.kind = kind.value_or(WorkloadKind::kCholesky);
  return spec;
}

Workload make(const WorkloadSpec& spec, const std::vector<DeviceModel>& devices = kCpuGpu) {
  auto w = make_workload(spec, devices);
  EXPECT_THAT(w, IsOk());
  return w.has_value() ? *w : Workload{};
}

Workload cholesky(int tiles, const std::string& kernels = "sirocco") {
  WorkloadSpec spec = spec_named("cholesky");
  spec.tiles = tiles;
  spec.kernels = kernels;
  return make(spec);
}

// The DAG with the reference's unit weights (b^3/3 flops): POTRF 1, TRSM 3, SYRK 3, GEMM 6, on
// one processor, no communication.
Dag unit_weight_dag(const Workload& w) {
  const std::map<std::string, double> weight = {
      {"potrf", 1}, {"trsm", 3}, {"syrk", 3}, {"gemm", 6}};
  Dag dag;
  for (const WorkTask& t : w.tasks) {
    dag.cost.push_back({weight.at(t.type)});
  }
  for (const Edge& e : infer_edges(w)) {
    dag.edges.push_back({e.from, e.to, 0});
  }
  return dag;
}

std::vector<std::string> names(const Workload& w) {
  std::vector<std::string> out;
  for (const WorkTask& t : w.tasks) {
    out.push_back(t.name);
  }
  return out;
}

void expect_error(const WorkloadSpec& spec, const std::vector<DeviceModel>& devices, Errc code,
                  const std::string& what) {
  auto w = make_workload(spec, devices);
  ASSERT_FALSE(w.has_value()) << what;
  EXPECT_EQ(w.error().code, code);
  EXPECT_THAT(w.error().message, HasSubstr(what));
  EXPECT_EQ(w.error().message.find('\n'), std::string::npos);
}

TEST(KernelTableTest, SiroccoHasStarPusCalibratedMeansInSeconds) {
  auto table = kernel_table("sirocco");
  ASSERT_THAT(table, IsOk());
  EXPECT_EQ(table->tile, 960u);
  EXPECT_DOUBLE_EQ(*table->lookup("gemm", "gpu", 0), 749e-6);
  EXPECT_DOUBLE_EQ(*table->lookup("gemm", "cpu", 0), 34940e-6);
  EXPECT_DOUBLE_EQ(*table->lookup("potrf", "cpu", 0), 7379e-6);
  EXPECT_DOUBLE_EQ(*table->lookup("trsm", "gpu", 0), 2020e-6);
  EXPECT_DOUBLE_EQ(*table->lookup("syrk", "gpu", 0), 375e-6);
  EXPECT_DOUBLE_EQ(*table->lookup("getrf", "gpu", 0), 2 * 8245e-6);
}

TEST(KernelTableTest, MirageHasStarPusCalibratedMeansInSeconds) {
  auto table = kernel_table("mirage");
  ASSERT_THAT(table, IsOk());
  EXPECT_DOUBLE_EQ(*table->lookup("potrf", "cpu", 0), 18850e-6);
  EXPECT_DOUBLE_EQ(*table->lookup("potrf", "gpu", 0), 5475e-6);
  EXPECT_DOUBLE_EQ(*table->lookup("trsm", "cpu", 0), 45647e-6);
  EXPECT_DOUBLE_EQ(*table->lookup("syrk", "cpu", 0), 43890e-6);
  EXPECT_DOUBLE_EQ(*table->lookup("gemm", "gpu", 0), 2821e-6);
  EXPECT_DOUBLE_EQ(*table->lookup("getrf", "cpu", 0), 2 * 18850e-6);
}

TEST(KernelTableTest, UniformCostsOneSecondPerGigaflopOnAnyKind) {
  auto table = kernel_table("uniform");
  ASSERT_THAT(table, IsOk());
  EXPECT_DOUBLE_EQ(*table->lookup("gemm", "cpu", 2e9), 2);
  EXPECT_DOUBLE_EQ(*table->lookup("potrf", "tpu", 5e8), 0.5);
}

TEST(KernelTableTest, UnknownTableIsNotFound) {
  auto table = kernel_table("summit");
  ASSERT_THAT(table, StatusIs(Errc::kNotFound));
  EXPECT_THAT(table.error().message, HasSubstr("'summit'"));
  EXPECT_THAT(table.error().message, HasSubstr("sirocco, mirage, uniform"));
}

TEST(KernelTableTest, UnknownKindOrKernelIsNotFoundNamingTheTable) {
  auto table = kernel_table("sirocco");
  ASSERT_THAT(table, IsOk());
  auto kind = table->lookup("gemm", "tpu", 0);
  ASSERT_THAT(kind, StatusIs(Errc::kNotFound));
  EXPECT_THAT(kind.error().message, HasSubstr("'tpu'"));
  EXPECT_THAT(kind.error().message, HasSubstr("'sirocco'"));
  auto kernel = table->lookup("geqrt", "gpu", 0);
  ASSERT_THAT(kernel, StatusIs(Errc::kNotFound));
  EXPECT_THAT(kernel.error().message, HasSubstr("'geqrt'"));
}

TEST(WorkloadTest, CholeskyTaskCountIsTTimesTPlusOneTimesTPlusTwoOverSix) {
  EXPECT_EQ(cholesky(1).tasks.size(), 1u);
  EXPECT_EQ(cholesky(4).tasks.size(), 20u);
  EXPECT_EQ(cholesky(10).tasks.size(), 220u);
  EXPECT_EQ(cholesky(16).tasks.size(), 816u);
}

TEST(WorkloadTest, CholeskyDataIsTheLowerTriangleOfSinglePrecisionTiles) {
  const Workload w = cholesky(4);
  EXPECT_EQ(w.name, "cholesky");
  ASSERT_EQ(w.data_bytes.size(), 10u);
  for (std::size_t bytes : w.data_bytes) {
    EXPECT_EQ(bytes, 960u * 960u * 4u);
  }
}

TEST(WorkloadTest, CholeskySubmitsInChameleonOrder) {
  EXPECT_THAT(names(cholesky(3)),
              ElementsAre("potrf(0)", "trsm(1,0)", "trsm(2,0)", "syrk(1,0)", "gemm(2,1,0)",
                          "syrk(2,0)", "potrf(1)", "trsm(2,1)", "syrk(2,1)", "potrf(2)"));
}

TEST(WorkloadTest, CholeskyAccessesFlopsAndSecondsFollowTheKernel) {
  const Workload w = cholesky(3);
  // Tiles (i, j), i >= j, are numbered row by row: (0,0)=0 (1,0)=1 (1,1)=2 (2,0)=3 (2,1)=4 (2,2)=5.
  const WorkTask& gemm = w.tasks[4];
  EXPECT_EQ(gemm.type, "gemm");
  EXPECT_THAT(gemm.accesses, ElementsAre(std::pair{std::size_t{3}, Access::kRead},
                                         std::pair{std::size_t{1}, Access::kRead},
                                         std::pair{std::size_t{4}, Access::kReadWrite}));
  const double b3 = 960.0 * 960.0 * 960.0;
  EXPECT_DOUBLE_EQ(gemm.flops, 2 * b3);
  EXPECT_THAT(gemm.seconds, ElementsAre(34940e-6, 749e-6));
  const WorkTask& trsm = w.tasks[1];
  EXPECT_THAT(trsm.accesses, ElementsAre(std::pair{std::size_t{0}, Access::kRead},
                                         std::pair{std::size_t{1}, Access::kReadWrite}));
  EXPECT_DOUBLE_EQ(trsm.flops, b3);
  EXPECT_DOUBLE_EQ(w.tasks[0].flops, b3 / 3);
  EXPECT_DOUBLE_EQ(w.tasks[3].flops, b3);
}

TEST(WorkloadTest, SecondsAreDividedBySpeedAndMultipliedByTimeScale) {
  WorkloadSpec spec = spec_named("cholesky");
  spec.tiles = 2;
  spec.time_scale = 10;
  const Workload w = make(spec, {{"gpu", 2}, {"cpu", 0.5}});
  EXPECT_DOUBLE_EQ(w.tasks[0].seconds[0], 8245e-6 / 2 * 10);
  EXPECT_DOUBLE_EQ(w.tasks[0].seconds[1], 7379e-6 / 0.5 * 10);
}

TEST(WorkloadTest, UniformKernelsCostFlopsOverOneGigaflop) {
  const Workload w = cholesky(2, "uniform");
  const double b3 = 960.0 * 960.0 * 960.0;
  EXPECT_DOUBLE_EQ(w.tasks[0].seconds[0], b3 / 3 / 1e9);
  EXPECT_DOUBLE_EQ(w.tasks[1].seconds[1], b3 / 1e9);
}

TEST(WorkloadTest, LuTaskCountIsTTimesTPlusOneTimesTwoTPlusOneOverSix) {
  for (int t = 1; t <= 6; ++t) {
    WorkloadSpec spec = spec_named("lu");
    spec.tiles = t;
    const Workload w = make(spec);
    EXPECT_EQ(w.tasks.size(), static_cast<std::size_t>(t * (t + 1) * (2 * t + 1) / 6));
    EXPECT_EQ(w.data_bytes.size(), static_cast<std::size_t>(t * t));
  }
}

TEST(WorkloadTest, LuSubmitsGetrfThenPanelsThenUpdates) {
  WorkloadSpec spec = spec_named("lu");
  spec.tiles = 2;
  const Workload w = make(spec);
  EXPECT_THAT(names(w),
              ElementsAre("getrf(0)", "trsm(1,0)", "trsm(0,1)", "gemm(1,1,0)", "getrf(1)"));
  const double b3 = 960.0 * 960.0 * 960.0;
  EXPECT_DOUBLE_EQ(w.tasks[0].flops, 2 * b3 / 3);
  EXPECT_DOUBLE_EQ(w.tasks[1].flops, b3);
  EXPECT_DOUBLE_EQ(w.tasks[3].flops, 2 * b3);
  EXPECT_THAT(w.tasks[0].seconds, ElementsAre(DoubleEq(2 * 7379e-6), DoubleEq(2 * 8245e-6)));
  // Tiles row-major: (0,0)=0 (0,1)=1 (1,0)=2 (1,1)=3.
  EXPECT_THAT(w.tasks[3].accesses, ElementsAre(std::pair{std::size_t{2}, Access::kRead},
                                               std::pair{std::size_t{1}, Access::kRead},
                                               std::pair{std::size_t{3}, Access::kReadWrite}));
}

TEST(WorkloadTest, IndependentCostsAreLogUniformFromTheRawEngineOutput) {
  WorkloadSpec spec = spec_named("independent");
  spec.tasks = 50;
  spec.seed = 42;
  spec.skew = 8;
  spec.base_seconds = 2e-3;
  spec.task_bytes = 4096;
  const Workload w = make(spec, {{"cpu", 1}, {"gpu", 4}});
  ASSERT_EQ(w.tasks.size(), 50u);
  ASSERT_EQ(w.data_bytes.size(), 50u);
  std::mt19937_64 rng(42);
  for (std::size_t i = 0; i < w.tasks.size(); ++i) {
    const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
    const double expected = 2e-3 * std::exp(u * std::log(8.0));
    EXPECT_DOUBLE_EQ(w.tasks[i].seconds[0], expected);
    EXPECT_DOUBLE_EQ(w.tasks[i].seconds[1], expected / 4);
    EXPECT_GE(w.tasks[i].seconds[0], 2e-3);
    EXPECT_LT(w.tasks[i].seconds[0], 16e-3);
    EXPECT_THAT(w.tasks[i].accesses, ElementsAre(std::pair{i, Access::kReadWrite}));
    EXPECT_EQ(w.data_bytes[i], 4096u);
  }
  EXPECT_TRUE(infer_edges(w).empty());
}

TEST(WorkloadTest, SameSpecGivesTheSameWorkloadAndAnotherSeedAnother) {
  for (const std::string name : {"independent", "random"}) {
    WorkloadSpec spec = spec_named(name);
    spec.tasks = 40;
    const Workload a = make(spec);
    EXPECT_EQ(a, make(spec)) << name;
    spec.seed = 2;
    EXPECT_NE(a, make(spec)) << name;
  }
}

TEST(WorkloadTest, ChainIsOneReadWriteDatumInSequence) {
  WorkloadSpec spec = spec_named("chain");
  spec.tasks = 4;
  spec.task_bytes = 100;
  spec.base_seconds = 0.5;
  const Workload w = make(spec, {{"cpu", 1}, {"gpu", 2}});
  ASSERT_EQ(w.data_bytes, std::vector<std::size_t>{100});
  ASSERT_EQ(w.tasks.size(), 4u);
  EXPECT_THAT(w.tasks[2].seconds, ElementsAre(0.5, 0.25));
  EXPECT_THAT(infer_edges(w), ElementsAre(Edge{0, 1, 100}, Edge{1, 2, 100}, Edge{2, 3, 100}));
}

TEST(WorkloadTest, RandomDagFollowsTheTopcuogluModel) {
  WorkloadSpec spec = spec_named("random");
  spec.tasks = 100;
  spec.seed = 3;
  spec.alpha = 1;
  spec.out_degree = 3;
  spec.ccr = 2;
  spec.beta = 0.5;
  spec.base_seconds = 1e-3;
  const Workload w = make(spec, {{"cpu", 1}, {"gpu", 1}, {"gpu", 2}});
  ASSERT_EQ(w.tasks.size(), 100u);
  ASSERT_EQ(w.data_bytes.size(), 100u);
  for (std::size_t bytes : w.data_bytes) {
    EXPECT_EQ(bytes, 20'000'000u);  // 2 x 1 ms at 10 GB/s
  }
  std::vector<std::size_t> in_degree(100, 0);
  std::size_t entries = 0;
  for (std::size_t i = 0; i < w.tasks.size(); ++i) {
    const WorkTask& t = w.tasks[i];
    ASSERT_FALSE(t.accesses.empty());
    EXPECT_EQ(t.accesses.back(), (std::pair{i, Access::kWrite}));
    entries += t.accesses.size() == 1 ? 1 : 0;
    EXPECT_LE(t.accesses.size(), 4u);  // up to out_degree inputs and its output
    // w_i,d within [w_bar (1 - beta/2), w_bar (1 + beta/2)] for some w_bar in
    // [base / 100, 2 base]: any two devices of speed 1 differ by at most a factor 1.25/0.75.
    EXPECT_GT(t.seconds[0], 0);
    EXPECT_LE(t.seconds[0], 2e-3 * 1.25);
    EXPECT_LE(t.seconds[0] / t.seconds[1], 1.25 / 0.75 + 1e-12);
    EXPECT_LE(t.seconds[1] / t.seconds[0], 1.25 / 0.75 + 1e-12);
  }
  EXPECT_GE(entries, 1u);
  EXPECT_LT(entries, 100u);
  for (const Edge& e : infer_edges(w)) {
    EXPECT_LT(e.from, e.to);
    EXPECT_EQ(e.bytes, 20'000'000u);
    ++in_degree[e.to];
  }
  for (std::size_t i = 0; i < 100; ++i) {
    EXPECT_EQ(in_degree[i] + 1, w.tasks[i].accesses.size());
  }
}

TEST(WorkloadTest, RandomDagHasAboutSqrtVOverAlphaLevels) {
  // Levels from the edges: an entry task is level 0, others one past their deepest input.
  for (double alpha : {0.5, 1.0, 2.0}) {
    WorkloadSpec spec = spec_named("random");
    spec.tasks = 400;
    spec.alpha = alpha;
    const Workload w = make(spec);
    std::vector<int> level(w.tasks.size(), 0);
    int height = 0;
    for (const Edge& e : infer_edges(w)) {
      level[e.to] = std::max(level[e.to], level[e.from] + 1);
      height = std::max(height, level[e.to] + 1);
    }
    const double expected = std::sqrt(400.0) / alpha;
    EXPECT_GT(height, expected / 2) << "alpha " << alpha;
    EXPECT_LT(height, expected * 2) << "alpha " << alpha;
  }
}

TEST(WorkloadTest, RandomDagTinyCcrStillMovesOneByte) {
  WorkloadSpec spec = spec_named("random");
  spec.tasks = 10;
  spec.ccr = 0;
  const Workload w = make(spec);
  for (std::size_t bytes : w.data_bytes) {
    EXPECT_EQ(bytes, 1u);
  }
}

TEST(WorkloadTest, KindsAreNamedAndParsedBothWays) {
  for (const auto kind : {WorkloadKind::kCholesky, WorkloadKind::kLu, WorkloadKind::kIndependent,
                          WorkloadKind::kChain, WorkloadKind::kRandom}) {
    EXPECT_EQ(parse_workload_kind(to_string(kind)), kind);
  }
  EXPECT_EQ(parse_workload_kind("qr"), std::nullopt);
  EXPECT_EQ(parse_workload_kind("Cholesky"), std::nullopt);
}

TEST(WorkloadTest, BadSpecsAreInvalidArgumentsNamingTheField) {
  const auto bad = [](const std::string& name, auto edit, const std::string& what) {
    WorkloadSpec spec = spec_named(name);
    edit(spec);
    expect_error(spec, kCpuGpu, Errc::kInvalidArgument, what);
  };
  bad(
      "cholesky", [](WorkloadSpec& s) { s.tiles = 0; }, "tiles");
  bad(
      "lu", [](WorkloadSpec& s) { s.tiles = -3; }, "tiles");
  bad(
      "independent", [](WorkloadSpec& s) { s.tasks = 0; }, "tasks");
  bad(
      "chain", [](WorkloadSpec& s) { s.base_seconds = -1; }, "base_seconds");
  bad(
      "chain", [](WorkloadSpec& s) { s.base_seconds = std::nan(""); }, "base_seconds");
  bad(
      "independent", [](WorkloadSpec& s) { s.skew = 0.5; }, "skew");
  bad(
      "random", [](WorkloadSpec& s) { s.alpha = 0; }, "alpha");
  bad(
      "random", [](WorkloadSpec& s) { s.out_degree = 0; }, "out_degree");
  bad(
      "random", [](WorkloadSpec& s) { s.ccr = -1; }, "ccr");
  bad(
      "random", [](WorkloadSpec& s) { s.beta = 2; }, "beta");
  bad(
      "cholesky", [](WorkloadSpec& s) { s.time_scale = 0; }, "time_scale");
}

TEST(WorkloadTest, NoDevicesOrANonPositiveSpeedIsInvalid) {
  expect_error(spec_named("chain"), {}, Errc::kInvalidArgument, "no devices");
  expect_error(spec_named("chain"), {{"cpu", 1}, {"gpu", 0}}, Errc::kInvalidArgument,
               "device 1: speed");
}

TEST(WorkloadTest, UnknownKernelTableOrDeviceKindIsNotFound) {
  WorkloadSpec spec = spec_named("cholesky");
  spec.kernels = "summit";
  expect_error(spec, kCpuGpu, Errc::kNotFound, "unknown kernel table 'summit'");
  spec.kernels = "mirage";
  expect_error(spec, {{"cpu", 1}, {"tpu", 1}}, Errc::kNotFound,
               "kernel table 'mirage' has no timings for device kind 'tpu'");
  spec.kind = WorkloadKind::kLu;
  expect_error(spec, {{"tpu", 1}}, Errc::kNotFound, "'tpu'");
}

TEST(InferEdgesTest, CholeskyThreeTilesHasTwelveReadAfterWriteEdges) {
  const std::size_t tile = 960u * 960u * 4u;
  EXPECT_THAT(infer_edges(cholesky(3)),
              ElementsAre(Edge{0, 1, tile}, Edge{0, 2, tile}, Edge{1, 3, tile}, Edge{1, 4, tile},
                          Edge{2, 4, tile}, Edge{2, 5, tile}, Edge{3, 6, tile}, Edge{4, 7, tile},
                          Edge{6, 7, tile}, Edge{5, 8, tile}, Edge{7, 8, tile}, Edge{8, 9, tile}));
}

TEST(InferEdgesTest, WriterWaitsForReadersSinceTheLastWriterNotForThatWriter) {
  Workload w;
  w.data_bytes = {64};
  w.tasks.resize(4);
  w.tasks[0].accesses = {{0, Access::kWrite}};
  w.tasks[1].accesses = {{0, Access::kRead}};
  w.tasks[2].accesses = {{0, Access::kRead}};
  w.tasks[3].accesses = {{0, Access::kWrite}};
  EXPECT_THAT(infer_edges(w),
              ElementsAre(Edge{0, 1, 64}, Edge{0, 2, 64}, Edge{1, 3, 0}, Edge{2, 3, 0}));
}

TEST(InferEdgesTest, WriteAfterWriteCarriesNoBytes) {
  Workload w;
  w.data_bytes = {64};
  w.tasks.resize(3);
  w.tasks[0].accesses = {{0, Access::kWrite}};
  w.tasks[1].accesses = {{0, Access::kWrite}};
  w.tasks[2].accesses = {{0, Access::kReadWrite}};
  EXPECT_THAT(infer_edges(w), ElementsAre(Edge{0, 1, 0}, Edge{1, 2, 64}));
}

TEST(InferEdgesTest, ReadsBeforeAnyWriteOnlyOrderTheFirstWriter) {
  Workload w;
  w.data_bytes = {8};
  w.tasks.resize(2);
  w.tasks[0].accesses = {{0, Access::kRead}};
  w.tasks[1].accesses = {{0, Access::kReadWrite}};
  EXPECT_THAT(infer_edges(w), ElementsAre(Edge{0, 1, 0}));
}

TEST(InferEdgesTest, DuplicateDependenciesMergeKeepingTheLargestBytes) {
  Workload w;
  w.data_bytes = {10, 30};
  w.tasks.resize(2);
  w.tasks[0].accesses = {{0, Access::kWrite}, {1, Access::kWrite}};
  w.tasks[1].accesses = {{0, Access::kRead}, {1, Access::kRead}, {0, Access::kReadWrite}};
  EXPECT_THAT(infer_edges(w), ElementsAre(Edge{0, 1, 30}));
}

TEST(InferEdgesTest, CholeskyHasNoWriteAfterReadEdges) {
  for (const Edge& e : infer_edges(cholesky(6))) {
    EXPECT_GT(e.bytes, 0u) << e.from << " -> " << e.to;
  }
}

TEST(InferEdgesTest, CholeskyCriticalPathIsNineTMinusTenUnits) {
  for (int t = 2; t <= 8; ++t) {
    auto b = bounds(unit_weight_dag(cholesky(t)));
    ASSERT_THAT(b, IsOk());
    EXPECT_DOUBLE_EQ(b->critical_path, 9.0 * t - 10) << "t = " << t;
    // On one processor the area bound is the total work, t^3 units.
    EXPECT_NEAR(b->area, 1.0 * t * t * t, 1e-9 * t * t * t) << "t = " << t;
  }
}

TEST(InferEdgesTest, UniformCholeskyCriticalPathIsNineTMinusTenPotrfs) {
  const Workload w = cholesky(5, "uniform");
  Dag dag;
  for (const WorkTask& t : w.tasks) {
    dag.cost.push_back(t.seconds);
  }
  for (const Edge& e : infer_edges(w)) {
    dag.edges.push_back({e.from, e.to, 0});
  }
  auto b = bounds(dag);
  ASSERT_THAT(b, IsOk());
  const double potrf = 960.0 * 960.0 * 960.0 / 3 / 1e9;
  EXPECT_NEAR(b->critical_path, 35 * potrf, 1e-9);
  EXPECT_NEAR(b->area, 125 * potrf / 2, 1e-9);  // two devices, same rate
}

}  // namespace
TEST(WorkloadTest, RandomSpecsThatWouldExhaustMemoryAreRejected) {
  WorkloadSpec spec = spec_named("random");
  spec.out_degree = 1'000'000;
  auto w = make_workload(spec, kCpuGpu);
  ASSERT_FALSE(w.has_value());
  EXPECT_NE(w.error().message.find("out_degree"), std::string::npos);
  spec = spec_named("random");
  spec.ccr = 1e300;
  w = make_workload(spec, kCpuGpu);
  ASSERT_FALSE(w.has_value());
  EXPECT_NE(w.error().message.find("ccr"), std::string::npos);
  spec = spec_named("cholesky");
  spec.tiles = 1'000'000;
  w = make_workload(spec, kCpuGpu);
  ASSERT_FALSE(w.has_value());
  EXPECT_NE(w.error().message.find("tiles"), std::string::npos);
}

}  // namespace acco::sched
