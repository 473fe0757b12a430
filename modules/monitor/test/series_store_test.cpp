#include "acco/monitor/series_store.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acco/testing/files.hpp"
#include "acco/testing/matchers.hpp"

namespace acco::monitor {
namespace {

using ::acco::testing::StatusIs;
using ::acco::testing::TempDir;
using ::testing::HasSubstr;

constexpr std::int64_t kSecond = 1'000'000'000;
// A minute boundary, so minute buckets line up with the test's rounds.
constexpr std::int64_t kT0 = 1'800'000'000LL * kSecond;

// `devices` devices whose power_watts is `watts` (device i reads watts + i), at time t.
analyze::Snapshot round_at(std::int64_t t, double watts, int devices = 2) {
  analyze::Snapshot s;
  s.time_unix_nanos = t;
  for (int i = 0; i < devices; ++i) {
    power::DeviceSample d;
    d.device = std::to_string(i);
    d.uuid = "SIM-" + std::to_string(i);
    d.power_watts = watts + i;
    d.temperature_gpu_celsius = 50;
    s.devices.push_back(d);
  }
  return s;
}

SeriesStoreOptions every(std::size_t rounds) {
  SeriesStoreOptions o;
  o.batch_rounds = rounds;
  return o;
}

std::int64_t count_rows(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr);
  const std::int64_t n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
  sqlite3_finalize(s);
  sqlite3_close(db);
  return n;
}

TEST(SeriesStoreTest, PointsWrittenAreReadBackPerDevice) {
  TempDir dir;
  auto store = SeriesStore::open(dir.file("s.db"), every(1));
  ASSERT_TRUE(store) << store.error().message;
  for (int i = 0; i < 3; ++i) {
    (*store)->add(round_at(kT0 + i * kSecond, 100 + i));
  }
  const auto all = (*store)->query("power_watts", std::nullopt, kT0, kT0 + 10 * kSecond);
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_EQ(all->size(), 2U);
  EXPECT_EQ((*all)[0].device, "0");
  EXPECT_EQ((*all)[0].uuid, "SIM-0");
  EXPECT_EQ((*all)[0].unit, "watts");
  EXPECT_EQ((*all)[0].resolution_seconds, 0);
  EXPECT_EQ((*all)[0].points,
            (std::vector<SeriesPoint>{{kT0, 100}, {kT0 + kSecond, 101}, {kT0 + 2 * kSecond, 102}}));
  EXPECT_EQ((*all)[1].points.front(), (SeriesPoint{kT0, 101}));

  const auto one = (*store)->query("power_watts", "1", kT0 + kSecond, kT0 + kSecond);
  ASSERT_TRUE(one);
  ASSERT_EQ(one->size(), 1U);
  EXPECT_EQ((*one)[0].points, (std::vector<SeriesPoint>{{kT0 + kSecond, 102}}));
  EXPECT_EQ((*store)->stats().points_total, 12U);  // 3 rounds x 2 devices x 2 fields
  EXPECT_EQ((*store)->stats().batches_total, 3U);
  EXPECT_TRUE((*store)->query("no_such_field", std::nullopt, 0, kT0 * 2)->empty());
}

TEST(SeriesStoreTest, RoundsAreInvisibleUntilTheirBatchCommitsAndFlushWritesTheRest) {
  TempDir dir;
  auto store = SeriesStore::open(dir.file("s.db"), every(5));
  ASSERT_TRUE(store);
  const auto points = [&] {
    const auto r = (*store)->query("power_watts", "0", kT0, kT0 + 100 * kSecond);
    return r->empty() ? 0U : (*r)[0].points.size();
  };
  for (int i = 0; i < 4; ++i) {
    (*store)->add(round_at(kT0 + i * kSecond, 100));
  }
  EXPECT_EQ(points(), 0U);
  EXPECT_EQ((*store)->stats().points_total, 0U);
  (*store)->add(round_at(kT0 + 4 * kSecond, 100));
  EXPECT_EQ(points(), 5U);
  (*store)->add(round_at(kT0 + 5 * kSecond, 100));
  EXPECT_EQ(points(), 5U);
  (*store)->flush();
  EXPECT_EQ(points(), 6U);
  EXPECT_EQ((*store)->stats().batches_total, 2U);
}

TEST(SeriesStoreTest, RetentionDeletesOldRawPointsAndKeepsMinuteAveragesWithTheRightMean) {
  TempDir dir;
  const auto path = dir.file("s.db");
  SeriesStoreOptions o = every(10);
  o.raw_retention = std::chrono::seconds(120);
  o.minute_retention = std::chrono::seconds(3600);
  auto store = SeriesStore::open(path, o);
  ASSERT_TRUE(store);
  // Ten minutes at 1 s; within each minute the value is the second, 0..59: mean 29.5.
  for (int i = 0; i < 600; ++i) {
    (*store)->add(round_at(kT0 + i * kSecond, i % 60, 1));
  }
  const std::int64_t newest = kT0 + 599 * kSecond;
  EXPECT_EQ(count_rows(path,
                       "SELECT count(*) FROM points WHERE resolution_seconds = 0 AND "
                       "time_unix_nanos < " +
                           std::to_string(newest - 120 * kSecond)),
            0);
  const auto minutes = (*store)->query("power_watts", "0", kT0, newest);
  ASSERT_TRUE(minutes);
  ASSERT_EQ(minutes->size(), 1U);
  EXPECT_EQ((*minutes)[0].resolution_seconds, 60);
  ASSERT_EQ((*minutes)[0].points.size(), 9U);  // the tenth minute is still being filled
  for (std::size_t m = 0; m < 9; ++m) {
    EXPECT_EQ((*minutes)[0].points[m].time_unix_nanos,
              kT0 + static_cast<std::int64_t>(m) * 60 * kSecond);
    EXPECT_DOUBLE_EQ((*minutes)[0].points[m].value, 29.5);
  }
  // Three hours later the minute averages are past their hour too.
  (*store)->add(round_at(kT0 + 3 * 3600 * kSecond, 1, 1));
  (*store)->flush();
  EXPECT_EQ(count_rows(path,
                       "SELECT count(*) FROM points WHERE resolution_seconds = 60 AND "
                       "time_unix_nanos < " +
                           std::to_string(kT0 + 2 * 3600 * kSecond)),
            0);
  EXPECT_TRUE((*store)->query("power_watts", "0", kT0, kT0 + 600 * kSecond)->empty());
}

TEST(SeriesStoreTest, QueryPicksRawForARecentWindowAndMinutesForALongOne) {
  TempDir dir;
  SeriesStoreOptions o = every(20);
  o.raw_retention = std::chrono::seconds(600);
  auto store = SeriesStore::open(dir.file("s.db"), o);
  ASSERT_TRUE(store);
  for (int i = 0; i < 1200; ++i) {
    (*store)->add(round_at(kT0 + i * kSecond, 200, 1));
  }
  const std::int64_t newest = kT0 + 1199 * kSecond;
  const auto recent = (*store)->query("power_watts", "0", newest - 299 * kSecond, newest);
  ASSERT_TRUE(recent);
  ASSERT_EQ(recent->size(), 1U);
  EXPECT_EQ((*recent)[0].resolution_seconds, 0);
  EXPECT_EQ((*recent)[0].points.size(), 300U);

  const auto long_window = (*store)->query("power_watts", "0", kT0, newest);
  ASSERT_TRUE(long_window);
  EXPECT_EQ((*long_window)[0].resolution_seconds, 60);
  EXPECT_EQ((*long_window)[0].points.size(), 19U);
  EXPECT_DOUBLE_EQ((*long_window)[0].points[0].value, 200);

  const auto thinned =
      (*store)->query("power_watts", "0", newest - 299 * kSecond, newest, /*max_points=*/10);
  ASSERT_TRUE(thinned);
  EXPECT_LE((*thinned)[0].points.size(), 10U);
  EXPECT_GE((*thinned)[0].points.size(), 9U);
}

TEST(SeriesStoreTest, AReopenedStoreKeepsItsDataAndAppends) {
  TempDir dir;
  const auto path = dir.file("s.db");
  {
    auto store = SeriesStore::open(path, every(5));
    ASSERT_TRUE(store);
    for (int i = 0; i < 3; ++i) {
      (*store)->add(round_at(kT0 + i * kSecond, 100, 1));
    }
  }  // closing flushes the partial batch
  auto store = SeriesStore::open(path, every(1));
  ASSERT_TRUE(store) << store.error().message;
  (*store)->add(round_at(kT0 + 3 * kSecond, 100, 1));
  const auto r = (*store)->query("power_watts", "0", kT0, kT0 + 10 * kSecond);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->size(), 1U);
  EXPECT_EQ((*r)[0].points.size(), 4U);
  EXPECT_EQ(count_rows(path, "SELECT count(*) FROM series"), 2);
}

