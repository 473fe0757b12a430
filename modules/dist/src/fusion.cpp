#include "acco/dist/fusion.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <set>

#include <fmt/format.h>

namespace acco::dist {

Result<AlphaBeta> fit_alpha_beta(const std::vector<SizePoint>& points) {
  std::set<std::uint64_t> sizes;
  double n = 0;
  double sx = 0;
  double sy = 0;
  double sxx = 0;
  double sxy = 0;
  for (const SizePoint& p : points) {
    sizes.insert(p.bytes);
    const auto x = static_cast<double>(p.bytes);
    n += 1;
    sx += x;
    sy += p.seconds;
    sxx += x * x;
    sxy += x * p.seconds;
  }
  if (sizes.size() < 2) {
    return fail(Errc::kInvalidArgument, "alpha-beta fit: fewer than two sizes");
  }
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);  // seconds per byte = 1/beta
  const double alpha = (sy - slope * sx) / n;
  if (!(slope > 0) || !(alpha > 0) || !std::isfinite(slope) || !std::isfinite(alpha)) {
    return fail(Errc::kInvalidArgument,
                fmt::format("alpha-beta fit: alpha {:.3g} s, 1/beta {:.3g} s/B: times do not "
                            "grow with size as a link's do",
                            alpha, slope));
  }
  return AlphaBeta{alpha, 1 / slope};
}

std::uint64_t fusion_threshold(const AlphaBeta& fit) {
  const double bytes = 10 * fit.alpha_seconds * fit.beta_bytes_per_second;
  if (!(bytes >= static_cast<double>(kMinFusionThreshold))) {
    return kMinFusionThreshold;
  }
  if (bytes >= static_cast<double>(kMaxFusionThreshold)) {
    return kMaxFusionThreshold;
  }
  return std::bit_ceil(static_cast<std::uint64_t>(std::ceil(bytes)));
}

Result<FusedAllReduce> FusedAllReduce::make(Communicator& comm, FusionOptions options) {
  if (options.threshold_bytes < sizeof(float)) {
    return fail(Errc::kInvalidArgument, fmt::format("fusion threshold {} bytes: expected 4 or more",
                                                    options.threshold_bytes));
  }
  return FusedAllReduce(comm, options);
}

Status FusedAllReduce::add(float* data, std::size_t count) {
  if (count > 0 && data == nullptr) {
    return fail(Errc::kInvalidArgument, "fused allreduce: null buffer");
  }
  ++stats_.queued;
  const std::uint64_t bytes = count * sizeof(float);
  if (bytes >= options_.threshold_bytes) {
    ACCO_RETURN_IF_ERROR(flush());
    ++stats_.collectives;
    // In place through a copy: Communicator::run takes distinct buffers.
    send_.assign(data, data + count);
    return comm_->run(Op::kAllReduce, send_.data(), data, count);
  }
  if ((pending_elements_ + count) * sizeof(float) > options_.threshold_bytes) {
    ACCO_RETURN_IF_ERROR(flush());
  }
  pending_.push_back({data, count});
  pending_elements_ += count;
  return {};
}

Status FusedAllReduce::flush() {
  if (pending_.empty()) {
    return {};
  }
  send_.resize(pending_elements_);
  recv_.resize(pending_elements_);
  std::size_t at = 0;
  for (const Entry& e : pending_) {
    std::copy_n(e.data, e.count, send_.begin() + static_cast<std::ptrdiff_t>(at));
    at += e.count;
  }
  ++stats_.collectives;
  stats_.fused_bytes += pending_elements_ * sizeof(float);
  auto ran = comm_->run(Op::kAllReduce, send_.data(), recv_.data(), pending_elements_);
  if (ran) {
    at = 0;
    for (const Entry& e : pending_) {
      std::copy_n(recv_.begin() + static_cast<std::ptrdiff_t>(at), e.count, e.data);
      at += e.count;
    }
  }
  pending_.clear();
  pending_elements_ = 0;
  return ran;
}

}  // namespace acco::dist
