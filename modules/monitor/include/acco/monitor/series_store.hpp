// The daemon's time-series store: every device field (fields.hpp) per device per round, and the
// host's (host_rates.hpp: CPU busy ratio, memory used, network and disk rates), in an embedded
// SQLite file of its own. Rounds are
// written in batches by a sampler observer; raw points are kept for an hour and one-minute
// averages for a week, both trimmed in the batch's own transaction. docs/monitoring.md has the
// schema and what survives a crash.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "acco/analyze/snapshot.hpp"
#include "acco/core/result.hpp"

namespace acco::monitor {

struct SeriesStoreOptions {
  std::chrono::seconds raw_retention{3600};              // raw points (one per round)
  std::chrono::seconds minute_retention{7 * 24 * 3600};  // one-minute averages
  std::size_t batch_rounds = 5;                          // rounds per write transaction
  std::chrono::milliseconds busy_timeout{1000};          // wait for another writer's lock
  // Called on the writing thread the first time each kind of write failure occurs (one call
  // for SQLITE_FULL, one for SQLITE_BUSY, ...); every failure is counted in StoreStats.
  std::function<void(const Error&)> on_write_error;
};

struct StoreStats {
  std::uint64_t points_total = 0;        // points committed, raw ones only
  std::uint64_t batches_total = 0;       // batches committed
  std::uint64_t write_errors_total = 0;  // batches that failed and were dropped
  bool operator==(const StoreStats&) const = default;
};

struct SeriesPoint {
  std::int64_t time_unix_nanos = 0;
  double value = 0;
  bool operator==(const SeriesPoint&) const = default;
};

struct Series {
  std::string device;  // "0", "host"
  std::string uuid;
  std::string unit;
  std::int64_t resolution_seconds = 0;  // 0: raw (one point per round), 60: minute averages
  std::vector<SeriesPoint> points;      // oldest first
  bool operator==(const Series&) const = default;
};

// Host series stored beside the device fields, under device "host" (all of them: host_fields()).
inline constexpr const char* kHostCpuBusyRatio = "host_cpu_busy_ratio";
inline constexpr const char* kHostMemoryUsedBytes = "host_memory_used_bytes";

class SeriesStore {
 public:
  // Opens or creates the store at `path`; reopening appends. kCannotWrite naming the file when
  // it cannot be created or written ("cannot open the series store /x/y.db: ..."),
  // kInvalidArgument naming it when the file is not an acco series store.
  [[nodiscard]] static Result<std::unique_ptr<SeriesStore>> open(const std::string& path,
                                                                 SeriesStoreOptions options = {});
  ~SeriesStore();  // flushes the pending batch
  SeriesStore(const SeriesStore&) = delete;
  SeriesStore& operator=(const SeriesStore&) = delete;

  // Queues one round; every batch_rounds rounds the queue is written in one transaction with
  // the downsampling and retention it needs. Never throws, never fails: a write error is
  // counted, reported through on_write_error, and its batch dropped. One writer thread.
  void add(const analyze::Snapshot& snapshot);
  // Writes the pending rounds now (at shutdown). Same error handling as add().
  void flush();

  // Points of series `name` with time in [since, until], per device (all devices when
  // `device` is nullopt), oldest first. Raw points when the window, from `since` or the oldest
  // point stored if later, starts within the raw retention of the newest raw point, else minute
  // averages; points are averaged further into at most
  // `max_points` per series. Thread-safe with add(); sees committed batches only.
  // kUnavailable when the file cannot be read.
  [[nodiscard]] Result<std::vector<Series>> query(const std::string& name,
                                                  const std::optional<std::string>& device,
                                                  std::int64_t since_unix_nanos,
                                                  std::int64_t until_unix_nanos,
                                                  std::size_t max_points = 1000) const;

  [[nodiscard]] StoreStats stats() const;
  [[nodiscard]] const std::string& path() const;

 private:
  struct Impl;
  explicit SeriesStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// acco_store_points_total and acco_store_write_errors_total in Prometheus text.
[[nodiscard]] std::string render_store_metrics(const StoreStats& stats);

// --retention: "raw=1h,minute=7d", either part alone, durations as parse_duration reads them.
// kInvalidArgument naming the part otherwise.
[[nodiscard]] Result<SeriesStoreOptions> parse_retention(const std::string& text,
                                                         SeriesStoreOptions base = {});

}  // namespace acco::monitor
