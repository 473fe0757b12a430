// What a demand copy into one device is expected to take: its link's latency and rate, and what
// copies into it were measured to take beyond them. Placement asks it for every device and task;
// the device's thread teaches it after each demand copy. Pure: no lock of its own, no allocation.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace acco::sched::detail {

// Assumed per-direction link rate when the device does not know its link's: a PCIe 4.0 x16
// link's usual achieved rate (../shared/reference/transfer.md).
constexpr double kDefaultLinkBytesPerSecond = 24e9;

class CopyCostModel {
 public:
  // Samples the learned extra is the median of.
  static constexpr std::size_t kSamples = 15;

  CopyCostModel() = default;
  // `link_bytes_per_second` 0 when the device does not know it (kDefaultLinkBytesPerSecond).
  CopyCostModel(double link_bytes_per_second, double latency_s)
      : link_bytes_per_second_(link_bytes_per_second),
        latency_s_(latency_s),
        fixed_s_(latency_s),
        seconds_per_byte_(1 / link_rate()) {}

  // Modelled bytes per second, per direction.
  double link_rate() const {
    return link_bytes_per_second_ > 0 ? link_bytes_per_second_ : kDefaultLinkBytesPerSecond;
  }
  double latency_s() const { return latency_s_; }
  // Expected seconds of one demand copy of `bytes`: fixed_s() plus 1 / link_rate() per byte
  // (kept as a product, so that placement, which asks for every device and task, needs no
  // division).
  double seconds(std::size_t bytes) const {
    return fixed_s_ + static_cast<double>(bytes) * seconds_per_byte_;
  }
  // The latency plus what copies were measured to take beyond the link's figures (issuing them,
  // the copy thread's wake-up, a slower link than modelled): the median of the last kSamples,
  // so that one copy that waited behind others or for a CPU does not set it.
  double fixed_s() const { return fixed_s_; }

  // `copies` demand copies of `bytes` in all, issued together, took `took`.
  void note(std::size_t copies, std::uint64_t bytes, std::chrono::nanoseconds took);

 private:
  double link_bytes_per_second_ = 0;
  double latency_s_ = 0;
  double fixed_s_ = 0;
  double seconds_per_byte_ = 1 / kDefaultLinkBytesPerSecond;
  std::array<double, kSamples> samples_{};
  std::size_t noted_ = 0;
};

}  // namespace acco::sched::detail
