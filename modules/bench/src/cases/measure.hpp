// What every case needs to measure a copy honestly: host buffers of each memory kind, a data
// pattern written and checked outside the timed region, and the two timers (device events for
// asynchronous copies, the host clock where the host takes part).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "acco/bench/case.hpp"
#include "acco/bench/result.hpp"
#include "acco/core/result.hpp"
#include "acco/device/device.hpp"

namespace acco::bench::detail {

// Host memory of one kind; kRegistered is a pageable buffer pinned in place for its lifetime.
struct HostMemory {
  std::unique_ptr<device::Buffer> buffer;
  std::unique_ptr<device::Registration> registration;
  [[nodiscard]] void* data() const { return buffer->data(); }
};
[[nodiscard]] Result<HostMemory> host_memory(device::Device& device, device::MemoryKind kind,
                                             std::size_t bytes);

// A pattern that depends on the byte's offset and a seed, so a shifted, stale or partial copy
// cannot pass the check.
void fill_pattern(void* data, std::size_t bytes, std::uint64_t seed);
[[nodiscard]] bool check_pattern(const void* data, std::size_t bytes, std::uint64_t seed);

// Fills device memory with the pattern (through a pinned bounce buffer when the device's memory
// is not host-accessible) and checks it back the same way.
[[nodiscard]] Status fill_device(device::Device& device, device::Buffer& buffer,
                                 std::uint64_t seed);
[[nodiscard]] Status check_device(device::Device& device, const device::Buffer& buffer,
                                  std::uint64_t seed, const std::string& what);

// Runs `warmup` untimed then `reps` timed samples of `copies` calls of `submit` on `queue`,
// timing each sample between two events (the device's clock). Returns one duration per sample.
[[nodiscard]] Result<std::vector<std::chrono::nanoseconds>> time_with_events(
    device::Queue& queue, int warmup, int reps, int copies, const std::function<Status()>& submit);
// The same with the host's steady clock around `copies` calls of `run_one`, each of which must
// return only when its copy is complete.
[[nodiscard]] Result<std::vector<std::chrono::nanoseconds>> time_with_host_clock(
    int warmup, int reps, int copies, const std::function<Status()>& run_one);

// Two ways of doing the same work timed in alternating rounds with the host's steady clock: after
// `warmup` untimed calls of each, round r times `copies` calls of `run_a` and then of `run_b`
// (the other order in odd rounds), so load that drifts during the run falls on both. Returns
// the `reps` durations of each side, round for round.
struct AlternatingSamples {
  std::vector<std::chrono::nanoseconds> a;
  std::vector<std::chrono::nanoseconds> b;
};
[[nodiscard]] Result<AlternatingSamples> time_alternating(int warmup, int reps, int copies,
                                                          const std::function<Status()>& run_a,
                                                          const std::function<Status()>& run_b);

// Fills rates (bytes per sample / duration), the peak and the verdict.
[[nodiscard]] Status finish(BenchResult& result, std::uint64_t bytes_per_sample,
                            const std::vector<std::chrono::nanoseconds>& samples, double peak,
                            PathKind kind);

}  // namespace acco::bench::detail
