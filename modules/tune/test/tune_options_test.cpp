// tune_options: acco tune's flags checked into a run; tune_and_save: nothing written when the run
// is interrupted.
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"
#include "acco/tune/profile_report.hpp"
#include "acco/tune/tune_run.hpp"

namespace acco::tune {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(TuneOptionsTest, TheFlagsUnitsBecomeTheRunsAndTheFitSizesEndAtTheCopySize) {
  TuneRequest r;
  r.devices = 2;
  r.budget = "90s";
  r.bytes = "16MiB";
  r.backend = "host";
  auto o = tune_options(r);
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->host.devices, 2);
  EXPECT_EQ(o->backend, bench::BackendChoice::kHost);
  EXPECT_EQ(o->search.budget, std::chrono::seconds(90));
  EXPECT_EQ(o->search.bytes, 16U << 20U);
  EXPECT_EQ(o->search.fit_bytes, (std::vector<std::uint64_t>{1U << 20U, 4U << 20U, 16U << 20U}));
}

TEST(TuneOptionsTest, EachBadValueIsNamedAsItsFlag) {
  TuneRequest r;
  r.budget = "0.5s";
  EXPECT_THAT(tune_options(r), StatusIs(Errc::kInvalidArgument,
                                        "--budget: '0.5s' is not a duration from 1s to 24h"));
  r = {};
  r.bytes = "5GiB";
  EXPECT_THAT(tune_options(r),
              StatusIs(Errc::kInvalidArgument, "--bytes: '5GiB' is not a size from 1MiB to 4GiB"));
  r = {};
  r.devices = 65;
  EXPECT_THAT(tune_options(r),
              StatusIs(Errc::kInvalidArgument, "--devices: 65 is not between 1 and 64"));
  r = {};
  r.link = "pcie9x99";
  EXPECT_THAT(tune_options(r), StatusIs(Errc::kInvalidArgument, HasSubstr("--link: ")));
  r = {};
  r.backend = "tpu";
  EXPECT_THAT(tune_options(r), StatusIs(Errc::kInvalidArgument, HasSubstr("--backend: ")));
  r = {};
  r.file = "/nonexistent/acco-file";
  EXPECT_THAT(tune_options(r), StatusIs(Errc::kInvalidArgument,
                                        "--file: '/nonexistent/acco-file' is not a regular file"));
}

TEST(TuneOptionsTest, AnInterruptedRunWritesNothing) {
  const testing::TempDir dir;
  const std::string path = (dir.path() / "profile.json").string();
  TuneRequest r;
  r.backend = "host";
  r.budget = "1s";
  r.bytes = "1MiB";
  auto o = tune_options(r);
  ASSERT_THAT(o, IsOk());
  auto saved = tune_and_save(*o, path, std::nullopt, nullptr, [] { return true; }, {});
  ASSERT_THAT(saved, IsOk());
  EXPECT_TRUE(saved->result.interrupted);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(saved->notes, "acco: tune interrupted; " + path + " left as it was\n");
}

}  // namespace
}  // namespace acco::tune

namespace acco::tune {
namespace {

using ::acco::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(TuneOptionsTest, ANamedFileIsThePathAndAMissingMachineProfileSaysRunAccoTune) {
  EXPECT_EQ(chosen_profile_path("/tmp/p.json", nullptr).value_or(""), "/tmp/p.json");
  EXPECT_THAT(chosen_profile_path("", nullptr), StatusIs(Errc::kUnavailable));
  EXPECT_THAT(load_saved_tune_profile("/nonexistent/acco.json", false),
              StatusIs(Errc::kNotFound,
                       "no tune profile for this machine (/nonexistent/acco.json); run acco tune"));
  const auto named = load_saved_tune_profile("/nonexistent/acco.json", true);
  ASSERT_FALSE(named.has_value());
  EXPECT_EQ(named.error().code, Errc::kNotFound);
  EXPECT_THAT(named.error().message, Not(HasSubstr("run acco tune")));
  EXPECT_THAT(saved_profile_to_show("/nonexistent/acco.json", nullptr), StatusIs(Errc::kNotFound));
  EXPECT_THAT(saved_profile_to_show("", nullptr), StatusIs(Errc::kUnavailable));
}

TEST(TuneOptionsTest, ARunsTargetIsItsPathAndTheProfileItReplaces) {
  const testing::TempDir dir;
  const std::string path = (dir.path() / "profile.json").string();
  auto fresh = profile_target(path, nullptr);
  ASSERT_THAT(fresh, IsOk());
  EXPECT_EQ(fresh->path, path);
  EXPECT_FALSE(fresh->previous.has_value());
  TuneProfile p;
  p.fingerprint = "box";
  p.created = "2026-12-07T00:00:00Z";
  p.backend = "host";
  ASSERT_THAT(save_tune_profile(path, p), IsOk());
  auto replacing = profile_target(path, nullptr);
  ASSERT_THAT(replacing, IsOk());
  ASSERT_TRUE(replacing->previous.has_value());
  EXPECT_EQ(replacing->previous->fingerprint, "box");
  auto shown = saved_profile_to_show(path, nullptr);
  ASSERT_THAT(shown, IsOk());
  EXPECT_EQ(to_json(*shown)["path"], path);
  EXPECT_THAT(profile_target(dir.path().string(), nullptr), StatusIs(Errc::kCannotWrite));
}

}  // namespace
}  // namespace acco::tune
