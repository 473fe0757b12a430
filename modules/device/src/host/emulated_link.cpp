#include "host/emulated_link.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

namespace acco::device::host {
namespace {

// sleep_until wakes tens of microseconds late (the kernel's timer slack is 50 us), which would
// turn a 2 us DMA latency into 60; the last stretch before the deadline is spun instead.
void wait_until(LinkChannel::Clock::time_point deadline) {
  constexpr std::chrono::microseconds kSpin{100};
  if (deadline - LinkChannel::Clock::now() > kSpin) {
    std::this_thread::sleep_until(deadline - kSpin);
  }
  while (LinkChannel::Clock::now() < deadline) {
    std::this_thread::yield();
  }
}

}  // namespace

LinkChannel::LinkChannel(double bytes_per_second, std::chrono::nanoseconds latency, int engines)
    : bytes_per_second_(bytes_per_second), latency_(latency), engines_(engines) {}

LinkChannel::Engine LinkChannel::acquire() {
  std::unique_lock lock(mutex_);
  engine_freed_.wait(lock, [&] { return busy_engines_ < engines_; });
  ++busy_engines_;
  return Engine(*this);
}

void LinkChannel::release() {
  {
    const std::lock_guard lock(mutex_);
    --busy_engines_;
  }
  engine_freed_.notify_one();
}

LinkChannel::Window LinkChannel::reserve(std::size_t bytes) {
  const Clock::time_point now = Clock::now();
  if (bytes_per_second_ <= 0) {
    return {now, now};
  }
  const auto duration =
      std::chrono::nanoseconds(std::llround(static_cast<double>(bytes) / bytes_per_second_ * 1e9));
  const std::lock_guard lock(mutex_);
  const Clock::time_point start = std::max(now, free_at_);
  free_at_ = start + duration;
  return {start, free_at_};
}

void LinkChannel::transfer(void* dst, const void* src, std::size_t bytes) {
  const Engine engine = acquire();
  const Window window = reserve(bytes);
  std::memcpy(dst, src, bytes);
  wait_until(window.end + latency_);
}

void transfer_through_host(LinkChannel& source_to_host, LinkChannel& host_to_destination, void* dst,
                           const void* src, std::size_t bytes) {
  // Engines are always taken device-to-host first, host-to-device second, so two such copies in
  // opposite directions cannot each hold what the other waits for.
  const LinkChannel::Engine up = source_to_host.acquire();
  const LinkChannel::Engine down = host_to_destination.acquire();
  const LinkChannel::Window up_window = source_to_host.reserve(bytes);
  const LinkChannel::Window down_window = host_to_destination.reserve(bytes);
  std::memcpy(dst, src, bytes);
  wait_until(std::max(up_window.end, down_window.end) + source_to_host.latency() +
             host_to_destination.latency());
}

}  // namespace acco::device::host