TEST(SeriesStoreTest, HostCpuBusyAndMemoryUsedAreStoredUnderHost) {
  TempDir dir;
  auto store = SeriesStore::open(dir.file("s.db"), every(1));
  ASSERT_TRUE(store);
  for (int i = 0; i < 2; ++i) {
    analyze::Snapshot s = round_at(kT0 + i * kSecond, 1, 0);
    power::HostSample h;
    h.cpu.seconds = {{"user", 10.0 + 3 * i}, {"idle", 100.0 + i}};
    h.memory_bytes = {{"total", 1000}, {"available", 250}};
    s.host = h;
    (*store)->add(s);
  }
  const auto busy = (*store)->query(kHostCpuBusyRatio, "host", kT0, kT0 + kSecond);
  ASSERT_TRUE(busy);
  ASSERT_EQ(busy->size(), 1U);
  EXPECT_EQ((*busy)[0].points, (std::vector<SeriesPoint>{{kT0 + kSecond, 0.75}}));
  const auto memory = (*store)->query(kHostMemoryUsedBytes, "host", kT0, kT0 + kSecond);
  ASSERT_TRUE(memory);
  EXPECT_EQ((*memory)[0].points.size(), 2U);
  EXPECT_EQ((*memory)[0].points[0].value, 750);
}

