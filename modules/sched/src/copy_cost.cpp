#include "copy_cost.hpp"

#include <algorithm>
#include <span>

#include "acco/core/stats.hpp"

namespace acco::sched::detail {

void CopyCostModel::note(std::size_t copies, std::uint64_t bytes, std::chrono::nanoseconds took) {
  if (copies == 0) {
    return;
  }
  const double n = static_cast<double>(copies);
  const double modelled = n * latency_s_ + static_cast<double>(bytes) * seconds_per_byte_;
  const double sample = std::max(0.0, std::chrono::duration<double>(took).count() - modelled) / n;
  // The median of the last samples, once there are three (before, the link's figures alone): a
  // copy that waited behind others or for a CPU is one sample among several, and no single slow
  // one (the first ones pay for the engine's warm-up) can keep the device from the tasks whose
  // copies would correct it.
  samples_[noted_ % samples_.size()] = sample;
  ++noted_;
  if (noted_ >= 3) {
    std::array<double, kSamples> values = samples_;
    fixed_s_ = latency_s_ + core::stats::median_in_place(
                                std::span(values).first(std::min(noted_, samples_.size())));
  }
}

}  // namespace acco::sched::detail
