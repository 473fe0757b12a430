// `acco tune` end to end on the host backend: a short budgeted run writes a profile that conforms
// to docs/schemas/tune-profile.schema.json, --show reads it back, --file adds the storage reader
// which `bench --suite storage` then uses, SIGINT leaves the old file, and the doctor says when
// this machine has no profile. Every run gets its own XDG_STATE_HOME.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "acco/testing/files.hpp"
#include "acco/testing/json_schema.hpp"

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

TEST(TuneCliTest, ShortRunWritesAProfileThatShowReadsBack) {
  TempDir state;
  const auto file = (state.path() / "p.json").string();
  const auto r =
      acco("tune --backend host --budget 2s --link 25GB/s --bytes 4MiB --json --output " + file,
           state.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("acco: tune profile written to " + file));
  expect_conforms(r.out, "tune-profile.schema.json");
  const auto written = nlohmann::json::parse(slurp(file));
  EXPECT_EQ(written, nlohmann::json::parse(r.out));
  EXPECT_EQ(written["paths"].size(), 4U);
  EXPECT_EQ(written["link"], "25GB/s");
  EXPECT_FALSE(written.contains("reader"));  // no --file

  const auto show = acco("tune --show --json --output " + file, state.path());
  ASSERT_EQ(show.exit_code, 0) << show.err;
  expect_conforms(show.out, "tune-profile.schema.json");
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

TEST(TuneCliTest, ScheduleLoadsTheProfileSavedForThisMachineOrTheNamedOne) {
  TempDir state;
  // Saved under XDG_STATE_HOME for this machine's fingerprint, for schedule's default link.
  ASSERT_EQ(
      acco("tune --backend host --devices 2 --budget 1s --bytes 1MiB --link pcie3x16", state.path())
          .exit_code,
      0);
  const auto saved =
      acco("schedule --devices host:2 --workload independent --tasks 4", state.path());
  EXPECT_EQ(saved.exit_code, 0) << saved.err;
  EXPECT_THAT(saved.err, HasSubstr("acco: engine profile from " + state.path().string()));
  const auto off =
      acco("schedule --devices host:2 --workload independent --tasks 4 --no-profile", state.path());
  EXPECT_EQ(off.exit_code, 0) << off.err;
  EXPECT_THAT(off.err, Not(HasSubstr("engine profile")));
  const auto missing =
      acco("schedule --devices host:2 --workload independent --tasks 4 --profile " +
               (state.path() / "none.json").string(),
           state.path());
  EXPECT_EQ(missing.exit_code, 66);
  EXPECT_THAT(missing.err, HasSubstr("--profile"));
  const auto both = acco("schedule --profile x.json --no-profile", state.path());
  EXPECT_EQ(both.exit_code, 64);
  EXPECT_THAT(both.err, HasSubstr("--profile and --no-profile exclude each other"));
}

// The tune-dir setting moves the profiles for the command that writes them and those that read
// them: --tune-dir on tune, ACCO_TUNE_DIR for schedule and doctor.
TEST(TuneCliTest, TheTuneDirSettingIsWhereProfilesAreWrittenAndRead) {
  TempDir state;
  TempDir elsewhere;
  const std::string dir = (elsewhere.path() / "profiles").string();
  const auto tuned = acco(
      "tune --backend host --devices 2 --budget 1s --bytes 1MiB --link pcie3x16 --tune-dir " + dir,
      state.path());
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  EXPECT_THAT(tuned.err, HasSubstr("acco: tune profile written to " + dir + "/"));
  EXPECT_FALSE(stdfs::exists(state.path() / "acco" / "tune")) << "nothing under XDG_STATE_HOME";

  const auto shown = acco("tune --show --json --tune-dir " + dir, state.path());
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_THAT(nlohmann::json::parse(shown.out)["path"].get<std::string>(), HasSubstr(dir));

  const std::string schedule = "schedule --devices host:2 --workload independent --tasks 4";
  const auto read = shell("ACCO_TUNE_DIR=" + dir + " $ACCO " + schedule, state.path());
  EXPECT_EQ(read.exit_code, 0) << read.err;
  EXPECT_THAT(read.err, HasSubstr("acco: engine profile from " + dir + "/"));
  const auto unset = acco(schedule, state.path());
  EXPECT_THAT(unset.err, Not(HasSubstr("engine profile"))) << "XDG_STATE_HOME holds none";

  const auto doctor =
      shell("ACCO_TUNE_DIR=" + dir + " $ACCO doctor --no-bench --json", state.path());
  EXPECT_THAT(doctor.out, Not(HasSubstr("tune-profile-missing"))) << doctor.err;
  const auto doctor_default = acco("doctor --no-bench --json", state.path());
  EXPECT_THAT(doctor_default.out, HasSubstr("tune-profile-missing"));
}

// The storage_h2d result of a bench --json run.
nlohmann::json storage_h2d(const std::string& out) {
  const auto run = nlohmann::json::parse(out);
  for (const auto& r : run["results"]) {
    if (r["case"] == "storage_h2d") {
      return r;
    }
  }
  return nullptr;
}

TEST(TuneCliTest, FileTunesTheReaderAndTheStorageBenchUsesIt) {
  TempDir state;
  DiskTempDir disk;  // on the build tree's disk, where O_DIRECT normally works
  const auto data = (disk.path() / "data.bin").string();
  {
    std::ofstream out(data, std::ios::binary);
    const std::string block(std::size_t{1} << 20, 'a');
    for (int i = 0; i < 8; ++i) {
      out << block;
    }
  }
  const auto file = (state.path() / "p.json").string();
  const auto r = acco(
      "tune --backend host --budget 4s --bytes 4MiB --json --file " + data + " --output " + file,
      state.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_conforms(r.out, "tune-profile.schema.json");
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("reader")) << r.out;
  const auto& reader = j["reader"];
  EXPECT_EQ(reader["file"], data);
  EXPECT_EQ(reader["bytes"], 4 << 20);
  ASSERT_FALSE(reader["candidates"].empty());
  // The defaults are measured first.
  EXPECT_EQ(reader["candidates"][0]["options"],
            nlohmann::json({{"block_bytes", 1 << 20}, {"depth", 16}, {"threads", 1}}));
  EXPECT_EQ(nlohmann::json::parse(slurp(file)), j);

  const auto show = acco("tune --show --output " + file, state.path());
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr("storage reader on " + data));
  EXPECT_THAT(show.out, HasSubstr("read_discard"));
  const auto show_json = acco("tune --show --json --output " + file, state.path());
  ASSERT_EQ(show_json.exit_code, 0) << show_json.err;
  expect_conforms(show_json.out, "tune-profile.schema.json");
  EXPECT_EQ(nlohmann::json::parse(show_json.out)["reader_defaults"]["depth"], 16);

  const std::string bench = "bench --suite storage --file " + data +
                            " --bytes 4MiB --quick --reps 1 --no-history --json --cases "
                            "storage_to_device ";
  const auto tuned = acco(bench + "--profile " + file, state.path());
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  EXPECT_THAT(tuned.err, HasSubstr("acco: storage reader from the tune profile: block "));
  const auto h2d = storage_h2d(tuned.out);
  ASSERT_TRUE(h2d.is_object()) << tuned.out;
  EXPECT_EQ(h2d["status"], "ok") << h2d.dump();
  const std::string point = " x " + std::to_string(reader["options"]["depth"].get<int>()) + " x " +
                            std::to_string(reader["options"]["threads"].get<int>()) + " thread";
  EXPECT_THAT(h2d["strategy"].get<std::string>(), HasSubstr(point));
  EXPECT_THAT(h2d["strategy"].get<std::string>(), HasSubstr("from the tune profile"));

  const auto plain = acco(bench + "--no-profile", state.path());
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_THAT(plain.err, Not(HasSubstr("storage reader from the tune profile")));
  EXPECT_THAT(storage_h2d(plain.out)["strategy"].get<std::string>(),
              Not(HasSubstr("tune profile")));
}

