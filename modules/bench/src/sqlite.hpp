// RAII over the SQLite C API, just what the history needs: a connection, prepared statements
// with typed binds and columns, and a transaction that rolls back unless committed. Every error
// becomes an acco::Error whose message names the database file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "acco/core/result.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace acco::bench::sqlite {

// One connection. Move-only; not thread-safe (one thread at a time).
class Database {
 public:
  // Opens or creates `path` for reading and writing. kUnavailable when it cannot be opened.
  [[nodiscard]] static Result<Database> open(const std::string& path);
  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  // Runs one or more statements that return no rows; `what` names the step in errors.
  [[nodiscard]] Status exec(const char* sql, std::string_view what);
  // The connection's last error as an Error: "PATH: what: SQLite's message".
  [[nodiscard]] Error error(std::string_view what) const;
  // The rowid of the last row this connection inserted.
  [[nodiscard]] std::int64_t last_insert_rowid() const;
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] sqlite3* handle() const { return db_; }

 private:
  Database(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_ = nullptr;
  std::string path_;
};

// A prepared statement; binds and columns count from 1 and 0 respectively, as in SQLite.
class Statement {
 public:
  [[nodiscard]] static Result<Statement> prepare(Database& db, std::string_view sql);
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  [[nodiscard]] Status bind(int index, std::string_view text);
  [[nodiscard]] Status bind(int index, std::int64_t value);
  [[nodiscard]] Status bind(int index, double value);
  [[nodiscard]] Status bind(int index, std::optional<double> value);  // nullopt binds NULL
  // true when a row is ready to read, false when the statement is done.
  [[nodiscard]] Result<bool> step();
  // Clears the last run so the statement can run again with new binds.
  void reset();

  [[nodiscard]] std::string text(int column) const;
  [[nodiscard]] std::int64_t integer(int column) const;
  [[nodiscard]] double real(int column) const;
  [[nodiscard]] bool is_null(int column) const;
  // An INTEGER or a REAL (SQLite reads text such as 'zz' as 0 through real()).
  [[nodiscard]] bool is_number(int column) const;

 private:
  Statement(sqlite3_stmt* stmt, Database* db) : stmt_(stmt), db_(db) {}
  [[nodiscard]] Status check_bind(int rc, int index);
  sqlite3_stmt* stmt_ = nullptr;
  Database* db_ = nullptr;
};

// BEGIN IMMEDIATE on construction (takes the write lock up front, so two writers wait for each
// other instead of failing halfway); ROLLBACK on destruction unless commit() succeeded.
class Transaction {
 public:
  [[nodiscard]] static Result<Transaction> begin(Database& db);
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  [[nodiscard]] Status commit();

 private:
  explicit Transaction(Database* db) : db_(db) {}
  Database* db_ = nullptr;
};

}  // namespace acco::bench::sqlite
