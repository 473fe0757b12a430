#include "acco/bench/history.hpp"

#include <array>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "acco/core/file.hpp"
#include "acco/core/json.hpp"

#include "sqlite.hpp"

namespace acco::bench {
namespace {

namespace stdfs = std::filesystem;

// Schema version 1. Results are rows (so the file answers SQL questions such as "this case over
// time") rather than one JSON blob; the sweep and the machine summary stay JSON text.
constexpr const char* kCreateSchema = R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  fingerprint TEXT NOT NULL,
  created TEXT NOT NULL,
  host TEXT NOT NULL,
  schema TEXT NOT NULL,
  machine TEXT NOT NULL
);
CREATE INDEX runs_by_fingerprint ON runs (fingerprint, created);
CREATE TABLE results (
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  case_key TEXT NOT NULL,
  device TEXT NOT NULL,
  status TEXT NOT NULL,
  reason TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  median_bytes_per_second REAL NOT NULL,
  min_bytes_per_second REAL NOT NULL,
  max_bytes_per_second REAL NOT NULL,
  cov REAL NOT NULL,
  peak_bytes_per_second REAL NOT NULL,
  efficiency REAL NOT NULL,
  verdict TEXT NOT NULL,
  strategy TEXT NOT NULL,
  timer TEXT NOT NULL,
  latency_seconds REAL,
  sweep TEXT NOT NULL,
  PRIMARY KEY (run_id, position)
) WITHOUT ROWID;
)sql";

// The single integer a one-row query returns (0 when it returns no row).
Result<std::int64_t> query_integer(sqlite::Database& db, const std::string& sql) {
  ACCO_ASSIGN_OR_RETURN(auto stmt, sqlite::Statement::prepare(db, sql));
  ACCO_ASSIGN_OR_RETURN(const bool row, stmt.step());
  return row ? stmt.integer(0) : 0;
}

Result<std::int64_t> pragma(sqlite::Database& db, const char* name) {
  return query_integer(db, fmt::format("PRAGMA {}", name));
}

Result<std::int64_t> table_count(sqlite::Database& db) {
  return query_integer(db, "SELECT count(*) FROM sqlite_master");
}

// Checks that `db` is an acco history of a version we read, creating the tables in an empty
// file. Reading the pragmas is also what makes SQLite look at the file at all, so garbage shows
// up here as SQLITE_NOTADB.
Status prepare_schema(sqlite::Database& db) {
  ACCO_ASSIGN_OR_RETURN(auto version, pragma(db, "user_version"));
  if (version == 0) {
    // Take the write lock, then look again: another acco may be creating the same file.
    ACCO_ASSIGN_OR_RETURN(auto tx, sqlite::Transaction::begin(db));
    ACCO_ASSIGN_OR_RETURN(version, pragma(db, "user_version"));
    if (version == 0) {
      ACCO_ASSIGN_OR_RETURN(const auto tables, table_count(db));
      if (tables > 0) {
        return fail(Errc::kInvalidArgument,
                    fmt::format("{}: an SQLite database but not an acco history (it has tables "
                                "and no schema version); left as it is, choose another file",
                                db.path()));
      }
      const auto ddl = fmt::format("{}PRAGMA application_id = {}; PRAGMA user_version = {};",
                                   kCreateSchema, kHistoryApplicationId, kHistorySchemaVersion);
      ACCO_RETURN_IF_ERROR(db.exec(ddl.c_str(), "create tables"));
      ACCO_RETURN_IF_ERROR(tx.commit());
      return {};
    }
  }
  ACCO_ASSIGN_OR_RETURN(const auto application, pragma(db, "application_id"));
  if (application != kHistoryApplicationId) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: an SQLite database but not an acco history (application_id "
                            "{:#x}); left as it is, choose another file",
                            db.path(), application));
  }
  if (version > kHistorySchemaVersion) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: history schema version {} is newer than this acco reads ({}); "
                            "use a newer acco or another file",
                            db.path(), version, kHistorySchemaVersion));
  }
  return {};
}

Result<std::string> ensure_directory(const stdfs::path& dir) {
  std::error_code ec;
  stdfs::create_directories(dir, ec);
  if (ec || !stdfs::is_directory(dir, ec)) {
    return fail(Errc::kUnavailable,
                fmt::format("{}: cannot create the history directory: {}", dir.string(),
                            ec ? ec.message() : "not a directory"));
  }
  return (dir / "history.sqlite").string();
}

}  // namespace

struct History::Impl {
  sqlite::Database db;
};

