#include "acco/tune/saved_profile.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/bench/machine_summary.hpp"
#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"
#include "acco/tune/tune_profile.hpp"

namespace acco::tune {
namespace {

namespace stdfs = std::filesystem;
using ::acco::testing::IsOk;
using ::acco::testing::StatusIs;
using ::testing::HasSubstr;

// XDG_STATE_HOME pointed at a fresh directory for one test, restored after it.
class SavedProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* old = std::getenv("XDG_STATE_HOME")) {
      old_ = old;
    }
    ::setenv("XDG_STATE_HOME", root_.path().c_str(), 1);
    machine_.hostname = "box";
  }
  void TearDown() override {
    if (old_) {
      ::setenv("XDG_STATE_HOME", old_->c_str(), 1);
    } else {
      ::unsetenv("XDG_STATE_HOME");
    }
  }
  // A profile tuning host:0's pinned uploads, saved as `fingerprint`'s.
  std::string save_for(const std::string& fingerprint) {
    TuneProfile p;
    p.fingerprint = fingerprint;
    p.created = "2026-12-02T00:00:00Z";
    p.backend = "host";
    p.link = "25GB/s";
    p.bytes = 64 << 20;
    p.budget_seconds = 60;
    PathTuning t;
    t.device = "host:0";
    t.path = "h2d_pinned";
    t.profile.chunk_bytes = 1 << 20;
    t.tuned = true;
    p.paths.push_back(t);
    const std::string path = profile_path(tune_directory().value(), fingerprint);
    stdfs::create_directories(stdfs::path(path).parent_path());
    EXPECT_THAT(save_tune_profile(path, p), IsOk());
    return path;
  }

  testing::TempDir root_;
  std::optional<std::string> old_;
  topo::Machine machine_;
};

TEST_F(SavedProfileTest, TheProfileSavedForTheMachineIsLoadedByDefault) {
  EXPECT_FALSE(any_saved_profile());
  auto none = load_profile({}, &machine_);
  ASSERT_THAT(none, IsOk());
  EXPECT_TRUE(none->engines.empty());
  EXPECT_EQ(none->path, "");
  EXPECT_FALSE(none->skipped.has_value());

  const std::string path = save_for(bench::machine_fingerprint(machine_));
  EXPECT_TRUE(any_saved_profile());
  auto loaded = load_profile({}, &machine_);
  ASSERT_THAT(loaded, IsOk());
  EXPECT_EQ(loaded->path, path);
  EXPECT_EQ(loaded->engines.at("host:0/h2d_pinned").chunk_bytes, 1U << 20);
  EXPECT_EQ(saved_engine_profiles(machine_).size(), 1U);
  // No machine: none is looked for; --no-profile: none at all.
  EXPECT_TRUE(load_profile({}, nullptr)->engines.empty());
  EXPECT_TRUE(
      load_profile({.file = "", .none = true, .directory = ""}, &machine_)->engines.empty());
}

TEST_F(SavedProfileTest, ANamedFileMustLoadAndASavedOneThatCannotIsSkippedWithWhy) {
  EXPECT_THAT(load_profile(
                  {.file = (root_.path() / "absent.json").string(), .none = false, .directory = ""},
                  &machine_),
              StatusIs(Errc::kNotFound));
  const std::string path = save_for(bench::machine_fingerprint(machine_));
  auto named = load_profile({.file = path, .none = false, .directory = ""}, nullptr);
  ASSERT_THAT(named, IsOk());
  EXPECT_EQ(named->path, path);
  std::ofstream(path) << "{";
  auto skipped = load_profile({}, &machine_);
  ASSERT_THAT(skipped, IsOk());
  EXPECT_TRUE(skipped->engines.empty());
  EXPECT_EQ(skipped->path, "");
  ASSERT_TRUE(skipped->skipped.has_value());
  EXPECT_THAT(skipped->skipped->message, HasSubstr(path));
  EXPECT_TRUE(saved_engine_profiles(machine_).empty());
}

