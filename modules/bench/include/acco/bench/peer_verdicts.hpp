// acco against its peers in one run of the storage suite: each storage_read point beside its fio
// twin (judged against issue 17's target of 95 % of fio), and the staged file -> device path
// beside the naive one (read into pageable memory, then copy; judged against 1.5x), with the
// peak the storage verdicts were made against. Pure values from a BenchRun, and their text as
// report blocks.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "acco/bench/compare.hpp"
#include "acco/bench/result.hpp"
#include "acco/report/document.hpp"

namespace acco::bench {

// acco's read at or above this fraction of fio's is "ok" (issue 17).
inline constexpr double kFioOkRatio = 0.95;
// The staged file -> device path at or above this multiple of the naive one is "ok".
inline constexpr double kNaiveOkRatio = 1.5;

// What the storage_read verdicts are against: the first measured storage_read point's peak.
struct StoragePeak {
  double bytes_per_second = 0;  // 0: no peak, the verdicts are only against fio
  std::string source;           // where the peak comes from, or why there is none
  double ok_at_least = 0;       // the storage_read band's "ok" efficiency
};

// A measured storage_read point beside its measured fio_read twin.
struct FioVerdict {
  std::string case_key;  // "storage_read_1MiB_qd32"
  double bytes_per_second = 0;
  double fio_bytes_per_second = 0;
  PeerRatio ratio;      // ours / fio with its noise band
  std::string verdict;  // "same within noise", "ok" or "below fio"
};

// storage_h2d beside storage_h2d_naive, both measured.
struct NaiveVerdict {
  double bytes_per_second = 0;
  double naive_bytes_per_second = 0;
  double ratio = 0;
  std::string verdict;  // "ok" or "below 1.5x"
};

struct PeerVerdicts {
  std::optional<StoragePeak> peak;  // none without a measured storage_read point
  std::vector<FioVerdict> fio;      // in the run's order
  std::optional<NaiveVerdict> naive;
  [[nodiscard]] bool empty() const { return !peak && fio.empty() && !naive; }
};

// The verdicts of `run` (only results with status "ok" and, for a peer, a rate above 0 count).
[[nodiscard]] PeerVerdicts peer_verdicts(const BenchRun& run);

// A heading, then the peak line and one line per verdict, appended to `document`; nothing when
// there is none. After another block the heading is set apart by a blank line.
void add_peer_verdicts(report::Document& document, const PeerVerdicts& verdicts);

}  // namespace acco::bench
