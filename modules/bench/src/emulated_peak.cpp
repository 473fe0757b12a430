#include "emulated_peak.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "acco/bench/expectations.hpp"
#include "acco/core/units.hpp"

#include "format.hpp"

namespace acco::bench::detail {

double host_copy_rate(device::Device& device, std::uint64_t bytes) {
  const auto n = static_cast<std::size_t>(std::max<std::uint64_t>(bytes, 1));
  auto src = device.allocate_host(n, device::MemoryKind::kPinned);
  auto dst = device.allocate(n);
  if (!src || !dst || !(*dst)->host_accessible()) {
    return 0;
  }
  const auto* from = static_cast<const std::byte*>((*src)->data());
  auto* to = static_cast<std::byte*>((*dst)->data());
  std::memset((*src)->data(), 0x5a, n);
  std::memcpy(to, from, n);  // the destination's first touch, outside the timing
  const std::size_t repeats = std::clamp<std::size_t>((std::size_t{64} << 20) / n, 1, 4096);
  const auto copy_slice = [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = 0; r < repeats; ++r) {
      std::memcpy(to + begin, from + begin, end - begin);
    }
  };
  const int most = std::max(1, device.info().copy_engines);
  double best = 0;
  for (const int threads : most > 1 ? std::vector<int>{1, most} : std::vector<int>{1}) {
    const std::size_t slice = n / static_cast<std::size_t>(threads);
    for (int sample = 0; sample < 3; ++sample) {
      const auto start = std::chrono::steady_clock::now();
      std::vector<std::thread> others;
      for (int t = 1; t < threads; ++t) {
        const std::size_t begin = slice * static_cast<std::size_t>(t);
        others.emplace_back(copy_slice, begin, t + 1 == threads ? n : begin + slice);
      }
      copy_slice(0, threads == 1 ? n : slice);
      for (auto& t : others) {
        t.join();
      }
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      if (took.count() > 0) {
        best = std::max(best, static_cast<double>(n) * static_cast<double>(repeats) / took.count());
      }
    }
  }
  return best;
}

void set_emulated_peaks(std::span<BenchResult* const> rows, double link, double copy, int threads) {
  if (rows.empty()) {
    return;
  }
  const BenchResult* fastest = rows.front();
  for (const BenchResult* r : rows) {
    fastest = r->median_bytes_per_second > fastest->median_bytes_per_second ? r : fastest;
  }
  const double ceiling = link > 0 && copy > 0 ? std::min(link, copy) : std::max(link, copy);
  const std::string link_text = link > 0 ? units::format_rate(link) : "unlimited";
  const std::string copy_text = copy > 0 ? units::format_rate(copy) : "not measured";
  const std::string size = size_text(fastest->bytes);
  const bool rebase = ceiling <= 0 || fastest->median_bytes_per_second > ceiling;
  const double peak = rebase ? fastest->median_bytes_per_second : ceiling;
  const std::string source =
      rebase ? fmt::format(
                   "re-based to the fastest rate measured at {} ({}, {} on {}): above the lower "
                   "of the emulated link ({}) and this host's copy at that size ({}), so that "
                   "ceiling was wrong",
                   size, units::format_rate(fastest->median_bytes_per_second), fastest->case_key,
                   fastest->device, link_text, copy_text)
             : fmt::format(
                   "the lower of the emulated link ({}) and this host's copy at {} ({}, the best "
                   "measured after each case of the run: pinned host to device memory on 1 and {} "
                   "thread(s), the emulated DMAs' own copy)",
                   link_text, size, copy_text, threads);
  for (BenchResult* r : rows) {
    r->peak_bytes_per_second = peak;
    r->peak_source = source;
    assess(*r, PathKind::kEmulatedLink);
  }
}

namespace {

bool is_emulated(const BenchResult& r) {
  return r.status == kStatusOk && r.verdict == "emulated" && r.median_bytes_per_second > 0;
}

}  // namespace

void EmulatedPeaks::after_case(device::Device& device, const std::vector<BenchResult>& run_results,
                               std::size_t first_result) {
  link_bytes_per_second_ = device.info().link_bytes_per_second;
  threads_ = device.info().copy_engines;
  std::map<std::uint64_t, double> measured;  // a case's results share sizes
  for (std::size_t i = first_result; i < run_results.size(); ++i) {
    const BenchResult& r = run_results[i];
    if (!is_emulated(r)) {
      continue;
    }
    rows_.push_back(i);
    if (measured.try_emplace(r.bytes, 0).second) {
      double& best = copy_rates_[r.bytes];
      best = std::max(best, host_copy_rate(device, r.bytes));
    }
  }
}

void EmulatedPeaks::finish(std::vector<BenchResult>& run_results) const {
  std::map<std::uint64_t, std::vector<BenchResult*>> by_size;
  for (const std::size_t i : rows_) {
    by_size[run_results[i].bytes].push_back(&run_results[i]);
  }
  for (const auto& [bytes, rows] : by_size) {
    const auto copy = copy_rates_.find(bytes);
    set_emulated_peaks(rows, link_bytes_per_second_, copy == copy_rates_.end() ? 0 : copy->second,
                       threads_);
  }
}

}  // namespace acco::bench::detail