// A run that needs the machine only for its saved profile probes it only when one is saved, and
// tells a person which profile it used.
TEST_F(SavedProfileTest, TheMachineIsProbedOnlyWhenAProfileIsSavedAndTheNoteSaysWhich) {
  int probes = 0;
  const auto probe = [&]() -> std::optional<topo::Machine> {
    ++probes;
    return machine_;
  };
  auto none = load_profile_probing({}, probe);
  ASSERT_THAT(none, IsOk());
  EXPECT_EQ(probes, 0);
  EXPECT_EQ(profile_note(*none), "");
  const std::string path = save_for(bench::machine_fingerprint(machine_));
  auto loaded = load_profile_probing({}, probe);
  ASSERT_THAT(loaded, IsOk());
  EXPECT_EQ(probes, 1);
  EXPECT_EQ(profile_note(*loaded), "acco: engine profile from " + path + "\n");
  EXPECT_THAT(load_profile_probing({.file = path, .none = false, .directory = ""}, probe), IsOk());
  EXPECT_THAT(load_profile_probing({.file = "", .none = true, .directory = ""}, probe), IsOk());
  EXPECT_EQ(probes, 1);  // a named file or no profile: no fingerprint needed
  std::ofstream(path) << "{";
  EXPECT_THAT(profile_note(load_profile({}, &machine_).value()),
              HasSubstr("acco: tune profile not used: "));
  EXPECT_THAT(check_profile_choice({.file = path, .none = true, .directory = ""}),
              StatusIs(Errc::kInvalidArgument, "--profile and --no-profile exclude each other"));
  EXPECT_THAT(check_profile_choice({.file = path, .none = false, .directory = ""}), IsOk());
}

TEST_F(SavedProfileTest, AProfileOfAnotherFingerprintSaysTheMachineChanged) {
  auto state = saved_profile_state(machine_);
  ASSERT_THAT(state, IsOk());
  EXPECT_FALSE(state->exists);
  EXPECT_FALSE(state->others);
  save_for("other-0000000000000000");
  state = saved_profile_state(machine_);
  EXPECT_FALSE(state->exists);
  EXPECT_TRUE(state->others);
  EXPECT_EQ(state->path,
            profile_path(tune_directory().value(), bench::machine_fingerprint(machine_)));
  save_for(bench::machine_fingerprint(machine_));
  EXPECT_TRUE(saved_profile_state(machine_)->exists);
}

// The tune-dir setting: profiles there, not under XDG_STATE_HOME.
TEST_F(SavedProfileTest, ANamedDirectoryIsWhereProfilesAreLookedFor) {
  const testing::TempDir elsewhere;
  const std::string dir = (elsewhere.path() / "profiles").string();
  save_for(bench::machine_fingerprint(machine_));  // under XDG_STATE_HOME: not looked at
  EXPECT_FALSE(any_saved_profile(dir));
  EXPECT_TRUE(saved_engine_profiles(machine_, dir).empty());
  auto state = saved_profile_state(machine_, dir);
  ASSERT_THAT(state, IsOk());
  EXPECT_EQ(state->path, profile_path(dir, bench::machine_fingerprint(machine_)));
  EXPECT_FALSE(state->exists);

  stdfs::create_directories(dir);
  stdfs::copy_file(profile_path(tune_directory().value(), bench::machine_fingerprint(machine_)),
                   state->path);
  EXPECT_TRUE(any_saved_profile(dir));
  EXPECT_EQ(saved_engine_profiles(machine_, dir).size(), 1U);
  auto loaded = load_profile({.file = "", .none = false, .directory = dir}, &machine_);
  ASSERT_THAT(loaded, IsOk());
  EXPECT_EQ(loaded->path, state->path);
  EXPECT_EQ(tune_directory_or(dir).value(), dir);
  EXPECT_EQ(tune_directory_or("").value(), tune_directory().value());
}

}  // namespace
}  // namespace acco::tune
