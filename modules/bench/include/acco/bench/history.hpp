// The bench history: every run saved in an embedded SQLite file, keyed by machine fingerprint and
// time, so `acco bench --compare` can set a run against the last one on the same machine. The
// file is versioned (PRAGMA user_version) and marked as acco's (PRAGMA application_id); a file
// that is corrupt, someone else's or from a newer acco is reported and never overwritten.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "acco/bench/compare.hpp"
#include "acco/bench/result.hpp"
#include "acco/core/result.hpp"

namespace acco::bench {

// The layout this acco reads and writes.
inline constexpr int kHistorySchemaVersion = 1;
// PRAGMA application_id of a history file: "acco" in ASCII.
inline constexpr int kHistoryApplicationId = 0x6163636f;

// $XDG_STATE_HOME/acco/history.sqlite when XDG_STATE_HOME is an absolute path (the XDG base
// directory rules ignore a relative one), else $HOME/.local/state/acco/history.sqlite. Creates
// the missing directories. kUnavailable when neither variable gives a place or a directory
// cannot be created.
[[nodiscard]] Result<std::string> default_history_path();
// The same from given values (empty = unset), for tests and callers with their own environment.
[[nodiscard]] Result<std::string> default_history_path(std::string_view xdg_state_home,
                                                       std::string_view home);

// One open history file. Move-only. Not thread-safe: use one History per thread; several
// processes may use the same file (SQLite locks it; a writer waits up to 5 s for another).
// Every error message starts with the file's path.
class History {
 public:
  // Opens `path`, creating the file and its tables when absent (the directory must exist).
  // Errors:
  // - kNotFound: the directory does not exist.
  // - kUnavailable: the file cannot be opened or created (permissions, a full disk, locked).
  // - kInvalidArgument: `path` is a directory; the file is not an SQLite database or is corrupt;
  //   it is another program's database; it was written by a newer acco (a higher schema
  //   version). The file is left exactly as it was.
  [[nodiscard]] static Result<History> open(const std::string& path);

  History(History&& other) noexcept;
  History& operator=(History&& other) noexcept;
  History(const History&) = delete;
  History& operator=(const History&) = delete;
  ~History();

  // Appends `run` in one transaction. kInvalidArgument when the run does not validate (the
  // rules of run_from_json) or has no fingerprint; kUnavailable when the file cannot be written
  // (read-only, full disk, locked past the timeout).
  [[nodiscard]] Status save(const BenchRun& run);

  // The latest saved run with this fingerprint (by `created`, then by save order) that has a
  // result of one of `cases` (any run when empty): a copy-suite run is compared with the last
  // copy-suite run, not with a collective run saved since. nullopt when there is none. Call it
  // before saving the current run to get the one to compare with. kInvalidArgument when the
  // stored data is corrupt.
  [[nodiscard]] Result<std::optional<BenchRun>> last_run(std::string_view fingerprint,
                                                         std::span<const std::string> cases = {});
  // The run to compare `current` with: the latest of its machine with one of its cases.
  [[nodiscard]] Result<std::optional<BenchRun>> last_run_like(const BenchRun& current);

  // Each comparison's metric in the last `runs` runs of `fingerprint` that measured its case
  // and device with status ok (oldest first), into its `trend`. kInvalidArgument when a stored
  // value is not a number.
  [[nodiscard]] Status add_trends(std::string_view fingerprint,
                                  std::vector<Comparison>& comparisons, std::size_t runs);

  [[nodiscard]] const std::string& path() const;

 private:
  struct Impl;
  explicit History(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// How many runs a comparison's trend covers (this one included).
inline constexpr std::size_t kTrendRuns = 20;

// What recording a run found.
struct Recorded {
  std::vector<Comparison> comparisons;  // with `compare` and a previous run
  bool had_previous = false;            // a run of these cases was there to compare with
  std::string warnings;                 // lines for stderr: the history could not be read/written
};

// Appends `run` to the history at `path` (default_history_path() when empty), compared first
// with History::last_run_like when `compare` (only then is the last run read); each comparison
// then gets its trend over the machine's last kTrendRuns runs, this one included. A history that
// cannot be opened is a warning, and with `compare` the error itself (with context "history").
[[nodiscard]] Result<Recorded> record_run(const std::string& path, const BenchRun& run,
                                          bool compare);

}  // namespace acco::bench