Result<std::string> default_history_path(std::string_view xdg_state_home, std::string_view home) {
  if (!xdg_state_home.empty() && xdg_state_home.front() == '/') {
    return ensure_directory(stdfs::path(xdg_state_home) / "acco");
  }
  if (!home.empty()) {
    return ensure_directory(stdfs::path(home) / ".local" / "state" / "acco");
  }
  return fail(Errc::kUnavailable,
              "cannot place the bench history: neither XDG_STATE_HOME nor HOME is set");
}

Result<std::string> default_history_path() {
  const char* xdg = std::getenv("XDG_STATE_HOME");
  const char* home = std::getenv("HOME");
  return default_history_path(xdg == nullptr ? "" : xdg, home == nullptr ? "" : home);
}

History::History(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
History::History(History&& other) noexcept = default;
History& History::operator=(History&& other) noexcept = default;
History::~History() = default;

Result<History> History::open(const std::string& path) {
  if (path.empty()) {
    return fail(Errc::kInvalidArgument, "bench history: empty path");
  }
  ACCO_RETURN_IF_ERROR(core::check_file_or_absent(path));  // a device read as "disk I/O error"
  std::error_code ec;
  const auto parent = stdfs::path(path).parent_path();
  if (!parent.empty() && !stdfs::is_directory(parent, ec)) {
    return fail(Errc::kNotFound,
                fmt::format("{}: directory '{}' does not exist", path, parent.string()));
  }
  ACCO_ASSIGN_OR_RETURN(auto db, sqlite::Database::open(path));
  ACCO_RETURN_IF_ERROR(prepare_schema(db));
  return History(std::make_unique<Impl>(Impl{std::move(db)}));
}

const std::string& History::path() const {
  return impl_->db.path();
}

Status History::save(const BenchRun& run) {
  auto& db = impl_->db;
  const auto invalid = [&](const std::string& why) {
    return fail(Errc::kInvalidArgument, fmt::format("{}: save: {}", db.path(), why));
  };
  if (auto valid = run_from_json(nlohmann::json(to_json(run))); !valid) {
    return invalid(valid.error().message);
  }
  if (run.fingerprint.empty()) {
    return invalid("the run has no machine fingerprint");
  }
  for (const auto& r : run.results) {
    if (r.bytes > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return invalid(
          fmt::format("{}: bytes {} does not fit SQLite's integers", r.case_key, r.bytes));
    }
  }

  ACCO_ASSIGN_OR_RETURN(auto tx, sqlite::Transaction::begin(db));
  ACCO_ASSIGN_OR_RETURN(
      auto insert_run,
      sqlite::Statement::prepare(
          db,
          "INSERT INTO runs (fingerprint, created, host, schema, machine) VALUES (?, ?, ?, ?, ?)"));
  auto s = insert_run.bind(1, run.fingerprint)
               .and_then([&] { return insert_run.bind(2, run.created); })
               .and_then([&] { return insert_run.bind(3, run.host); })
               .and_then([&] { return insert_run.bind(4, run.schema); })
               .and_then([&] { return insert_run.bind(5, run.machine.dump()); })
               .and_then([&] { return insert_run.step().transform([](bool) {}); });
  if (!s) {
    return s;
  }
  const auto run_id = db.last_insert_rowid();

  ACCO_ASSIGN_OR_RETURN(auto st, sqlite::Statement::prepare(db, R"sql(
      INSERT INTO results (run_id, position, case_key, device, status, reason, bytes,
                           median_bytes_per_second, min_bytes_per_second, max_bytes_per_second,
                           cov, peak_bytes_per_second, efficiency, verdict, strategy, timer,
                           latency_seconds, sweep)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?))sql"));
  for (std::size_t i = 0; i < run.results.size(); ++i) {
    const auto& r = run.results[i];
    nlohmann::json sweep = nlohmann::json::array();
    for (const auto& p : r.sweep) {
      sweep.push_back({p.bytes, p.median_bytes_per_second});
    }
    st.reset();
    s = st.bind(1, run_id)
            .and_then([&] { return st.bind(2, static_cast<std::int64_t>(i)); })
            .and_then([&] { return st.bind(3, r.case_key); })
            .and_then([&] { return st.bind(4, r.device); })
            .and_then([&] { return st.bind(5, r.status); })
            .and_then([&] { return st.bind(6, r.reason); })
            .and_then([&] { return st.bind(7, static_cast<std::int64_t>(r.bytes)); })
            .and_then([&] { return st.bind(8, r.median_bytes_per_second); })
            .and_then([&] { return st.bind(9, r.min_bytes_per_second); })
            .and_then([&] { return st.bind(10, r.max_bytes_per_second); })
            .and_then([&] { return st.bind(11, r.cov); })
            .and_then([&] { return st.bind(12, r.peak_bytes_per_second); })
            .and_then([&] { return st.bind(13, r.efficiency); })
            .and_then([&] { return st.bind(14, r.verdict); })
            .and_then([&] { return st.bind(15, r.strategy); })
            .and_then([&] { return st.bind(16, r.timer); })
            .and_then([&] { return st.bind(17, r.latency_seconds); })
            .and_then([&] { return st.bind(18, sweep.dump()); })
            .and_then([&] { return st.step().transform([](bool) {}); });
    if (!s) {
      return s;
    }
  }
  return tx.commit();
}

Result<std::optional<BenchRun>> History::last_run_like(const BenchRun& current) {
  std::vector<std::string> cases;
  cases.reserve(current.results.size());
  for (const BenchResult& r : current.results) {
    cases.push_back(r.case_key);
  }
  return last_run(current.fingerprint, cases);
}

Status History::add_trends(std::string_view fingerprint, std::vector<Comparison>& comparisons,
                           std::size_t runs) {
  ACCO_ASSIGN_OR_RETURN(auto st, sqlite::Statement::prepare(impl_->db, R"sql(
      SELECT runs.created, results.median_bytes_per_second, results.latency_seconds
      FROM results JOIN runs ON runs.id = results.run_id
      WHERE runs.fingerprint = ? AND results.case_key = ? AND results.device = ?
        AND results.status = 'ok'
      ORDER BY runs.created DESC, runs.id DESC LIMIT ?)sql"));
  for (Comparison& c : comparisons) {
    st.reset();
    ACCO_RETURN_IF_ERROR(st.bind(1, fingerprint));
    ACCO_RETURN_IF_ERROR(st.bind(2, c.case_key));
    ACCO_RETURN_IF_ERROR(st.bind(3, c.device));
    ACCO_RETURN_IF_ERROR(st.bind(4, static_cast<std::int64_t>(runs)));
    const int column = c.metric == "latency_seconds" ? 2 : 1;
    c.trend.clear();
    while (true) {
      ACCO_ASSIGN_OR_RETURN(const bool row, st.step());
      if (!row) {
        break;
      }
      if (st.is_null(column)) {
        continue;
      }
      if (!st.is_number(column)) {
        return fail(
            Errc::kInvalidArgument,
            fmt::format("{}: {} on {}: {}: not a number", impl_->db.path(), c.case_key, c.device,
                        column == 2 ? "latency_seconds" : "median_bytes_per_second"));
      }
      c.trend.push_back({st.text(0), st.real(column)});
    }
    std::reverse(c.trend.begin(), c.trend.end());
  }
  return {};
}

Result<std::optional<BenchRun>> History::last_run(std::string_view fingerprint,
                                                  std::span<const std::string> cases) {
  auto& db = impl_->db;
  std::string sql = "SELECT id, created, host, schema, machine FROM runs WHERE fingerprint = ?";
  if (!cases.empty()) {
    sql += " AND id IN (SELECT run_id FROM results WHERE case_key IN (?";
    for (std::size_t i = 1; i < cases.size(); ++i) {
      sql += ", ?";
    }
    sql += "))";
  }
  sql += " ORDER BY created DESC, id DESC LIMIT 1";
  ACCO_ASSIGN_OR_RETURN(auto find, sqlite::Statement::prepare(db, sql));
  ACCO_RETURN_IF_ERROR(find.bind(1, fingerprint));
  for (std::size_t i = 0; i < cases.size(); ++i) {
    ACCO_RETURN_IF_ERROR(find.bind(static_cast<int>(i) + 2, cases[i]));
  }
  ACCO_ASSIGN_OR_RETURN(const bool row, find.step());
  if (!row) {
    return std::nullopt;
  }
  const auto run_id = find.integer(0);
  const auto corrupt = [&](std::string_view why) {
    return fail(Errc::kInvalidArgument, fmt::format("{}: run {}: {}", db.path(), run_id, why));
  };

  // Rebuild the run's JSON form and read it back with run_from_json, so stored rows get the same
  // validation as a JSON file.
  nlohmann::json run = {{"schema", find.text(3)}, {"created", find.text(1)},
                        {"host", find.text(2)},   {"fingerprint", std::string(fingerprint)},
                        {"machine", nullptr},     {"results", nlohmann::json::array()}};
  try {
    run["machine"] = nlohmann::json::parse(find.text(4));
  } catch (const nlohmann::json::exception& e) {
    return corrupt(fmt::format("machine: not valid JSON: {}", core::json_message(e)));
  }

  ACCO_ASSIGN_OR_RETURN(auto st, sqlite::Statement::prepare(db, R"sql(
      SELECT case_key, device, status, reason, bytes, median_bytes_per_second,
             min_bytes_per_second, max_bytes_per_second, cov, peak_bytes_per_second, efficiency,
             verdict, strategy, timer, latency_seconds, sweep
      FROM results WHERE run_id = ? ORDER BY position)sql"));
  ACCO_RETURN_IF_ERROR(st.bind(1, run_id));
  while (true) {
    ACCO_ASSIGN_OR_RETURN(const bool next, st.step());
    if (!next) {
      break;
    }
    nlohmann::json sweep = nlohmann::json::array();
    try {
      for (const auto& p : nlohmann::json::parse(st.text(15))) {
        sweep.push_back({{"bytes", p.at(0)}, {"median_bytes_per_second", p.at(1)}});
      }
    } catch (const nlohmann::json::exception& e) {
      return corrupt(fmt::format("{}: sweep: {}", st.text(0), core::json_message(e)));
    }
    // Text in a number column reads as 0 (a rate of 0 B/s compared as "unchanged").
    constexpr std::array<std::pair<int, const char*>, 7> kNumbers = {
        {{4, "bytes"},
         {5, "median_bytes_per_second"},
         {6, "min_bytes_per_second"},
         {7, "max_bytes_per_second"},
         {8, "cov"},
         {9, "peak_bytes_per_second"},
         {10, "efficiency"}}};
    for (const auto& [column, name] : kNumbers) {
      if (!st.is_number(column)) {
        return corrupt(fmt::format("{}: {}: not a number", st.text(0), name));
      }
    }
    if (!st.is_null(14) && !st.is_number(14)) {
      return corrupt(fmt::format("{}: latency_seconds: not a number", st.text(0)));
    }
    run["results"].push_back({{"case", st.text(0)},
                              {"device", st.text(1)},
                              {"status", st.text(2)},
                              {"reason", st.text(3)},
                              {"bytes", st.integer(4)},
                              {"median_bytes_per_second", st.real(5)},
                              {"min_bytes_per_second", st.real(6)},
                              {"max_bytes_per_second", st.real(7)},
                              {"cov", st.real(8)},
                              {"peak_bytes_per_second", st.real(9)},
                              {"efficiency", st.real(10)},
                              {"verdict", st.text(11)},
                              {"strategy", st.text(12)},
                              {"timer", st.text(13)},
                              {"latency_seconds", st.is_null(14) ? nlohmann::json(nullptr)
                                                                 : nlohmann::json(st.real(14))},
                              {"sweep", std::move(sweep)}});
  }
  auto parsed = run_from_json(run);
  if (!parsed) {
    return corrupt(parsed.error().message);
  }
  return std::optional<BenchRun>(std::move(*parsed));
}

Result<Recorded> record_run(const std::string& path, const BenchRun& run, bool compare) {
  Recorded out;
  auto where = path.empty() ? default_history_path() : Result<std::string>(path);
  auto history = where ? History::open(*where) : Result<History>(tl::unexpected(where.error()));
  if (!history) {
    if (compare) {
      return tl::unexpected(std::move(history.error()).with_context("history"));
    }
    out.warnings = fmt::format("acco: history not saved: {}\n", history.error().message);
    return out;
  }
  if (compare) {
    auto previous = history->last_run_like(run);
    if (!previous) {
      // The comparison asked for cannot be made: an error of its own (65 for a corrupt row, as
      // for a file that is not a history), and nothing saved into a file that reads wrong.
      return tl::unexpected(std::move(previous.error()).with_context("history"));
    }
    if (*previous) {
      out.had_previous = true;
      out.comparisons = bench::compare(**previous, run);
    }
  }
  if (auto saved = history->save(run); !saved) {
    out.warnings += fmt::format("acco: history not saved: {}\n", saved.error().message);
  } else if (!out.comparisons.empty()) {
    if (auto trends = history->add_trends(run.fingerprint, out.comparisons, kTrendRuns); !trends) {
      out.warnings += fmt::format("acco: no trend over the history: {}\n", trends.error().message);
    }
  }
  return out;
}

}  // namespace acco::bench
