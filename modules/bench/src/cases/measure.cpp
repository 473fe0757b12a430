#include "measure.hpp"

#include <cstring>

#include <fmt/format.h>

namespace acco::bench::detail {
namespace {

std::uint64_t word_at(std::size_t index, std::uint64_t seed) {
  // splitmix64 of (index, seed): cheap, and every word differs from its neighbours.
  std::uint64_t z = (static_cast<std::uint64_t>(index) + 1) * 0x9e3779b97f4a7c15ULL + seed;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

Result<HostMemory> host_memory(device::Device& device, device::MemoryKind kind, std::size_t bytes) {
  HostMemory m;
  const auto alloc_kind =
      kind == device::MemoryKind::kRegistered ? device::MemoryKind::kPageable : kind;
  ACCO_ASSIGN_OR_RETURN(m.buffer, device.allocate_host(bytes, alloc_kind));
  if (kind == device::MemoryKind::kRegistered) {
    ACCO_ASSIGN_OR_RETURN(m.registration, device.register_host(m.buffer->data(), bytes));
  }
  return m;
}

void fill_pattern(void* data, std::size_t bytes, std::uint64_t seed) {
  auto* out = static_cast<unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; i += 8) {
    const std::uint64_t w = word_at(i / 8, seed);
    std::memcpy(out + i, &w, std::min<std::size_t>(8, bytes - i));
  }
}

bool check_pattern(const void* data, std::size_t bytes, std::uint64_t seed) {
  const auto* in = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; i += 8) {
    const std::uint64_t w = word_at(i / 8, seed);
    if (std::memcmp(in + i, &w, std::min<std::size_t>(8, bytes - i)) != 0) {
      return false;
    }
  }
  return true;
}

Status fill_device(device::Device& device, device::Buffer& buffer, std::uint64_t seed) {
  if (buffer.host_accessible()) {
    fill_pattern(buffer.data(), buffer.size(), seed);
    return {};
  }
  ACCO_ASSIGN_OR_RETURN(const auto bounce,
                        device.allocate_host(buffer.size(), device::MemoryKind::kPinned));
  fill_pattern(bounce->data(), buffer.size(), seed);
  return device.copy(buffer.data(), bounce->data(), buffer.size());
}

Status check_device(device::Device& device, const device::Buffer& buffer, std::uint64_t seed,
                    const std::string& what) {
  const void* data = buffer.data();
  std::unique_ptr<device::Buffer> bounce;
  if (!buffer.host_accessible()) {
    ACCO_ASSIGN_OR_RETURN(bounce, device.allocate_host(buffer.size(), device::MemoryKind::kPinned));
    ACCO_RETURN_IF_ERROR(device.copy(bounce->data(), buffer.data(), buffer.size()), what);
    data = bounce->data();
  }
  if (!check_pattern(data, buffer.size(), seed)) {
    return fail(
        Errc::kDeviceError,
        fmt::format("{}: data verification failed: the copy did not deliver the pattern", what));
  }
  return {};
}

Result<std::vector<std::chrono::nanoseconds>> time_with_events(
    device::Queue& queue, int warmup, int reps, int copies, const std::function<Status()>& submit) {
  for (int i = 0; i < warmup; ++i) {
    ACCO_RETURN_IF_ERROR(submit(), "warm-up");
  }
  ACCO_RETURN_IF_ERROR(queue.synchronize(), "warm-up");
  std::vector<std::chrono::nanoseconds> samples;
  for (int r = 0; r < reps; ++r) {
    ACCO_ASSIGN_OR_RETURN(const auto start, queue.record());
    for (int c = 0; c < copies; ++c) {
      ACCO_RETURN_IF_ERROR(submit(), "copy");
    }
    ACCO_ASSIGN_OR_RETURN(const auto end, queue.record());
    ACCO_RETURN_IF_ERROR(end->wait(), "copy");
    ACCO_ASSIGN_OR_RETURN(const auto elapsed, end->since(*start));
    samples.push_back(elapsed);
  }
  return samples;
}

Result<std::vector<std::chrono::nanoseconds>> time_with_host_clock(
    int warmup, int reps, int copies, const std::function<Status()>& run_one) {
  for (int i = 0; i < warmup; ++i) {
    ACCO_RETURN_IF_ERROR(run_one(), "warm-up");
  }
  std::vector<std::chrono::nanoseconds> samples;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < copies; ++c) {
      ACCO_RETURN_IF_ERROR(run_one(), "copy");
    }
    samples.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now() - t0));
  }
  return samples;
}

Result<AlternatingSamples> time_alternating(int warmup, int reps, int copies,
                                            const std::function<Status()>& run_a,
                                            const std::function<Status()>& run_b) {
  for (int i = 0; i < warmup; ++i) {
    ACCO_RETURN_IF_ERROR(run_a(), "warm-up");
    ACCO_RETURN_IF_ERROR(run_b(), "warm-up");
  }
  const auto sample = [&](const std::function<Status()>& run) -> Result<std::chrono::nanoseconds> {
    const auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < copies; ++c) {
      ACCO_RETURN_IF_ERROR(run(), "copy");
    }
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                t0);
  };
  AlternatingSamples out;
  for (int r = 0; r < reps; ++r) {
    if (r % 2 == 0) {
      ACCO_ASSIGN_OR_RETURN(const auto a, sample(run_a));
      ACCO_ASSIGN_OR_RETURN(const auto b, sample(run_b));
      out.a.push_back(a);
      out.b.push_back(b);
    } else {
      ACCO_ASSIGN_OR_RETURN(const auto b, sample(run_b));
      ACCO_ASSIGN_OR_RETURN(const auto a, sample(run_a));
      out.a.push_back(a);
      out.b.push_back(b);
    }
  }
  return out;
}

Status finish(BenchResult& result, std::uint64_t bytes_per_sample,
              const std::vector<std::chrono::nanoseconds>& samples, double peak, PathKind kind) {
  ACCO_ASSIGN_OR_RETURN(const auto rates, bytes_per_second(bytes_per_sample, samples));
  ACCO_ASSIGN_OR_RETURN(const auto summary, summarize(rates));
  set_rates(result, summary);
  result.peak_bytes_per_second = peak;
  assess(result, kind);
  return {};
}

}  // namespace acco::bench::detail
