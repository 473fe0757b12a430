// The collective operations acco measures and nccl-tests' arithmetic on them, pure: the bytes an
// operation is defined on, algorithm and bus bandwidth (../shared/reference/multinode.md b), the
// size sweep, and the figures acco prints beside nccl-tests' table: the plateau bus bandwidth
// (median of the largest sizes, not the average over every size that nccl-tests prints), the
// half-bandwidth size n1/2, the small-message latency, and the efficiency against the expected
// peak with a verdict.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "acco/core/result.hpp"

namespace acco::cluster {

enum class Op {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kSendRecv
};
inline constexpr std::array kOps = {Op::kAllReduce, Op::kAllGather, Op::kReduceScatter,
                                    Op::kAllToAll,  Op::kBroadcast, Op::kSendRecv};
[[nodiscard]] const char* to_string(Op op);  // "allreduce", ...
// A comma-separated list ("allreduce,sendrecv") or "all"; kInvalidArgument naming the word.
[[nodiscard]] Result<std::vector<Op>> parse_ops(const std::string& text);

// nccl-tests' size: per-rank element count x element size for allreduce, broadcast and sendrecv;
// that times the ranks (the whole array) for allgather, reducescatter and alltoall. `bytes` is
// what each rank sends (allreduce, broadcast, sendrecv) or its share (the others).
[[nodiscard]] std::uint64_t algorithm_bytes(Op op, std::uint64_t bytes, int ranks);
// busbw / algbw: 2(n-1)/n for allreduce, (n-1)/n for allgather, reducescatter and alltoall, 1 for
// broadcast and sendrecv. 0 for a collective over one rank (nothing crosses a link).
[[nodiscard]] double bus_factor(Op op, int ranks);

// Sizes from `min` to `max` bytes, each `factor` times the last (nccl-tests -b -e -f), every one
// a multiple of `granule` (the element size times the ranks where the op splits the buffer).
// kInvalidArgument for min > max, factor < 2 or a zero granule.
[[nodiscard]] Result<std::vector<std::uint64_t>> size_sweep(std::uint64_t min, std::uint64_t max,
                                                            int factor, std::uint64_t granule);

// One size of one op: the seconds per operation on each rank, combined as nccl-tests does by
// default (-a 1: the mean over ranks), with the slowest and fastest rank beside it.
struct SizePoint {
  std::uint64_t bytes = 0;  // nccl-tests' "size": algorithm_bytes of the per-rank buffer
  std::uint64_t count = 0;  // elements per rank (per block for allgather, reducescatter, alltoall)
  double seconds = 0;       // mean over ranks of the per-op time
  double min_seconds = 0;
  double max_seconds = 0;
  double algbw = 0;  // bytes per second (decimal GB/s in the table)
  double busbw = 0;
  std::uint64_t wrong = 0;  // elements that did not hold the expected value, over all ranks
  bool operator==(const SizePoint&) const = default;
};
// algbw = bytes / seconds, busbw = algbw x bus_factor.
[[nodiscard]] SizePoint make_point(Op op, int ranks, std::uint64_t bytes, std::uint64_t count,
                                   const std::vector<double>& seconds_per_rank,
                                   std::uint64_t wrong);

enum class Verdict {
  kOk,
  kLow,
  kVeryLow,
  kNoPeak,
  kSingleRank
};
[[nodiscard]] const char* to_string(Verdict verdict);

struct OpSummary {
  double plateau_busbw = 0;             // median busbw of the largest sizes
  int plateau_sizes = 0;                // how many sizes that median took
  std::optional<std::uint64_t> n_half;  // smallest size reaching half the plateau
  double small_latency_seconds = 0;     // the time of the smallest size
  double expected_busbw = 0;            // the slowest link on the path; 0 unknown
  std::string expected_source;          // which link that is
  double efficiency = 0;                // plateau / expected; 0 without a peak
  Verdict verdict = Verdict::kNoPeak;
  bool operator==(const OpSummary&) const = default;
};
// `points` in increasing size. The plateau takes the largest quarter of the sizes (at least one,
// at most four); efficiency at least 70 % is ok, 40 % low, below very low (the thresholds of
// acco bench's copy verdicts). One rank: kSingleRank, algbw only.
[[nodiscard]] OpSummary summarize(const std::vector<SizePoint>& points, int ranks,
                                  double expected_busbw, const std::string& expected_source);

}  // namespace acco::cluster
