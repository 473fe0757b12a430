// `acco tune` end to end on the host backend: a short budgeted run writes a profile that conforms
// to docs/schemas/tune-profile.schema.json, --show reads it back, SIGINT leaves the old file, and
// the doctor says when this machine has no profile. Every run gets its own XDG_STATE_HOME.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "json_schema.hpp"
#include "sysroot_builder.hpp"

namespace acco::testing {
namespace {

namespace stdfs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

struct Run {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const stdfs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `sh -c` on `script` with `$ACCO` set to the binary and XDG_STATE_HOME to `state`.
Run shell(const std::string& script, const stdfs::path& state) {
  TempDir io;
  const std::string cmd =
      "env -u ACCO_SYSROOT -u ACCO_NVML -u ACCO_NVML_LIBRARY -u ACCO_CONFIG "
      "XDG_STATE_HOME=" +
      state.string() + " ACCO=" + std::string(ACCO_BINARY) + " sh -c '" + script + "' >" +
      (io.path() / "out").string() + " 2>" + (io.path() / "err").string();
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(io.path() / "out"),
          slurp(io.path() / "err")};
}

Run acco(const std::string& args, const stdfs::path& state) {
  return shell("$ACCO " + args, state);
}

void expect_conforms(const std::string& text) {
  const auto schema = nlohmann::json::parse(
      slurp(stdfs::path(ACCO_SOURCE_DIR) / "docs/schemas/tune-profile.schema.json"));
  const auto errors = validate(schema, nlohmann::json::parse(text));
  EXPECT_TRUE(errors.empty()) << ::testing::PrintToString(errors);
}

TEST(TuneCliTest, ShortRunWritesAProfileThatShowReadsBack) {
  TempDir state;
  const auto file = (state.path() / "p.json").string();
  const auto r =
      acco("tune --backend host --budget 2s --link 25GB/s --bytes 4MiB --json --output " + file,
           state.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("acco: tune profile written to " + file));
  expect_conforms(r.out);
  const auto written = nlohmann::json::parse(slurp(file));
  EXPECT_EQ(written, nlohmann::json::parse(r.out));
  EXPECT_EQ(written["paths"].size(), 4U);
  EXPECT_EQ(written["link"], "25GB/s");

  const auto show = acco("tune --show --json --output " + file, state.path());
  ASSERT_EQ(show.exit_code, 0) << show.err;
  expect_conforms(show.out);
  const auto shown = nlohmann::json::parse(show.out);
  EXPECT_EQ(shown["path"], file);
  EXPECT_EQ(shown["defaults"]["chunk_bytes"], 4 << 20);
  EXPECT_EQ(shown["paths"], written["paths"]);

  const auto text = acco("tune --show --output " + file, state.path());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("Tune profile " + file));
  EXPECT_THAT(text.out, HasSubstr("h2d_pageable"));
  EXPECT_THAT(text.out, HasSubstr("fit (alpha + bytes / beta)"));
}

TEST(TuneCliTest, BenchLoadsTheNamedProfileAndRefusesBothFlags) {
  TempDir state;
  const auto file = (state.path() / "p.json").string();
  ASSERT_EQ(
      acco("tune --backend host --budget 1s --bytes 1MiB --output " + file, state.path()).exit_code,
      0);
  const auto bench = acco(
      "bench --backend host --no-history --quick --cases h2d_pageable_engine "
      "--profile " +
          file,
      state.path());
  EXPECT_EQ(bench.exit_code, 0) << bench.err;
  EXPECT_THAT(bench.err, HasSubstr("acco: engine profile from " + file));
  const auto both = acco("bench --profile " + file + " --no-profile", state.path());
  EXPECT_EQ(both.exit_code, 64);
  EXPECT_THAT(both.err, HasSubstr("--profile and --no-profile exclude each other"));
  const auto missing = acco(
      "bench --backend host --no-history --quick --cases h2d_pageable_engine "
      "--profile " +
          (state.path() / "none.json").string(),
      state.path());
  EXPECT_EQ(missing.exit_code, 66);
  EXPECT_THAT(missing.err, HasSubstr("--profile"));
}

TEST(TuneCliTest, SigintLeavesTheOldProfile) {
  TempDir state;
  const auto file = (state.path() / "p.json").string();
  std::ofstream(file) << "old\n";
  const auto r = shell("$ACCO tune --backend host --budget 60s --output " + file +
                           " & pid=$!; sleep 1; kill -INT $pid; wait $pid",
                       state.path());
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_THAT(r.err, HasSubstr("interrupted; " + file + " left as it was"));
  EXPECT_EQ(slurp(file), "old\n");
  int files = 0;
  for (const auto& e : stdfs::directory_iterator(state.path())) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1);  // no temporary left
}

TEST(TuneCliTest, BadFlagsAreOneLineUsageErrors) {
  TempDir state;
  const auto budget = acco("tune --budget soon", state.path());
  EXPECT_EQ(budget.exit_code, 64);
  EXPECT_EQ(budget.err, "acco: --budget: 'soon' is not a duration from 1s to 24h\n");
  const auto bytes = acco("tune --bytes 1KiB", state.path());
  EXPECT_EQ(bytes.exit_code, 64);
  EXPECT_THAT(bytes.err, HasSubstr("--bytes"));
  const auto link = acco("tune --link fast", state.path());
  EXPECT_EQ(link.exit_code, 64);
  EXPECT_THAT(link.err, HasSubstr("--link"));
}

TEST(TuneCliTest, ShowWithoutAProfileSaysToRunTune) {
  TempDir state;
  const auto r = acco("tune --show", state.path());
  EXPECT_EQ(r.exit_code, 66);
  EXPECT_THAT(r.err, HasSubstr("no tune profile for this machine"));
  EXPECT_THAT(r.err, HasSubstr("run acco tune"));
}

TEST(TuneCliTest, DoctorSaysWhenThisMachineHasNoProfile) {
  TempDir state;
  const auto none = acco("doctor --no-bench --json", state.path());
  ASSERT_NE(none.out, "") << none.err;
  EXPECT_THAT(none.out, HasSubstr("tune-profile-missing"));
  EXPECT_THAT(none.out, Not(HasSubstr("machine changed")));

  // A profile for another fingerprint: the machine changed since the last tune.
  stdfs::create_directories(state.path() / "acco" / "tune");
  std::ofstream(state.path() / "acco" / "tune" / "other-0000000000000000.json") << "{}\n";
  const auto changed = acco("doctor --no-bench", state.path());
  EXPECT_THAT(changed.out, HasSubstr("the machine changed since the last tune"));

  ASSERT_EQ(acco("tune --backend host --budget 1s --bytes 1MiB", state.path()).exit_code, 0);
  const auto tuned = acco("doctor --no-bench --json", state.path());
  EXPECT_THAT(tuned.out, Not(HasSubstr("tune-profile-missing")));
}

}  // namespace
}  // namespace acco::testing
