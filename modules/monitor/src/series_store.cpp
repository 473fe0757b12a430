#include "acco/monitor/series_store.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <sqlite3.h>

#include "acco/core/file.hpp"
#include "acco/core/units.hpp"
#include "acco/monitor/fields.hpp"
#include "acco/monitor/host_rates.hpp"

namespace acco::monitor {
namespace {

// PRAGMA application_id marks the file as ours ("acco" in ASCII); user_version is the schema.
constexpr int kApplicationId = 0x6163636f;
constexpr int kSchemaVersion = 1;

constexpr std::int64_t kNanosPerSecond = 1'000'000'000;
constexpr std::int64_t kMinuteNanos = 60 * kNanosPerSecond;
// Work per batch is bounded so a store reopened after a long stop catches up over several
// batches instead of holding the sampler thread for one long transaction.
constexpr std::int64_t kMaxDownsampleNanos = 10 * kMinuteNanos;
constexpr std::int64_t kMaxRawDeleteNanos = 10 * kMinuteNanos;
constexpr std::int64_t kMaxMinuteDeleteNanos = 360 * kMinuteNanos;
constexpr std::int64_t kNoTime = std::numeric_limits<std::int64_t>::min();

constexpr const char* kSchema = R"sql(
CREATE TABLE series (
  id INTEGER PRIMARY KEY,
  device TEXT NOT NULL,
  uuid TEXT NOT NULL,
  name TEXT NOT NULL,
  unit TEXT NOT NULL,
  UNIQUE (device, uuid, name)
);
CREATE TABLE points (
  series_id INTEGER NOT NULL REFERENCES series (id),
  resolution_seconds INTEGER NOT NULL,
  time_unix_nanos INTEGER NOT NULL,
  value REAL NOT NULL,
  PRIMARY KEY (series_id, resolution_seconds, time_unix_nanos)
) WITHOUT ROWID;
CREATE INDEX points_by_time ON points (resolution_seconds, time_unix_nanos);
)sql";

std::int64_t floor_minute(std::int64_t t) {
  return t - (((t % kMinuteNanos) + kMinuteNanos) % kMinuteNanos);
}

std::int64_t nanos(std::chrono::seconds s) {
  return static_cast<std::int64_t>(s.count()) * kNanosPerSecond;
}

struct Finalize {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Stmt = std::unique_ptr<sqlite3_stmt, Finalize>;

struct PendingPoint {
  std::string device;
  std::string uuid;
  std::string name;
  std::string unit;
  std::int64_t time_unix_nanos = 0;
  double value = 0;
};

}  // namespace

struct SeriesStore::Impl {
  std::string path;
  SeriesStoreOptions options;
  sqlite3* db = nullptr;

  mutable std::mutex mutex;  // guards db and everything below
  std::vector<PendingPoint> pending;
  std::size_t pending_rounds = 0;
  std::optional<power::HostSample> previous_host;
  std::map<std::tuple<std::string, std::string, std::string>, std::int64_t> series_ids;
  std::int64_t minute_done_until = kNoTime;  // raw points before this are averaged already
  std::set<int> error_kinds;
  StoreStats stats;

  Impl() = default;
  ~Impl() { sqlite3_close(db); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  Impl(Impl&&) = delete;
  Impl& operator=(Impl&&) = delete;

  [[nodiscard]] std::string message() const { return sqlite3_errmsg(db); }

  Result<Stmt> prepare(const char* sql) const {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK) {
      return fail(Errc::kUnavailable, fmt::format("prepare: {}", message()));
    }
    return Stmt(s);
  }

  Status exec(const char* sql) const {
    if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
      return fail(Errc::kUnavailable, message());
    }
    return {};
  }

  // The first column of the first row, or nullopt (no row, or NULL).
  Result<std::optional<std::int64_t>> scalar(const char* sql,
                                             std::optional<std::int64_t> arg = std::nullopt) const {
    ACCO_ASSIGN_OR_RETURN(auto s, prepare(sql));
    if (arg) {
      sqlite3_bind_int64(s.get(), 1, *arg);
    }
    const int rc = sqlite3_step(s.get());
    if (rc == SQLITE_ROW) {
      if (sqlite3_column_type(s.get(), 0) == SQLITE_NULL) {
        return std::optional<std::int64_t>();
      }
      return std::optional<std::int64_t>(sqlite3_column_int64(s.get(), 0));
    }
    if (rc == SQLITE_DONE) {
      return std::optional<std::int64_t>();
    }
    return fail(Errc::kUnavailable, message());
  }