TEST(TuneCliTest, SigintLeavesTheOldProfile) {
  TempDir state;
  const auto file = (state.path() / "p.json").string();
  const auto first =
      acco("tune --backend host --budget 2s --bytes 4MiB --output " + file, state.path());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string old = slurp(file);
  // SIGINT once acco says it is tuning: a background job of a non-interactive shell starts
  // with SIGINT ignored until acco installs its own handling, so a fixed sleep lost the signal
  // when acco started slowly (ASan on a loaded machine).
  const auto r = shell("e=$(mktemp); $ACCO tune --backend host --budget 60s --output " + file +
                           " 2>$e & pid=$!; for i in $(seq 600); do grep -q \"acco tune:\" $e "
                           "&& break; sleep 0.05; done; kill -INT $pid; wait $pid; s=$?; cat $e "
                           ">&2; rm -f $e; exit $s",
                       state.path());
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_THAT(r.err, HasSubstr("interrupted; " + file + " left as it was"));
  EXPECT_EQ(slurp(file), old);
  int files = 0;
  for (const auto& e : stdfs::directory_iterator(state.path())) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1);  // no temporary left
}

// A file in the way that is not a profile (another program's, a corrupt one) was replaced after
// the run without a word: it is refused before the run and left as it is.
TEST(TuneCliTest, AFileThatIsNotAProfileIsLeftAsItIs) {
  TempDir state;
  const auto file = (state.path() / "p.json").string();
  for (const std::string content : {"{\"schema\": \"acco.other/1\", \"precious\": 1}\n", "old\n"}) {
    std::ofstream(file) << content;
    const auto r = acco("tune --backend host --budget 60s --output " + file, state.path());
    EXPECT_EQ(r.exit_code, 65) << r.err;
    EXPECT_THAT(r.err, HasSubstr(file));
    EXPECT_THAT(r.err, HasSubstr("left as it is (remove it, or give --output another file)"));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(slurp(file), content);
  }
}

