// The peak of an emulated device (the host backend): every emulated DMA is a memcpy, so what the
// device can move is the lower of its emulated link and this host's own copy, measured the way
// the DMAs copy. A rate above that ceiling means the ceiling was measured low, and the result is
// re-based to what it moved: no efficiency above 100 %.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "acco/bench/result.hpp"
#include "acco/device/device.hpp"

namespace acco::bench::detail {

// What an emulated DMA does, as fast as this host does it now, bytes per second: a memcpy of
// `bytes` from pinned host memory into `device`'s memory (the buffers the copy cases use), split
// over 1 and over copy_engines threads (the DMAs that may run at once in one direction), each
// timed sample repeated up to 64 MiB so that a small size is long enough to time; the best
// sample of either. 0 when the buffers cannot be had or the device's memory is not the host's.
[[nodiscard]] double host_copy_rate(device::Device& device, std::uint64_t bytes);

// Pure: the peak of every row in `rows`, emulated results of one size (bytes) in one run, as
// the lower of `link_bytes_per_second` (0 = unlimited) and `copy_bytes_per_second` (the best
// host_copy_rate measured at that size in the run; 0 = not measured), with peak_source saying both
// and `threads`, then each row's efficiency and verdict ("emulated"). When a row's median is above
// that ceiling, or there is none, every row is re-based to the fastest median, and peak_source
// (starting with "re-based") names the case that moved it.
void set_emulated_peaks(std::span<BenchResult* const> rows, double link_bytes_per_second,
                        double copy_bytes_per_second, int threads);

// Collects a run's emulated results and this host's copy rate after each case, and sets their
// peaks at the end: one ceiling per size for the whole run, so rows of one size are judged alike.
class EmulatedPeaks {
 public:
  // After a case on `device`: measures host_copy_rate at each size of its measured "emulated"
  // results (first_result .. the run's end) and remembers them.
  void after_case(device::Device& device, const std::vector<BenchResult>& run_results,
                  std::size_t first_result);
  // set_emulated_peaks per size over the remembered rows of `run_results`.
  void finish(std::vector<BenchResult>& run_results) const;

 private:
  std::vector<std::size_t> rows_;
  std::map<std::uint64_t, double> copy_rates_;  // the best per size
  double link_bytes_per_second_ = 0;
  int threads_ = 1;
};

}  // namespace acco::bench::detail
