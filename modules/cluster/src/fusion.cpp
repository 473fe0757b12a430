#include "acco/cluster/fusion.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

namespace acco::cluster {

Result<LatencyBandwidth> fit_points(const std::vector<SizePoint>& points) {
  std::vector<TimedSize> timed;
  timed.reserve(points.size());
  for (const SizePoint& p : points) {
    timed.push_back({p.bytes, p.seconds});
  }
  return fit_latency_bandwidth(timed, FitWeight::kRelative);
}

std::uint64_t fusion_threshold(const LatencyBandwidth& fit) {
  const double bytes = 10 * fit.alpha_seconds * fit.beta_bytes_per_second;
  if (!(bytes >= static_cast<double>(kMinFusionThreshold))) {
    return kMinFusionThreshold;
  }
  if (bytes >= static_cast<double>(kMaxFusionThreshold)) {
    return kMaxFusionThreshold;
  }
  return std::bit_ceil(static_cast<std::uint64_t>(std::ceil(bytes)));
}

namespace {

Status check_threshold(const FusionOptions& options) {
  if (options.threshold_bytes < sizeof(float)) {
    return fail(Errc::kInvalidArgument, fmt::format("fusion threshold {} bytes: expected 4 or more",
                                                    options.threshold_bytes));
  }
  return {};
}

// The packing rule FusedAllReduce and FusionBuckets share: an allreduce of the threshold or more
// goes alone; a smaller one joins the open group unless the group would pass the threshold.
bool goes_alone(std::uint64_t bytes, const FusionOptions& options) {
  return bytes >= options.threshold_bytes;
}
bool joins(std::uint64_t group_bytes, std::uint64_t bytes, const FusionOptions& options) {
  return group_bytes + bytes <= options.threshold_bytes;
}

}  // namespace

Result<FusedAllReduce> FusedAllReduce::make(Communicator& comm, FusionOptions options) {
  ACCO_RETURN_IF_ERROR(check_threshold(options));
  return FusedAllReduce(comm, options);
}

Status FusedAllReduce::add(float* data, std::size_t count) {
  if (count > 0 && data == nullptr) {
    return fail(Errc::kInvalidArgument, "fused allreduce: null buffer");
  }
  ++stats_.queued;
  const std::uint64_t bytes = count * sizeof(float);
  if (goes_alone(bytes, options_)) {
    ACCO_RETURN_IF_ERROR(flush());
    ++stats_.collectives;
    return comm_->run(Op::kAllReduce, data, data, count);  // in place
  }
  if (!joins(pending_elements_ * sizeof(float), bytes, options_)) {
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
  buffer_.resize(pending_elements_);
  std::size_t at = 0;
  for (const Entry& e : pending_) {
    std::copy_n(e.data, e.count, buffer_.begin() + static_cast<std::ptrdiff_t>(at));
    at += e.count;
  }
  ++stats_.collectives;
  stats_.fused_bytes += pending_elements_ * sizeof(float);
  // In place in the fusion buffer, as Horovod reduces it.
  auto ran = comm_->run(Op::kAllReduce, buffer_.data(), buffer_.data(), pending_elements_);
  if (ran) {
    at = 0;
    for (const Entry& e : pending_) {
      std::copy_n(buffer_.begin() + static_cast<std::ptrdiff_t>(at), e.count, e.data);
      at += e.count;
    }
  }
  pending_.clear();
  pending_elements_ = 0;
  return ran;
}

Result<FusionBuckets> FusionBuckets::make(Communicator& comm, std::span<const std::size_t> counts,
                                          FusionOptions options) {
  ACCO_RETURN_IF_ERROR(check_threshold(options));
  FusionBuckets b(comm);
  bool open = false;  // the last bucket takes more
  for (const std::size_t count : counts) {
    if (count == 0) {
      b.views_.push_back({});
      continue;
    }
    const std::uint64_t bytes = count * sizeof(float);
    const bool alone = goes_alone(bytes, options);
    if (!open || alone || !joins(b.buckets_.back().size() * sizeof(float), bytes, options)) {
      b.buckets_.emplace_back();
    }
    std::vector<float>& bucket = b.buckets_.back();
    b.views_.push_back({b.buckets_.size() - 1, bucket.size(), count});
    bucket.resize(bucket.size() + count);
    open = !alone;
  }
  return b;
}

std::span<float> FusionBuckets::tensor(std::size_t i) {
  if (i >= views_.size() || views_[i].count == 0) {
    return {};
  }
  const View& v = views_[i];
  return std::span<float>(buckets_[v.bucket]).subspan(v.offset, v.count);
}

Status FusionBuckets::allreduce() {
  for (std::vector<float>& bucket : buckets_) {
    ++stats_.collectives;
    stats_.fused_bytes += bucket.size() * sizeof(float);
    ACCO_RETURN_IF_ERROR(comm_->run(Op::kAllReduce, bucket.data(), bucket.data(), bucket.size()));
  }
  stats_.queued += views_.size();
  return {};
}

}  // namespace acco::cluster
