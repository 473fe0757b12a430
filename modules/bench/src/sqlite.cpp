#include "sqlite.hpp"

#include <utility>

#include <fmt/format.h>
#include <sqlite3.h>

namespace acco::bench::sqlite {
namespace {

// Chosen by what the user should do with the file.
Errc errc_for(int code) {
  switch (code & 0xff) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
    case SQLITE_FORMAT:
      return Errc::kInvalidArgument;  // the file is not what it should be: move it away
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_NOMEM:
    case SQLITE_AUTH:
      return Errc::kUnavailable;  // the file or disk cannot be used right now
    default:
      return Errc::kInternal;  // SQL or API misuse: a bug in acco
  }
}

// Another acco writing the same history holds the lock for milliseconds; wait that long.
constexpr int kBusyTimeoutMs = 5000;

}  // namespace

Result<Database> Database::open(const std::string& path) {
  sqlite3* db = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  Database database(db, path);  // closes the handle on every path below, even a failed open
  if (rc != SQLITE_OK) {
    if (db == nullptr) {
      return fail(Errc::kUnavailable, fmt::format("{}: open: out of memory", path));
    }
    return tl::unexpected(database.error("open"));
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  return database;
}

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    sqlite3_close(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

Database::~Database() {
  // Statements and transactions never outlive their database, so close cannot be busy.
  sqlite3_close(db_);
}

Status Database::exec(const char* sql, std::string_view what) {
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
    return tl::unexpected(error(what));
  }
  return {};
}

std::int64_t Database::last_insert_rowid() const {
  return sqlite3_last_insert_rowid(db_);
}

Error Database::error(std::string_view what) const {
  const int code = sqlite3_extended_errcode(db_);
  return Error{errc_for(code), fmt::format("{}: {}: {}", path_, what, sqlite3_errmsg(db_))};
}

Result<Statement> Statement::prepare(Database& db, std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) !=
      SQLITE_OK) {
    return tl::unexpected(db.error("prepare"));
  }
  return Statement(stmt, &db);
}

Statement::Statement(Statement&& other) noexcept
    : stmt_(std::exchange(other.stmt_, nullptr)), db_(other.db_) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = std::exchange(other.stmt_, nullptr);
    db_ = other.db_;
  }
  return *this;
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

Status Statement::check_bind(int rc, int index) {
  if (rc != SQLITE_OK) {
    return tl::unexpected(db_->error(fmt::format("bind {}", index)));
  }
  return {};
}

Status Statement::bind(int index, std::string_view text) {
  return check_bind(
      sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT),
      index);
}

Status Statement::bind(int index, std::int64_t value) {
  return check_bind(sqlite3_bind_int64(stmt_, index, value), index);
}

Status Statement::bind(int index, double value) {
  return check_bind(sqlite3_bind_double(stmt_, index, value), index);
}

Status Statement::bind(int index, std::optional<double> value) {
  return value ? bind(index, *value) : check_bind(sqlite3_bind_null(stmt_, index), index);
}

Result<bool> Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) {
    return true;
  }
  if (rc == SQLITE_DONE) {
    return false;
  }
  return tl::unexpected(db_->error("query"));
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string Statement::text(int column) const {
  const auto* p = sqlite3_column_text(stmt_, column);
  const int n = sqlite3_column_bytes(stmt_, column);
  return p == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(p), n);
}

std::int64_t Statement::integer(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double Statement::real(int column) const {
  return sqlite3_column_double(stmt_, column);
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

bool Statement::is_number(int column) const {
  const int type = sqlite3_column_type(stmt_, column);
  return type == SQLITE_INTEGER || type == SQLITE_FLOAT;
}

Result<Transaction> Transaction::begin(Database& db) {
  ACCO_RETURN_IF_ERROR(db.exec("BEGIN IMMEDIATE", "begin"));
  return Transaction(&db);
}

Transaction::Transaction(Transaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

Transaction::~Transaction() {
  if (db_ != nullptr) {
    // Nothing to report from a destructor: a failed rollback leaves the transaction open and
    // SQLite rolls it back when the connection closes.
    (void)db_->exec("ROLLBACK", "rollback");
  }
}

Status Transaction::commit() {
  ACCO_RETURN_IF_ERROR(db_->exec("COMMIT", "commit"));
  db_ = nullptr;
  return {};
}

}  // namespace acco::bench::sqlite