// Issue 33: both ran to the end, printed nothing and exited 73. An output is checked before the
// work, in one line naming it.
TEST(OutputPathTest, BenchHtmlAndTuneOutputAreCheckedBeforeTheWork) {
  TempDir state;
  const auto html = acco(
      "bench --backend host --no-history --quick --cases host_memcpy --html "
      "/nonexistent/r.html",
      state.path());
  EXPECT_EQ(html.exit_code, 73);
  EXPECT_EQ(html.err,
            "acco: --html: cannot write /nonexistent/r.html: directory /nonexistent does not "
            "exist\n");
  EXPECT_EQ(html.out, "");
  const auto dir = acco("bench --backend host --no-history --quick --cases host_memcpy --html " +
                            state.path().string(),
                        state.path());
  EXPECT_EQ(dir.exit_code, 73);
  EXPECT_THAT(dir.err, HasSubstr("is a directory, expected a file"));
  EXPECT_EQ(std::count(dir.err.begin(), dir.err.end(), '\n'), 1) << dir.err;
  const auto tune =
      acco("tune --backend host --budget 60s --output /nonexistent/p.json", state.path());
  EXPECT_EQ(tune.exit_code, 73);
  EXPECT_EQ(tune.err,
            "acco: --output: cannot write /nonexistent/p.json: directory /nonexistent does not "
            "exist\n");
  EXPECT_EQ(tune.out, "");
}

// The check passed, the write failed at the end (the directory went away during the run): the
// results are still printed.
TEST(OutputPathTest, AReportThatCannotBeWrittenAtTheEndDoesNotHideTheResults) {
  TempDir state;
  const auto dir = state.path() / "reports";
  stdfs::create_directory(dir);
  const auto r = shell(
      "$ACCO bench --backend host --no-history --cases h2d_pinned_plain --bytes "
      "64MiB --reps 60 --html " +
          (dir / "r.html").string() + " & pid=$!; sleep 1; rm -r " + dir.string() + "; wait $pid",
      state.path());
  EXPECT_EQ(r.exit_code, 73) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--html"));
  EXPECT_THAT(r.out, HasSubstr("h2d_pinned_plain"));
  EXPECT_THAT(r.out, HasSubstr("acco bench on"));
}

TEST(OutputPathTest, SigintStopsTheBenchAndPrintsTheFinishedCases) {
  TempDir state;
  const auto r = shell(
      "$ACCO bench --backend host --cases h2d_pinned_plain,d2h_pinned_plain,h2d_pageable_plain "
      "--bytes 64MiB --reps 40 & pid=$!; sleep 1.5; kill -INT $pid; wait $pid",
      state.path());
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_THAT(r.err, HasSubstr("acco: bench interrupted; "));
  EXPECT_THAT(r.err, HasSubstr("not saved to the history"));
  EXPECT_THAT(r.out, HasSubstr("acco bench on"));
  EXPECT_FALSE(stdfs::exists(state.path() / "acco" / "history.sqlite"));
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
  const auto missing = (state.path() / "none.bin").string();
  const auto file = acco("tune --file " + missing, state.path());
  EXPECT_EQ(file.exit_code, 64);
  EXPECT_EQ(file.err, "acco: --file: '" + missing + "' is not a regular file\n");
  std::ofstream(state.path() / "tiny.bin") << "x";
  const auto tiny = acco("tune --file " + (state.path() / "tiny.bin").string(), state.path());
  EXPECT_EQ(tiny.exit_code, 64);
  EXPECT_THAT(tiny.err, HasSubstr("is smaller than 4 KiB"));
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
