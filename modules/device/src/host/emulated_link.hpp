// One direction of an emulated device link: a bandwidth and a latency shared by every queue of
// the device, and a bounded number of copy engines that may move data across it at once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace acco::device::host {

class LinkChannel {
 public:
  using Clock = std::chrono::steady_clock;

  // When the channel carries one transfer: [start, end) on the steady clock.
  struct Window {
    Clock::time_point start;
    Clock::time_point end;
  };

  // Held while a transfer is in flight; releases its copy engine when destroyed.
  class Engine {
   public:
    explicit Engine(LinkChannel& channel) : channel_(&channel) {}
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;
    ~Engine() { channel_->release(); }

   private:
    LinkChannel* channel_;
  };

  // bytes_per_second 0 = unlimited (memcpy speed); engines >= 1.
  LinkChannel(double bytes_per_second, std::chrono::nanoseconds latency, int engines);
  LinkChannel(const LinkChannel&) = delete;
  LinkChannel& operator=(const LinkChannel&) = delete;
  LinkChannel(LinkChannel&&) = delete;
  LinkChannel& operator=(LinkChannel&&) = delete;
  ~LinkChannel() = default;

  // Blocks until fewer than `engines` transfers are in flight. Thread-safe.
  [[nodiscard]] Engine acquire();

  // Books the channel for `bytes` right after everything booked before, and not before now.
  // Thread-safe; does not sleep. With unlimited bandwidth the window is empty.
  [[nodiscard]] Window reserve(std::size_t bytes);

  // One DMA: takes an engine, books the channel, copies, then sleeps until the booked end plus
  // the latency, so the caller observes the emulated duration. Thread-safe.
  void transfer(void* dst, const void* src, std::size_t bytes);

  [[nodiscard]] std::chrono::nanoseconds latency() const { return latency_; }

 private:
  void release();

  const double bytes_per_second_;
  const std::chrono::nanoseconds latency_;
  const int engines_;

  std::mutex mutex_;
  std::condition_variable engine_freed_;
  int busy_engines_ = 0;
  Clock::time_point free_at_{};
};

// A copy between two devices with no peer link: it crosses the source's device-to-host channel
// and the destination's host-to-device channel at once, as PCIe peer traffic routed through the
// root complex does, so it runs at the slower of the two and occupies both.
void transfer_through_host(LinkChannel& source_to_host, LinkChannel& host_to_destination, void* dst,
                           const void* src, std::size_t bytes);

}  // namespace acco::device::host
