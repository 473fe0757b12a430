// One integer from an SQLite file, for the tests that check what acco stored there.
#pragma once

#include <cstdint>
#include <filesystem>

#include <sqlite3.h>

namespace acco::testing {

// The first column of the first row of `sql` on `path`, opened read-only; -1 when the query fails.
inline std::int64_t sqlite_scalar(const std::filesystem::path& path, const char* sql) {
  sqlite3* db = nullptr;
  std::int64_t out = -1;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW) {
      out = sqlite3_column_int64(s, 0);
    }
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
  return out;
}

}  // namespace acco::testing
