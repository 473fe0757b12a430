// Fusion of small allreduces (Horovod's tensor fusion): allreduces queued one by one are packed
// into one buffer and reduced by one collective, in place, when the queue would pass the
// threshold or on flush; then each result is copied back to its own buffer. Every rank must
// queue the same allreduces in the same order (as Horovod requires), and a buffer holds its sum
// only after the flush that covers it.
//
// Horovod's cycle time (a background timer, 1 ms) is the caller's flush() here: a timer read on
// each rank fires at a different entry on each, and the ranks would then reduce buffers of
// different lengths against each other. Horovod avoids that with a negotiation round per cycle;
// acco's flush points are the program's (one per step), the same on every rank.
//
// The threshold comes from the link's alpha-beta fit (t(S) = alpha + S / beta, fit_points):
// the smallest size that runs within ~10 % of the link's bandwidth, S = 10 alpha beta
// (../shared/reference/multinode.md E3), rounded up to a power of two.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "acco/cluster/collective.hpp"
#include "acco/cluster/communicator.hpp"
#include "acco/core/fit.hpp"
#include "acco/core/result.hpp"

namespace acco::cluster {

// The alpha-beta fit of one op's sweep (core/fit.hpp, weighted by relative error: the sweep
// spans 8 B to MiBs).
[[nodiscard]] Result<LatencyBandwidth> fit_points(const std::vector<SizePoint>& points);

inline constexpr std::uint64_t kMinFusionThreshold = std::uint64_t{64} << 10;
inline constexpr std::uint64_t kMaxFusionThreshold = std::uint64_t{128} << 20;  // Horovod's
// 10 alpha beta rounded up to a power of two, within [64 KiB, 128 MiB].
[[nodiscard]] std::uint64_t fusion_threshold(const LatencyBandwidth& fit);

struct FusionOptions {
  std::uint64_t threshold_bytes = std::uint64_t{64} << 20;
};

struct FusionStats {
  std::uint64_t queued = 0;       // allreduces handed to add()
  std::uint64_t collectives = 0;  // collectives run for them
  std::uint64_t fused_bytes = 0;  // bytes that went through the fusion buffer
};

class FusedAllReduce {
 public:
  // kInvalidArgument for a threshold below 4 bytes.
  [[nodiscard]] static Result<FusedAllReduce> make(Communicator& comm, FusionOptions options);

  // Queues the sum over ranks of `count` floats at `data`, in place. An allreduce of the
  // threshold or more runs at once (after what is queued). kInvalidArgument for a null buffer.
  [[nodiscard]] Status add(float* data, std::size_t count);
  // Runs what is queued; every queued buffer holds its sum when it returns.
  [[nodiscard]] Status flush();

  [[nodiscard]] const FusionStats& stats() const { return stats_; }
  [[nodiscard]] std::size_t pending() const { return pending_.size(); }

 private:
  FusedAllReduce(Communicator& comm, FusionOptions options) : comm_(&comm), options_(options) {}

  struct Entry {
    float* data = nullptr;
    std::size_t count = 0;
  };

  Communicator* comm_;
  FusionOptions options_;
  std::vector<Entry> pending_;
  std::size_t pending_elements_ = 0;
  std::vector<float> buffer_;  // the fusion buffer, reduced in place
  FusionStats stats_;
};

// Allreduces whose tensors live in the fusion buffers (PyTorch DDP's bucket views,
// gradient_as_bucket_view): each tensor is a view into one of a few buckets of up to the
// threshold, made once, so a step reduces every bucket in place with no copy in or out. The
// tensors are packed into buckets as FusedAllReduce packs them. Every rank makes the same buckets
// (the same counts in the same order).
class FusionBuckets {
 public:
  // kInvalidArgument for a threshold below 4 bytes.
  [[nodiscard]] static Result<FusionBuckets> make(Communicator& comm,
                                                  std::span<const std::size_t> counts,
                                                  FusionOptions options);

  [[nodiscard]] std::size_t size() const { return views_.size(); }  // tensors
  [[nodiscard]] std::size_t buckets() const { return buckets_.size(); }
  // Tensor `i` (empty for i >= size()); valid as long as the buckets are.
  [[nodiscard]] std::span<float> tensor(std::size_t i);
  // The sum over ranks of every tensor, in place: one collective per bucket.
  [[nodiscard]] Status allreduce();

  [[nodiscard]] const FusionStats& stats() const { return stats_; }

 private:
  explicit FusionBuckets(Communicator& comm) : comm_(&comm) {}

  struct View {
    std::size_t bucket = 0;
    std::size_t offset = 0;  // elements
    std::size_t count = 0;
  };

  Communicator* comm_;
  std::vector<std::vector<float>> buckets_;
  std::vector<View> views_;
  FusionStats stats_;
};

}  // namespace acco::cluster