  Status step_done(sqlite3_stmt* s) const {
    const int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
      return fail(Errc::kUnavailable, message());
    }
    return {};
  }

  void queue(const analyze::Snapshot& snapshot) {
    const auto& fields = device_fields();
    for (const auto& d : snapshot.devices) {
      for (const auto& f : fields) {
        if (const auto v = f.get(d)) {
          pending.push_back({d.device, d.uuid, std::string(f.name), std::string(f.unit),
                             snapshot.time_unix_nanos, *v});
        }
      }
    }
    if (snapshot.host) {
      const auto rates = host_rates(*snapshot.host, previous_host ? &*previous_host : nullptr);
      for (const auto& f : host_fields()) {
        if (const auto& v = rates.*f.value) {
          pending.push_back(
              {"host", "", std::string(f.name), std::string(f.unit), snapshot.time_unix_nanos, *v});
        }
      }
      previous_host = *snapshot.host;
    }
    ++pending_rounds;
  }

  Result<std::int64_t> series_id(const PendingPoint& p) {
    const auto key = std::make_tuple(p.device, p.uuid, p.name);
    if (const auto it = series_ids.find(key); it != series_ids.end()) {
      return it->second;
    }
    ACCO_ASSIGN_OR_RETURN(auto insert,
                          prepare("INSERT OR IGNORE INTO series (device, uuid, name, unit) "
                                  "VALUES (?1, ?2, ?3, ?4)"));
    sqlite3_bind_text(insert.get(), 1, p.device.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_text(insert.get(), 2, p.uuid.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_text(insert.get(), 3, p.name.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_text(insert.get(), 4, p.unit.c_str(), -1, SQLITE_STATIC);
    ACCO_RETURN_IF_ERROR(step_done(insert.get()));
    ACCO_ASSIGN_OR_RETURN(auto select,
                          prepare("SELECT id FROM series WHERE device = ?1 AND uuid = ?2 AND "
                                  "name = ?3"));
    sqlite3_bind_text(select.get(), 1, p.device.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_text(select.get(), 2, p.uuid.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_text(select.get(), 3, p.name.c_str(), -1, SQLITE_STATIC);
    if (sqlite3_step(select.get()) != SQLITE_ROW) {
      return fail(Errc::kUnavailable, message());
    }
    const std::int64_t id = sqlite3_column_int64(select.get(), 0);
    series_ids.emplace(key, id);
    return id;
  }

  // Averages complete minutes of raw points, at most kMaxDownsampleNanos of them.
  Result<std::int64_t> downsample(std::int64_t newest, std::int64_t done_until) const {
    ACCO_ASSIGN_OR_RETURN(const auto first_raw,
                          scalar("SELECT min(time_unix_nanos) FROM points WHERE "
                                 "resolution_seconds = 0 AND time_unix_nanos >= ?1",
                                 done_until));
    if (!first_raw) {
      return done_until;
    }
    const std::int64_t from = std::max(done_until, floor_minute(*first_raw));
    const std::int64_t to = std::min(floor_minute(newest), from + kMaxDownsampleNanos);
    if (to <= from) {
      return done_until;
    }
    ACCO_ASSIGN_OR_RETURN(
        auto s, prepare("INSERT OR REPLACE INTO points "
                        "SELECT series_id, 60, time_unix_nanos - (time_unix_nanos % 60000000000), "
                        "avg(value) FROM points WHERE resolution_seconds = 0 AND "
                        "time_unix_nanos >= ?1 AND time_unix_nanos < ?2 "
                        "GROUP BY series_id, time_unix_nanos / 60000000000"));
    sqlite3_bind_int64(s.get(), 1, from);
    sqlite3_bind_int64(s.get(), 2, to);
    ACCO_RETURN_IF_ERROR(step_done(s.get()));
    return to;
  }

  // Deletes points of `resolution` older than `cutoff`, at most `max_span` of them by time.
  Status trim(int resolution, std::int64_t cutoff, std::int64_t max_span) const {
    ACCO_ASSIGN_OR_RETURN(const auto oldest, scalar("SELECT min(time_unix_nanos) FROM points WHERE "
                                                    "resolution_seconds = ?1",
                                                    resolution));
    if (!oldest || *oldest >= cutoff) {
      return {};
    }
    ACCO_ASSIGN_OR_RETURN(auto s, prepare("DELETE FROM points WHERE resolution_seconds = ?1 AND "
                                          "time_unix_nanos < ?2"));
    sqlite3_bind_int64(s.get(), 1, resolution);
    sqlite3_bind_int64(s.get(), 2, std::min(cutoff, *oldest + max_span));
    return step_done(s.get());
  }

  Result<std::int64_t> write_batch() {
    ACCO_RETURN_IF_ERROR(exec("BEGIN IMMEDIATE"));
    ACCO_ASSIGN_OR_RETURN(auto insert,
                          prepare("INSERT OR REPLACE INTO points VALUES (?1, 0, ?2, ?3)"));
    std::int64_t newest = kNoTime;
    for (const auto& p : pending) {
      ACCO_ASSIGN_OR_RETURN(const std::int64_t id, series_id(p));
      sqlite3_bind_int64(insert.get(), 1, id);
      sqlite3_bind_int64(insert.get(), 2, p.time_unix_nanos);
      sqlite3_bind_double(insert.get(), 3, p.value);
      ACCO_RETURN_IF_ERROR(step_done(insert.get()));
      newest = std::max(newest, p.time_unix_nanos);
    }
    std::int64_t done = minute_done_until;
    if (newest != kNoTime) {
      ACCO_ASSIGN_OR_RETURN(done, downsample(newest, done));
      // Raw points not yet averaged are kept past their retention until they are.
      ACCO_RETURN_IF_ERROR(
          trim(0, std::min(newest - nanos(options.raw_retention), done), kMaxRawDeleteNanos));
      ACCO_RETURN_IF_ERROR(
          trim(60, newest - nanos(options.minute_retention), kMaxMinuteDeleteNanos));
    }
    ACCO_RETURN_IF_ERROR(exec("COMMIT"));
    return done;
  }

  void flush_locked() {
    if (pending_rounds == 0) {
      return;
    }
    auto done = write_batch();
    if (done) {
      minute_done_until = *done;
      stats.points_total += pending.size();
      ++stats.batches_total;
    } else {
      const int kind = sqlite3_errcode(db) & 0xff;
      if (sqlite3_get_autocommit(db) == 0) {
        (void)exec("ROLLBACK");
      }
      series_ids.clear();  // ids inserted by the rolled-back transaction are gone
      ++stats.write_errors_total;
      if (error_kinds.insert(kind).second && options.on_write_error) {
        options.on_write_error(
            Error{Errc::kUnavailable,
                  fmt::format("series store {}: batch of {} round(s) dropped: {} ({})", path,
                              pending_rounds, done.error().message, sqlite3_errstr(kind))});
      }
    }
    pending.clear();
    pending_rounds = 0;
  }
};

SeriesStore::SeriesStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SeriesStore::~SeriesStore() {
  flush();
}

Result<std::unique_ptr<SeriesStore>> SeriesStore::open(const std::string& path,
                                                       SeriesStoreOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->options = std::move(options);
  const auto cannot_write = [&](const std::string& why) {
    return fail(Errc::kCannotWrite, fmt::format("cannot open the series store {}: {}", path, why));
  };
  const auto not_a_store = [&](const std::string& why) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{} is not an acco series store: {}", path, why));
  };
  // A device or a pipe there failed as "disk I/O error" (73): it is no store (65).
  ACCO_RETURN_IF_ERROR(core::check_file_or_absent(path));
  if (sqlite3_open_v2(path.c_str(), &impl->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                      nullptr) != SQLITE_OK) {
    return cannot_write(impl->db == nullptr ? "out of memory" : impl->message());
  }
  if (sqlite3_db_readonly(impl->db, "main") == 1) {
    return cannot_write("the file is read-only");
  }
  sqlite3_busy_timeout(impl->db, static_cast<int>(impl->options.busy_timeout.count()));
  auto app = impl->scalar("PRAGMA application_id");
  if (!app) {
    const int code = sqlite3_errcode(impl->db) & 0xff;
    if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) {
      return not_a_store(impl->message());
    }
    return cannot_write(impl->message());
  }
  ACCO_ASSIGN_OR_RETURN(const auto tables, impl->scalar("SELECT count(*) FROM sqlite_master"),
                        fmt::format("series store {}", path));
  if (app->value_or(0) == kApplicationId) {
    ACCO_ASSIGN_OR_RETURN(const auto version, impl->scalar("PRAGMA user_version"),
                          fmt::format("series store {}", path));
    if (version.value_or(0) != kSchemaVersion) {
      return not_a_store(fmt::format("schema version {}, this acco reads version {}",
                                     version.value_or(0), kSchemaVersion));
    }
    // A damaged file still reads its header and then fails every write: one pass over the file
    // here, so the daemon does not start with a store that can hold nothing.
    ACCO_ASSIGN_OR_RETURN(auto check, impl->prepare("PRAGMA quick_check(1)"),
                          fmt::format("series store {}", path));
    const int step = sqlite3_step(check.get());
    if (step != SQLITE_ROW) {
      const int code = sqlite3_errcode(impl->db) & 0xff;
      if (code != SQLITE_CORRUPT && code != SQLITE_NOTADB) {
        return cannot_write(impl->message());  // locked, an I/O error: not the file's fault
      }
      return not_a_store("damaged (" + impl->message() + ")");
    }
    const auto* verdict = sqlite3_column_text(check.get(), 0);
    const std::string said = verdict != nullptr ? reinterpret_cast<const char*>(verdict) : "";
    if (said != "ok") {
      return not_a_store("damaged (" + said + ")");
    }
  } else if (tables.value_or(0) != 0) {
    return not_a_store("it holds other tables (application_id is not acco's)");
  }
  // WAL with synchronous=NORMAL: a commit is one append to the log, and a process killed at any
  // point leaves every committed batch readable (a power loss may lose the latest ones).
  ACCO_ASSIGN_OR_RETURN(auto wal, impl->prepare("PRAGMA journal_mode = WAL"),
                        fmt::format("series store {}", path));
  if (sqlite3_step(wal.get()) != SQLITE_ROW ||
      std::string(reinterpret_cast<const char*>(sqlite3_column_text(wal.get(), 0))) != "wal") {
    return cannot_write(fmt::format("cannot use WAL journal mode: {}", impl->message()));
  }
  wal.reset();
  if (!impl->exec("PRAGMA synchronous = NORMAL")) {
    return cannot_write(impl->message());
  }
  if (app->value_or(0) != kApplicationId) {
    const std::string create = fmt::format(
        "BEGIN IMMEDIATE; {} PRAGMA application_id = {}; PRAGMA user_version = {}; COMMIT;",
        kSchema, kApplicationId, kSchemaVersion);
    if (!impl->exec(create.c_str())) {
      return cannot_write(fmt::format("create schema: {}", impl->message()));
    }
  }
  ACCO_ASSIGN_OR_RETURN(const auto last_minute,
                        impl->scalar("SELECT max(time_unix_nanos) FROM points WHERE "
                                     "resolution_seconds = 60"),
                        fmt::format("series store {}", path));
  if (last_minute) {
    impl->minute_done_until = *last_minute + kMinuteNanos;
  }
  return std::unique_ptr<SeriesStore>(new SeriesStore(std::move(impl)));
}

void SeriesStore::add(const analyze::Snapshot& snapshot) {
  const std::lock_guard lock(impl_->mutex);
  impl_->queue(snapshot);
  if (impl_->pending_rounds >= std::max<std::size_t>(1, impl_->options.batch_rounds)) {
    impl_->flush_locked();
  }
}

void SeriesStore::flush() {
  const std::lock_guard lock(impl_->mutex);
  impl_->flush_locked();
}

Result<std::vector<Series>> SeriesStore::query(const std::string& name,
                                               const std::optional<std::string>& device,
                                               std::int64_t since_unix_nanos,
                                               std::int64_t until_unix_nanos,
                                               std::size_t max_points) const {
  const std::lock_guard lock(impl_->mutex);
  const Impl& i = *impl_;
  const auto context = fmt::format("series store {}: query", i.path);
  ACCO_ASSIGN_OR_RETURN(const auto newest_raw,
                        i.scalar("SELECT max(time_unix_nanos) FROM points WHERE "
                                 "resolution_seconds = 0"),
                        context);
  ACCO_ASSIGN_OR_RETURN(const auto oldest, i.scalar("SELECT min(time_unix_nanos) FROM points"),
                        context);
  // The window as far as the store has points: "since 0" on a store ten minutes old is ten
  // minutes of raw points, not an empty list of minute averages.
  const std::int64_t since = std::max(since_unix_nanos, oldest.value_or(since_unix_nanos));
  const std::int64_t until = std::min(until_unix_nanos, newest_raw.value_or(until_unix_nanos));
  const std::int64_t span = std::max<std::int64_t>(0, until - since);
  // Raw points cover the raw retention back from the newest one; a window reaching further
  // back reads minute averages throughout, so its points are spaced alike.
  const bool raw = newest_raw && since >= *newest_raw - nanos(i.options.raw_retention);
  const auto count = static_cast<std::int64_t>(std::max<std::size_t>(1, max_points));
  // span / bucket < count, so at most `count` buckets.
  const std::int64_t bucket = span / count + 1;
  ACCO_ASSIGN_OR_RETURN(
      auto s,
      i.prepare("SELECT s.device, s.uuid, s.unit, min(p.time_unix_nanos), avg(p.value) "
                "FROM series s JOIN points p ON p.series_id = s.id "
                "WHERE s.name = ?1 AND (?2 IS NULL OR s.device = ?2) AND "
                "p.resolution_seconds = ?3 AND p.time_unix_nanos BETWEEN ?4 AND ?5 "
                "GROUP BY p.series_id, (p.time_unix_nanos - ?4) / ?6 "
                "ORDER BY s.device, s.uuid, 4"),
      context);
  sqlite3_bind_text(s.get(), 1, name.c_str(), -1, SQLITE_STATIC);
  if (device) {
    sqlite3_bind_text(s.get(), 2, device->c_str(), -1, SQLITE_STATIC);
  }
  sqlite3_bind_int(s.get(), 3, raw ? 0 : 60);
  sqlite3_bind_int64(s.get(), 4, since);
  sqlite3_bind_int64(s.get(), 5, until_unix_nanos);
  sqlite3_bind_int64(s.get(), 6, bucket);
  std::vector<Series> out;
  while (true) {
    const int rc = sqlite3_step(s.get());
    if (rc == SQLITE_DONE) {
      break;
    }
    if (rc != SQLITE_ROW) {
      return fail(Errc::kUnavailable, fmt::format("{}: {}", context, i.message()));
    }
    const auto text = [&](int column) {
      const auto* p = sqlite3_column_text(s.get(), column);
      return p == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(p));
    };
    std::string dev = text(0);
    std::string uuid = text(1);
    if (out.empty() || out.back().device != dev || out.back().uuid != uuid) {
      out.push_back({std::move(dev), std::move(uuid), text(2), raw ? 0 : 60, {}});
    }
    out.back().points.push_back(
        {sqlite3_column_int64(s.get(), 3), sqlite3_column_double(s.get(), 4)});
  }
  return out;
}

StoreStats SeriesStore::stats() const {
  const std::lock_guard lock(impl_->mutex);
  return impl_->stats;
}

const std::string& SeriesStore::path() const {
  return impl_->path;
}

std::string render_store_metrics(const StoreStats& stats) {
  return fmt::format(
      "# HELP acco_store_points_total Points written to the series store\n"
      "# TYPE acco_store_points_total counter\n"
      "acco_store_points_total {}\n"
      "# HELP acco_store_write_errors_total Series store batches that failed and were dropped\n"
      "# TYPE acco_store_write_errors_total counter\n"
      "acco_store_write_errors_total {}\n",
      stats.points_total, stats.write_errors_total);
}

Result<SeriesStoreOptions> parse_retention(const std::string& text, SeriesStoreOptions base) {
  const auto bad = [&](std::string_view part) {
    return fail(Errc::kInvalidArgument,
                fmt::format("cannot parse '{}' in '{}' (expected raw=DURATION,minute=DURATION, "
                            "e.g. raw=1h,minute=7d)",
                            units::excerpt(std::string(part)), units::excerpt(text)));
  };
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string_view part = std::string_view(text).substr(start, end - start);
    const auto eq = part.find('=');
    if (eq == std::string_view::npos) {
      return bad(part);
    }
    const auto key = part.substr(0, eq);
    const auto seconds = units::parse_duration(part.substr(eq + 1));
    if (!seconds || *seconds < 1) {
      return bad(part);
    }
    const std::chrono::seconds value(static_cast<std::int64_t>(*seconds));
    if (key == "raw") {
      base.raw_retention = value;
    } else if (key == "minute") {
      base.minute_retention = value;
    } else {
      return bad(part);
    }
    start = end + 1;
  }
  return base;
}

}  // namespace acco::monitor
