#include "acco/bench/run_setup.hpp"

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "acco/bench/report.hpp"
#include "acco/testing/matchers.hpp"

#include "runs.hpp"

namespace acco::bench {
namespace {

using ::acco::testing::HasValue;
using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

std::string text_report(const BenchRun& run) {
  return report::render_text(run_report(run));
}
std::string text_run_report(const BenchRun& run) {
  return report::render_text(bench_report(run));
}

TEST(RunSetupTest, BackendsByName) {
  EXPECT_THAT(backend_names(), ::testing::ElementsAre("auto", "host", "cuda"));
  EXPECT_THAT(parse_backend("auto"), HasValue(BackendChoice::kAuto));
  EXPECT_THAT(parse_backend("host"), HasValue(BackendChoice::kHost));
  EXPECT_THAT(parse_backend("cuda"), HasValue(BackendChoice::kCuda));
  EXPECT_THAT(parse_backend("quantum"),
              StatusIs(Errc::kInvalidArgument, "'quantum' is not one of auto, host, cuda"));
}

TEST(RunSetupTest, ARequestBecomesTheRunItsFlagsAskFor) {
  RunRequest r;
  r.devices = 3;
  r.bytes = "8MiB";
  r.reps = 7;
  r.backend = "host";
  r.cases = {"h2d_*"};
  auto plan = run_plan(r);
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(plan->run.host.devices, 3);
  EXPECT_EQ(plan->run.defaults.bytes, 8U << 20U);
  EXPECT_EQ(plan->run.defaults.reps, 7);
  EXPECT_EQ(plan->run.backend, BackendChoice::kHost);
  EXPECT_EQ(plan->run.suite, "transfer");
  EXPECT_TRUE(plan->create_file.empty());
  r.suite = "storage";
  r.cases.clear();
  r.file = "/nonexistent/acco-data";
  r.create = "1MiB";
  plan = run_plan(r);
  ASSERT_THAT(plan, IsOk());  // the file is written first
  EXPECT_EQ(plan->create_file, "/nonexistent/acco-data");
  EXPECT_EQ(plan->create_bytes, 1U << 20U);
}

TEST(RunSetupTest, EachBadValueOfARequestIsNamedAsItsFlag) {
  const auto refused = [](const std::function<void(RunRequest&)>& change) {
    RunRequest r;
    change(r);
    auto plan = run_plan(r);
    EXPECT_THAT(plan, StatusIs(Errc::kInvalidArgument));
    return plan ? std::string() : plan.error().message;
  };
  EXPECT_EQ(refused([](RunRequest& r) { r.reps = 0; }), "--reps: 0 is not between 1 and 1000");
  EXPECT_EQ(refused([](RunRequest& r) { r.bytes = "1KiB"; }),
            "--bytes: '1KiB' is not a size from 4KiB to 16GiB");
  EXPECT_EQ(refused([](RunRequest& r) { r.suite = "disk"; }),
            "--suite: 'disk' is not one of transfer, storage");
  EXPECT_EQ(refused([](RunRequest& r) { r.file = "x"; }),
            "--file and --create belong to --suite storage");
  EXPECT_EQ(refused([](RunRequest& r) { r.suite = "storage"; }),
            "--suite storage: expected --file PATH (the file to read)");
  EXPECT_EQ(refused([](RunRequest& r) { r.cases = {"nothing_*"}; }),
            "--cases: no case matches (see acco bench --list)");
  EXPECT_THAT(refused([](RunRequest& r) { r.backend = "tpu"; }), HasSubstr("--backend: "));
}

TEST(RunSetupTest, AQuickLookCapsSizesAndRepetitions) {
  CaseContext c;
  apply_quick(c);
  EXPECT_EQ(c.bytes, kQuickBytes);
  EXPECT_EQ(c.reps, kQuickReps);
  EXPECT_EQ(c.warmup, 1);
  EXPECT_EQ(c.copies_per_sample, 2);
  EXPECT_EQ(c.sweep_max_bytes, kQuickBytes);
  EXPECT_EQ(c.small_copies, 2000);
  CaseContext small;
  small.bytes = 4096;
  small.reps = 1;
  apply_quick(small);  // never larger than asked
  EXPECT_EQ(small.bytes, 4096U);
  EXPECT_EQ(small.reps, 1);
}

TEST(RunSetupTest, TheStorageFileIsNamedAbsoluteAndThroughItsLinks) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("acco-storage-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream((dir / "data").string()) << "x";
  fs::create_symlink(dir / "data", dir / "link");
  EXPECT_EQ(storage_path((dir / "link").string()), fs::canonical(dir / "data").string());
  EXPECT_EQ(storage_path((dir / "." / "absent").string()), (dir / "absent").string());
  EXPECT_EQ(storage_path("relative-absent"),
            (fs::current_path() / "relative-absent").lexically_normal().string());
  fs::remove_all(dir);
}

core::Settings settings_with_sysroot(const std::string& sysroot) {
  core::Settings s;
  s.define("sysroot", sysroot, "");
  s.define("pci-ids", "", "");
  return s;
}

TEST(RunSetupTest, AStorageRunWithoutTopologySaysWhyItsPeakIsUnknown) {
  const auto nowhere = settings_with_sysroot("/nonexistent/acco-sysroot");
  EXPECT_THAT(probe_machine(nowhere), Not(IsOk()));
  RunOptions storage;
  storage.suite = "storage";
  storage.defaults.storage_file = "/tmp/acco-data";
  EXPECT_THAT(probe_for_run(nowhere, storage), Not(IsOk()));
  EXPECT_EQ(storage.defaults.storage_peak_source, "topology unavailable");
  RunOptions transfer;
  EXPECT_THAT(probe_for_run(nowhere, transfer), Not(IsOk()));
  EXPECT_EQ(transfer.defaults.storage_peak_source, "");
}

TEST(RunSetupTest, TheQuickBenchMeasuresWhatThisMachineHas) {
  auto quick = quick_bench(topo::Machine{}, {});
  ASSERT_THAT(quick, IsOk());
  ASSERT_FALSE(quick->run.results.empty());
  if (quick->run.results.front().case_key == "host_memcpy") {
    EXPECT_THAT(quick->note, HasSubstr("host memory bandwidth only"));
    EXPECT_EQ(quick->run.results.size(), 1U);
  } else {
    EXPECT_THAT(quick->note, HasSubstr("pinned and pageable copies on every GPU"));
  }
}

TEST(RunSetupTest, TheCaseListNamesEveryCaseAndTheSuiteOutsideTransfer) {
  const std::string list = report::render_text(case_list_report());
  for (const auto& c : cases()) {
    EXPECT_THAT(list, HasSubstr(c->key() + " ")) << c->key();
  }
  EXPECT_THAT(list, HasSubstr(" [--suite storage]\n"));
  EXPECT_THAT(list, Not(HasSubstr("[--suite transfer]")));
}

TEST(RunSetupTest, TheRunReportNamesTheCudaDriverWhenTheRunFoundOne) {
  BenchRun run;
  run.results = {testing::measured("h2d_pinned_plain", 50e9, 55e9)};
  EXPECT_THAT(text_run_report(run), Not(HasSubstr("CUDA driver")));
  EXPECT_EQ(text_run_report(run).rfind(text_report(run), 0), 0U);
  run.machine["cuda_version"] = "12.4";
  run.machine["cuda_driver_version"] = 12040;
  EXPECT_THAT(text_run_report(run), HasSubstr("CUDA driver 12040 (supports CUDA 12.4)\n"));
}

}  // namespace
}  // namespace acco::bench
