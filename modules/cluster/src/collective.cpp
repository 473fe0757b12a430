#include "acco/cluster/collective.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "acco/core/names.hpp"
#include "acco/core/stats.hpp"

namespace acco::cluster {
namespace {

// Thresholds of the efficiency verdict (plateau busbw / expected peak). NCCL reaches 92-96 % of a
// NIC's rate on a healthy rail and about 64 % with the NIC on the CPU instead of the GPU's PCIe
// switch (multinode.md c: nccl-tests#290, nccl#412).
constexpr double kOk = 0.70;
constexpr double kLow = 0.40;

}  // namespace

const char* to_string(Op op) {
  switch (op) {
    case Op::kAllReduce:
      return "allreduce";
    case Op::kAllGather:
      return "allgather";
    case Op::kReduceScatter:
      return "reducescatter";
    case Op::kAllToAll:
      return "alltoall";
    case Op::kBroadcast:
      return "broadcast";
    case Op::kSendRecv:
      return "sendrecv";
  }
  return "allreduce";
}

Result<std::vector<Op>> parse_ops(const std::string& text) {
  if (text == "all") {
    return std::vector<Op>(kOps.begin(), kOps.end());
  }
  std::vector<Op> ops;
  std::stringstream in(text);
  std::string word;
  while (std::getline(in, word, ',')) {
    const auto op = core::find_named(word, kOps);
    if (!op) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("collective '{}': expected {}, or all", word, core::name_list(kOps)));
    }
    if (std::find(ops.begin(), ops.end(), *op) == ops.end()) {
      ops.push_back(*op);
    }
  }
  if (ops.empty()) {
    return fail(Errc::kInvalidArgument, "collectives: expected a list such as allreduce,sendrecv");
  }
  return ops;
}

std::uint64_t algorithm_bytes(Op op, std::uint64_t bytes, int ranks) {
  switch (op) {
    case Op::kAllGather:
    case Op::kReduceScatter:
    case Op::kAllToAll:
      return bytes * static_cast<std::uint64_t>(std::max(ranks, 1));
    case Op::kAllReduce:
    case Op::kBroadcast:
    case Op::kSendRecv:
      return bytes;
  }
  return bytes;
}

double bus_factor(Op op, int ranks) {
  if (ranks <= 1) {
    return 0;
  }
  const double n = ranks;
  switch (op) {
    case Op::kAllReduce:
      return 2 * (n - 1) / n;
    case Op::kAllGather:
    case Op::kReduceScatter:
    case Op::kAllToAll:
      return (n - 1) / n;
    case Op::kBroadcast:
    case Op::kSendRecv:
      return 1;
  }
  return 1;
}

Result<std::vector<std::uint64_t>> size_sweep(std::uint64_t min, std::uint64_t max, int factor,
                                              std::uint64_t granule) {
  if (granule == 0 || factor < 2 || min > max) {
    return fail(Errc::kInvalidArgument,
                fmt::format("size sweep {}..{} x{} (granule {}): expected min <= max, factor >= 2",
                            min, max, factor, granule));
  }
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t s = std::max(min, std::uint64_t{1}); s <= max;) {
    const std::uint64_t rounded = std::max(granule, s / granule * granule);
    if (rounded <= max && (sizes.empty() || rounded > sizes.back())) {
      sizes.push_back(rounded);
    }
    if (s > max / static_cast<std::uint64_t>(factor)) {
      break;
    }
    s *= static_cast<std::uint64_t>(factor);
  }
  if (sizes.empty()) {
    return fail(
        Errc::kInvalidArgument,
        fmt::format("size sweep {}..{}: no size is a multiple of {} bytes", min, max, granule));
  }
  return sizes;
}

SizePoint make_point(Op op, int ranks, std::uint64_t bytes, std::uint64_t count,
                     const std::vector<double>& seconds_per_rank, std::uint64_t wrong) {
  SizePoint p;
  p.bytes = bytes;
  p.count = count;
  p.wrong = wrong;
  if (seconds_per_rank.empty()) {
    return p;
  }
  double sum = 0;
  for (const double s : seconds_per_rank) {
    sum += s;
  }
  p.seconds = sum / static_cast<double>(seconds_per_rank.size());
  const auto [lo, hi] = std::minmax_element(seconds_per_rank.begin(), seconds_per_rank.end());
  p.min_seconds = *lo;
  p.max_seconds = *hi;
  if (p.seconds > 0) {
    p.algbw = static_cast<double>(bytes) / p.seconds;
    p.busbw = p.algbw * bus_factor(op, ranks);
  }
  return p;
}

const char* to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::kOk:
      return "ok";
    case Verdict::kLow:
      return "low";
    case Verdict::kVeryLow:
      return "very low";
    case Verdict::kNoPeak:
      return "no peak";
    case Verdict::kSingleRank:
      return "single rank";
  }
  return "no peak";
}

OpSummary summarize(const std::vector<SizePoint>& points, int ranks, double expected_busbw,
                    const std::string& expected_source) {
  OpSummary s;
  s.expected_busbw = expected_busbw;
  s.expected_source = expected_source;
  if (points.empty()) {
    return s;
  }
  s.small_latency_seconds = points.front().seconds;
  const bool single = ranks <= 1;
  const auto bw = [single](const SizePoint& p) { return single ? p.algbw : p.busbw; };
  const std::size_t take = std::clamp<std::size_t>(points.size() / 4, 1, 4);
  std::vector<double> top;
  for (std::size_t i = points.size() - take; i < points.size(); ++i) {
    top.push_back(bw(points[i]));
  }
  s.plateau_sizes = static_cast<int>(take);
  s.plateau_busbw = core::stats::median_in_place(top);
  for (const SizePoint& p : points) {
    if (s.plateau_busbw > 0 && bw(p) >= s.plateau_busbw / 2) {
      s.n_half = p.bytes;
      break;
    }
  }
  if (single) {
    s.verdict = Verdict::kSingleRank;
  } else if (expected_busbw > 0) {
    s.efficiency = s.plateau_busbw / expected_busbw;
    s.verdict = s.efficiency >= kOk    ? Verdict::kOk
                : s.efficiency >= kLow ? Verdict::kLow
                                       : Verdict::kVeryLow;
  }
  return s;
}

}  // namespace acco::cluster