TEST(SeriesStoreTest, AWriteLockHeldElsewhereIsCountedReportedOnceAndWritingGoesOn) {
  TempDir dir;
  const auto path = dir.file("s.db");
  SeriesStoreOptions o = every(1);
  o.busy_timeout = std::chrono::milliseconds(10);
  std::vector<std::string> reported;
  o.on_write_error = [&](const Error& e) { reported.push_back(e.message); };
  auto store = SeriesStore::open(path, o);
  ASSERT_TRUE(store);
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  (*store)->add(round_at(kT0, 100));
  (*store)->add(round_at(kT0 + kSecond, 100));
  EXPECT_EQ((*store)->stats().write_errors_total, 2U);
  ASSERT_EQ(reported.size(), 1U);
  EXPECT_THAT(reported[0], HasSubstr("series store " + path));
  EXPECT_THAT(reported[0], HasSubstr("locked"));
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  (*store)->add(round_at(kT0 + 2 * kSecond, 100));
  EXPECT_EQ((*store)->stats().batches_total, 1U);
  EXPECT_EQ((*store)->query("power_watts", "0", kT0, kT0 + 9 * kSecond)->at(0).points.size(), 1U);
}

TEST(SeriesStoreTest, AReadOnlyFileIsCannotWriteNamingIt) {
  TempDir dir;
  const auto path = dir.file("s.db");
  ASSERT_TRUE(SeriesStore::open(path));
  std::filesystem::permissions(path, std::filesystem::perms::owner_read |
                                         std::filesystem::perms::group_read |
                                         std::filesystem::perms::others_read);
  std::filesystem::permissions(dir.file(""), std::filesystem::perms::all);
  const auto refused = [&] {
    const auto r = SeriesStore::open(path);
    return !r && r.error().code == Errc::kCannotWrite &&
           r.error().message.find("cannot open the series store " + path + ": ") == 0;
  };
  if (::geteuid() != 0) {
    EXPECT_TRUE(refused());
    return;
  }
  // Root writes read-only files, so as root the check runs in a child turned into nobody.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) {
      ::_exit(3);
    }
    ::_exit(refused() ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(SeriesStoreTest, APathInAMissingDirectoryIsCannotWriteNamingTheFile) {
  const auto r = SeriesStore::open("/proc/acco-no-such-dir/s.db");
  ASSERT_THAT(r, StatusIs(Errc::kCannotWrite));
  EXPECT_THAT(r.error().message,
              HasSubstr("cannot open the series store /proc/acco-no-such-dir/s.db: "));
}

TEST(SeriesStoreTest, AFileThatIsNotAnAccoStoreIsInvalidArgumentNamingIt) {
  TempDir dir;
  const auto other = dir.file("other.db");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(other.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE runs (id INTEGER)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const auto r = SeriesStore::open(other);
  ASSERT_THAT(r, StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(r.error().message, HasSubstr(other + " is not an acco series store"));

  const auto newer = dir.file("newer.db");
  ASSERT_TRUE(SeriesStore::open(newer));
  ASSERT_EQ(sqlite3_open(newer.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 2", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  const auto n = SeriesStore::open(newer);
  ASSERT_THAT(n, StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(n.error().message, HasSubstr("schema version 2, this acco reads version 1"));

  const auto text = dir.file("notes.txt");
  std::ofstream(text) << "this is not a database, just some text that is long enough to matter "
                         "for SQLite's header check, which reads the first hundred bytes\n";
  const auto t = SeriesStore::open(text);
  ASSERT_THAT(t, StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(t.error().message, HasSubstr(text + " is not an acco series store"));
  // A device said "disk I/O error" (73).
  EXPECT_THAT(SeriesStore::open("/dev/null"),
              StatusIs(Errc::kInvalidArgument, HasSubstr("/dev/null: is a character device")));
}

// A store damaged in the middle opened, and then every write failed for the daemon's whole run
// (acco_store_write_errors_total only): refused at open, the file left as it is.
TEST(SeriesStoreTest, AStoreDamagedInTheMiddleIsRefusedAtOpen) {
  TempDir dir;
  const auto path = dir.file("damaged.db");
  {
    auto store = SeriesStore::open(path, every(1));
    ASSERT_TRUE(store);
    for (int i = 0; i < 200; ++i) {
      (*store)->add(round_at(std::int64_t{1'000'000'000} * (i + 1), 100 + i, 8));
    }
  }
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  const auto size = std::filesystem::file_size(path);
  ASSERT_GT(size, 16384U);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    const std::string junk(2000, static_cast<char>(0xab));
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  const auto r = SeriesStore::open(path);
  ASSERT_THAT(r, StatusIs(Errc::kInvalidArgument));
  EXPECT_THAT(r.error().message, HasSubstr(path + " is not an acco series store: damaged ("));
  EXPECT_EQ(std::filesystem::file_size(path), size);
}

TEST(SeriesStoreTest, KilledWithSigkillMidRunKeepsEveryCommittedBatchIntact) {
  TempDir dir;
  const auto path = dir.file("s.db");
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    auto store = SeriesStore::open(path, every(5));
    if (!store) {
      ::_exit(1);
    }
    std::uint64_t reported = 0;
    for (int i = 0;; ++i) {
      (*store)->add(round_at(kT0 + i * kSecond, 100, 4));
      const auto batches = (*store)->stats().batches_total;
      if (batches != reported) {
        reported = batches;
        if (::write(fds[1], &reported, sizeof reported) != sizeof reported) {
          ::_exit(2);
        }
      }
    }
  }
  ::close(fds[1]);
  std::uint64_t committed = 0;
  while (committed < 40) {
    ASSERT_EQ(::read(fds[0], &committed, sizeof committed), static_cast<ssize_t>(sizeof committed));
  }
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(fds[0]);
  ASSERT_TRUE(WIFSIGNALED(status));

  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)), "ok");
  sqlite3_finalize(s);
  sqlite3_close(db);

  auto store = SeriesStore::open(path, every(5));
  ASSERT_TRUE(store) << store.error().message;
  const auto r = (*store)->query("power_watts", "3", kT0, kT0 + 100000 * kSecond, 1'000'000);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->size(), 1U);
  EXPECT_GE((*r)[0].points.size(), committed * 5);
  EXPECT_EQ((*r)[0].points.size() % 5, 0U);  // whole batches only
}

TEST(SeriesStoreTest, RetentionFlagReadsRawAndMinuteAndRejectsTheRest) {
  const auto both = parse_retention("raw=2h,minute=30d");
  ASSERT_TRUE(both);
  EXPECT_EQ(both->raw_retention, std::chrono::seconds(7200));
  EXPECT_EQ(both->minute_retention, std::chrono::seconds(30 * 86400));
  const auto raw = parse_retention("raw=10m");
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->raw_retention, std::chrono::seconds(600));
  EXPECT_EQ(raw->minute_retention, std::chrono::seconds(7 * 86400));
  for (const char* bad : {"", "raw", "raw=soon", "hour=1h", "raw=1h,", "raw=0s"}) {
    EXPECT_THAT(parse_retention(bad), StatusIs(Errc::kInvalidArgument)) << bad;
  }
  EXPECT_THAT(parse_retention("raw=1h,hour=2h").error().message, HasSubstr("'hour=2h'"));
}

TEST(SeriesStoreTest, StoreMetricsAreTwoCounters) {
  const auto text = render_store_metrics({.points_total = 12, .write_errors_total = 3});
  EXPECT_THAT(text,
              HasSubstr("# TYPE acco_store_points_total counter\nacco_store_points_total 12\n"));
  EXPECT_THAT(text, HasSubstr("acco_store_write_errors_total 3\n"));
}

}  // namespace
}  // namespace acco::monitor
