#include "acco/bench/history.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"

#include "runs.hpp"
#include "sqlite.hpp"

namespace acco::bench {
namespace {

using ::acco::testing::IsOk;
using ::acco::testing::slurp;
using ::acco::testing::StatusIs;
using ::acco::testing::TempDir;
using ::testing::Not;

namespace stdfs = std::filesystem;

BenchRun run_at(std::string created, std::string fingerprint = "node-a") {
  auto run = testing::sample_run();
  run.created = std::move(created);
  run.fingerprint = std::move(fingerprint);
  return run;
}

History open_ok(const std::string& path) {
  auto h = History::open(path);
  EXPECT_THAT(h, IsOk());
  return std::move(*h);
}

void exec(const std::string& path, const char* sql) {
  auto db = sqlite::Database::open(path);
  ASSERT_THAT(db, IsOk());
  ASSERT_THAT(db->exec(sql, "test"), IsOk());
}

TEST(HistoryTest, ANewFileHasNoRuns) {
  TempDir dir;
  auto h = open_ok(dir.file("history.sqlite"));
  EXPECT_TRUE(stdfs::exists(dir.file("history.sqlite")));
  EXPECT_EQ(h.path(), dir.file("history.sqlite"));
  const auto last = h.last_run("node-a");
  ASSERT_THAT(last, IsOk());
  EXPECT_FALSE(last->has_value());
}

TEST(HistoryTest, ASavedRunReadsBackEqual) {
  TempDir dir;
  auto h = open_ok(dir.file("history.sqlite"));
  const auto run = run_at("2025-03-01T12:00:00Z");
  ASSERT_THAT(h.save(run), IsOk());
  const auto last = h.last_run("node-a");
  ASSERT_THAT(last, IsOk());
  ASSERT_TRUE(last->has_value());
  EXPECT_EQ(**last, run);
}

TEST(HistoryTest, LastRunIsTheLatestOfThatMachine) {
  TempDir dir;
  auto h = open_ok(dir.file("history.sqlite"));
  ASSERT_THAT(h.save(run_at("2025-03-02T00:00:00Z")), IsOk());
  ASSERT_THAT(h.save(run_at("2025-03-01T00:00:00Z")), IsOk());  // saved later, older
  ASSERT_THAT(h.save(run_at("2025-03-09T00:00:00Z", "node-b")), IsOk());
  EXPECT_EQ((*h.last_run("node-a"))->created, "2025-03-02T00:00:00Z");
  EXPECT_EQ((*h.last_run("node-b"))->created, "2025-03-09T00:00:00Z");
  EXPECT_FALSE(h.last_run("node-c")->has_value());
}

// A copy-suite run compares with the last copy-suite run, not with a collective run saved since.
TEST(HistoryTest, TheRunToCompareWithSharesACaseWithTheCurrentOne) {
  TempDir dir;
  auto h = open_ok(dir.file("history.sqlite"));
  const auto copies = run_at("2025-03-01T00:00:00Z");
  auto collective = run_at("2025-03-02T00:00:00Z");
  collective.results.resize(1);
  collective.results[0].case_key = "collective_allreduce_2r1n";
  ASSERT_THAT(h.save(copies), IsOk());
  ASSERT_THAT(h.save(collective), IsOk());
  auto now = run_at("2025-03-03T00:00:00Z");
  EXPECT_EQ((*h.last_run_like(now))->created, "2025-03-01T00:00:00Z");
  EXPECT_EQ((*h.last_run("node-a"))->created, "2025-03-02T00:00:00Z");  // any case
  EXPECT_EQ((*h.last_run_like(collective))->created, "2025-03-02T00:00:00Z");
  now.results.resize(1);
  now.results[0].case_key = "collective_allreduce_4r2n";
  EXPECT_FALSE(h.last_run_like(now)->has_value());
}

TEST(RecordRunTest, ComparesOnlyWhenAskedAndSavesEveryTime) {
  TempDir dir;
  const auto file = dir.file("history.sqlite");
  auto first = record_run(file, run_at("2025-03-01T00:00:00Z"), true);
  ASSERT_THAT(first, IsOk());
  EXPECT_FALSE(first->had_previous);
  EXPECT_TRUE(first->comparisons.empty());
  EXPECT_EQ(first->warnings, "");
  auto second = record_run(file, run_at("2025-03-02T00:00:00Z"), true);
  ASSERT_THAT(second, IsOk());
  EXPECT_TRUE(second->had_previous);
  ASSERT_FALSE(second->comparisons.empty());
  for (const Comparison& c : second->comparisons) {
    EXPECT_EQ(c.change, Change::kUnchanged) << c.case_key;  // the same results twice
  }
  auto third = record_run(file, run_at("2025-03-03T00:00:00Z"), false);
  ASSERT_THAT(third, IsOk());
  EXPECT_FALSE(third->had_previous);  // not read without --compare
  EXPECT_EQ((*open_ok(file).last_run("node-a"))->created, "2025-03-03T00:00:00Z");
}

TEST(RecordRunTest, EachComparisonCarriesItsTrendOldestFirstWithThisRunLast) {
  TempDir dir;
  const auto file = dir.file("history.sqlite");
  ASSERT_THAT(record_run(file, run_at("2025-03-01T00:00:00Z"), false), IsOk());
  ASSERT_THAT(record_run(file, run_at("2025-03-01T00:00:00Z", "node-b"), false), IsOk());
  auto second = run_at("2025-03-02T00:00:00Z");
  second.results[0].median_bytes_per_second *= 2;
  ASSERT_THAT(record_run(file, second, false), IsOk());
  auto third = record_run(file, run_at("2025-03-03T00:00:00Z"), true);
  ASSERT_THAT(third, IsOk());
  ASSERT_FALSE(third->comparisons.empty());
  const Comparison& c = third->comparisons[0];
  ASSERT_EQ(c.trend.size(), 3U) << "node-b's run is another machine's";
  EXPECT_EQ(c.trend[0].created, "2025-03-01T00:00:00Z");
  EXPECT_EQ(c.trend[2].created, "2025-03-03T00:00:00Z");
  const double rate = testing::sample_run().results[0].median_bytes_per_second;
  EXPECT_DOUBLE_EQ(c.trend[1].value, 2 * rate);
  EXPECT_DOUBLE_EQ(c.trend[2].value, rate);
  auto h = open_ok(file);
  std::vector<Comparison> few = {c};
  ASSERT_THAT(h.add_trends("node-a", few, 2), IsOk());
  EXPECT_EQ(few[0].trend.size(), 2U) << "the last runs only";
  EXPECT_EQ(few[0].trend[0].created, "2025-03-02T00:00:00Z");
}

TEST(RecordRunTest, AnUnopenableHistoryIsAWarningOrWithCompareTheError) {
  TempDir dir;  // a directory is not a history file
  auto quiet = record_run(dir.path().string(), run_at("2025-03-01T00:00:00Z"), false);
  ASSERT_THAT(quiet, IsOk());
  EXPECT_THAT(quiet->warnings, ::testing::HasSubstr("acco: history not saved: "));
  EXPECT_THAT(record_run(dir.path().string(), run_at("2025-03-01T00:00:00Z"), true),
              StatusIs(Errc::kInvalidArgument, ::testing::HasSubstr("history")));
}

// A stored row that reads wrong failed only the comparison, with exit 0 and a line that read as
// an error; and text in a number column read as 0 B/s ("unchanged" against 7 GB/s).
TEST(RecordRunTest, ARowThatReadsWrongFailsTheComparisonAndNothingIsSaved) {
  TempDir dir;
  const auto file = dir.file("history.sqlite");
  ASSERT_THAT(record_run(file, run_at("2025-03-01T00:00:00Z"), false), IsOk());
  exec(file, "UPDATE results SET median_bytes_per_second = 'zz'");
  const auto text = open_ok(file).last_run("node-a");
  EXPECT_THAT(text, StatusIs(Errc::kInvalidArgument,
                             ::testing::HasSubstr(": median_bytes_per_second: not a number")));
  const auto compared = record_run(file, run_at("2025-03-02T00:00:00Z"), true);
  EXPECT_THAT(compared, StatusIs(Errc::kInvalidArgument,
                                 ::testing::HasSubstr("history: " + file + ": run 1: ")));
  exec(file, "UPDATE results SET median_bytes_per_second = 1e9");
  exec(file, "UPDATE runs SET machine = '{bad'");
  const auto machine = open_ok(file).last_run("node-a");
  ASSERT_THAT(machine, StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(machine.error().message, Not(::testing::HasSubstr("[json.exception")));
  EXPECT_EQ((*open_ok(file).last_run("node-b")), std::nullopt);
  exec(file, "UPDATE runs SET machine = '{}'");
  EXPECT_EQ((*open_ok(file).last_run("node-a"))->created, "2025-03-01T00:00:00Z");  // one run
}

TEST(HistoryTest, RunsInTheSameSecondOrderBySaveOrder) {
  TempDir dir;
  auto h = open_ok(dir.file("history.sqlite"));
  auto first = run_at("2025-03-01T00:00:00Z");
  auto second = first;
  second.results.pop_back();
  ASSERT_THAT(h.save(first), IsOk());
  ASSERT_THAT(h.save(second), IsOk());
  EXPECT_EQ(**h.last_run("node-a"), second);
}

TEST(HistoryTest, RunsSurviveReopeningAndAreSeenByAnotherConnection) {
  TempDir dir;
  const auto path = dir.file("history.sqlite");
  auto writer = open_ok(path);
  auto reader = open_ok(path);
  ASSERT_THAT(writer.save(run_at("2025-03-01T00:00:00Z")), IsOk());
  EXPECT_TRUE(reader.last_run("node-a")->has_value());
  { History moved = std::move(writer); }
  EXPECT_TRUE(open_ok(path).last_run("node-a")->has_value());
}

TEST(HistoryTest, AnEmptyFileBecomesAHistory) {
  TempDir dir;
  const auto path = dir.file("history.sqlite");
  std::ofstream(path).close();
  auto h = open_ok(path);
  EXPECT_THAT(h.save(run_at("2025-03-01T00:00:00Z")), IsOk());
}

TEST(HistoryTest, AFileThatIsNotADatabaseIsRejectedAndLeftAlone) {
  TempDir dir;
  const auto path = dir.file("history.sqlite");
  const std::string garbage(4096, 'x');
  std::ofstream(path) << garbage;
  const auto h = History::open(path);
  ASSERT_THAT(h, StatusIs(Errc::kInvalidArgument));
  EXPECT_EQ(h.error().message.rfind(path + ": ", 0), 0U) << h.error().message;
  EXPECT_EQ(h.error().message.find('\n'), std::string::npos);
  EXPECT_EQ(slurp(path), garbage);
  EXPECT_EQ(std::distance(stdfs::directory_iterator(dir.path()), stdfs::directory_iterator()), 1);
}

TEST(HistoryTest, DamagedPagesAreReportedAsCorrupt) {
  TempDir dir;
  const auto path = dir.file("history.sqlite");
  {
    auto h = open_ok(path);
    for (int i = 0; i < 8; ++i) {
      ASSERT_THAT(h.save(run_at("2025-03-01T00:00:00Z")), IsOk());
    }
  }
  const auto size = stdfs::file_size(path);
  ASSERT_GT(size, 4 * 4096U);
  {
    // Page 1 (the schema) stays readable; every later page becomes noise.
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4096);
    const std::string noise(size - 4096, '\xa5');
    f.write(noise.data(), static_cast<std::streamsize>(noise.size()));
  }
  const auto damaged = slurp(path);
  auto h = History::open(path);
  Error error;
  if (!h.has_value()) {
    error = h.error();
  } else {
    const auto last = h->last_run("node-a");
    ASSERT_THAT(last, Not(IsOk()));
    error = last.error();
  }
  EXPECT_EQ(error.code, Errc::kInvalidArgument);
  EXPECT_EQ(error.message.rfind(path + ": ", 0), 0U) << error.message;
  EXPECT_EQ(slurp(path), damaged);
}

TEST(HistoryTest, ANewerSchemaVersionIsRejectedAndLeftAlone) {
  TempDir dir;
  const auto path = dir.file("history.sqlite");
  { (void)open_ok(path); }
  exec(path, "PRAGMA user_version = 2");
  const auto before = slurp(path);
  const auto h = History::open(path);
  ASSERT_THAT(h, StatusIs(Errc::kInvalidArgument));
  EXPECT_EQ(h.error().message,
            path +
                ": history schema version 2 is newer than this acco reads (1); use a newer "
                "acco or another file");
  EXPECT_EQ(slurp(path), before);
}

TEST(HistoryTest, AnotherProgramsDatabaseIsRejected) {
  TempDir dir;
  const auto path = dir.file("other.sqlite");
  exec(path, "CREATE TABLE notes (text TEXT)");
  const auto h = History::open(path);
  ASSERT_THAT(h, StatusIs(Errc::kInvalidArgument));
  EXPECT_NE(h.error().message.find("not an acco history"), std::string::npos);

  const auto versioned = dir.file("versioned.sqlite");
  exec(versioned, "CREATE TABLE notes (text TEXT); PRAGMA user_version = 1");
  const auto h2 = History::open(versioned);
  ASSERT_THAT(h2, Not(IsOk()));
  EXPECT_EQ(h2.error().message,
            versioned +
                ": an SQLite database but not an acco history (application_id 0x0); "
                "left as it is, choose another file");
}

TEST(HistoryTest, PathErrorsNameThePath) {
  TempDir dir;
  EXPECT_THAT(History::open(""), StatusIs(Errc::kInvalidArgument));
  const auto is_dir = History::open(dir.path().string());
  EXPECT_THAT(is_dir, StatusIs(Errc::kInvalidArgument));
  EXPECT_EQ(is_dir.error().message, dir.path().string() + ": is a directory, expected a file");
  // A device or a pipe said "disk I/O error" (69).
  EXPECT_THAT(
      History::open("/dev/null"),
      StatusIs(Errc::kInvalidArgument, "/dev/null: is a character device, expected a file"));
  const auto missing = History::open(dir.file("no/such/dir/history.sqlite"));
  EXPECT_THAT(missing, StatusIs(Errc::kNotFound));
  EXPECT_EQ(missing.error().message, dir.file("no/such/dir/history.sqlite") + ": directory '" +
                                         dir.file("no/such/dir") + "' does not exist");
}

TEST(HistoryTest, AnUncreatableFileIsUnavailable) {
  // Even root cannot create files in /proc, so this holds in containers running as root.
  if (!stdfs::is_directory("/proc/self")) {
    GTEST_SKIP() << "no /proc here";
  }
  const auto h = History::open("/proc/acco-history.sqlite");
  ASSERT_THAT(h, StatusIs(Errc::kUnavailable));
  EXPECT_EQ(h.error().message.rfind("/proc/acco-history.sqlite: open: ", 0), 0U)
      << h.error().message;
}

TEST(HistoryTest, InvalidRunsAreNotSaved) {
  TempDir dir;
  const auto path = dir.file("history.sqlite");
  auto h = open_ok(path);
  auto no_fingerprint = run_at("2025-03-01T00:00:00Z", "");
  const auto s = h.save(no_fingerprint);
  ASSERT_THAT(s, StatusIs(Errc::kInvalidArgument));
  EXPECT_EQ(s.error().message, path + ": save: the run has no machine fingerprint");

  auto nan = run_at("2025-03-01T00:00:00Z");
  nan.results[0].cov = std::nan("");
  EXPECT_EQ(h.save(nan).error().message,
            path + ": save: results[0].cov: expected a non-negative number, got nan");
  auto bad_time = run_at("yesterday");
  EXPECT_THAT(h.save(bad_time), StatusIs(Errc::kInvalidArgument));
  EXPECT_FALSE(h.last_run("node-a")->has_value());
}

TEST(DefaultHistoryPathTest, PrefersAnAbsoluteXdgStateHome) {
  TempDir dir;
  const auto path = default_history_path(dir.file("state"), dir.file("home"));
  ASSERT_THAT(path, IsOk());
  EXPECT_EQ(*path, dir.file("state/acco/history.sqlite"));
  EXPECT_TRUE(stdfs::is_directory(dir.file("state/acco")));
}

TEST(DefaultHistoryPathTest, FallsBackToHomeForAnUnsetOrRelativeXdgStateHome) {
  TempDir dir;
  EXPECT_EQ(*default_history_path("", dir.file("home")),
            dir.file("home/.local/state/acco/history.sqlite"));
  EXPECT_EQ(*default_history_path("relative/state", dir.file("home")),
            dir.file("home/.local/state/acco/history.sqlite"));
  EXPECT_TRUE(stdfs::is_directory(dir.file("home/.local/state/acco")));
}

TEST(DefaultHistoryPathTest, NoPlaceOrNoDirectoryIsUnavailable) {
  EXPECT_THAT(default_history_path("", ""), StatusIs(Errc::kUnavailable));
  TempDir dir;
  std::ofstream(dir.file("home")) << "a file, not a directory";
  const auto path = default_history_path("", dir.file("home"));
  ASSERT_THAT(path, StatusIs(Errc::kUnavailable));
  EXPECT_EQ(path.error().message.rfind(dir.file("home/.local/state/acco") + ": ", 0), 0U)
      << path.error().message;
}

TEST(DefaultHistoryPathTest, ReadsTheEnvironment) {
  TempDir dir;
  const char* old_xdg = std::getenv("XDG_STATE_HOME");
  const std::string saved = old_xdg == nullptr ? "" : old_xdg;
  ::setenv("XDG_STATE_HOME", dir.file("xdg").c_str(), 1);
  EXPECT_EQ(*default_history_path(), dir.file("xdg/acco/history.sqlite"));
  if (old_xdg == nullptr) {
    ::unsetenv("XDG_STATE_HOME");
  } else {
    ::setenv("XDG_STATE_HOME", saved.c_str(), 1);
  }
}

}  // namespace
}  // namespace acco::bench
