// Host-side memcpy split over threads, for when one core cannot keep up with the link (a PCIe
// Gen5 x16 link moves ~55 GB/s, one core copies 5-15 GB/s).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace acco::transfer::detail {

class HostCopier {
 public:
  // `threads` >= 1 counts the caller: threads - 1 workers are started.
  explicit HostCopier(int threads);
  ~HostCopier();
  HostCopier(const HostCopier&) = delete;
  HostCopier& operator=(const HostCopier&) = delete;

  // Copies on the calling thread and the workers; returns when all parts are done. One caller at
  // a time. Small copies stay on the caller: waking a thread costs more than it saves.
  void copy(void* dst, const void* src, std::size_t bytes);
  [[nodiscard]] int threads() const { return static_cast<int>(workers_.size()) + 1; }
  // Threads that copy() puts on a copy of `bytes`, the caller included.
  [[nodiscard]] int threads_for(std::size_t bytes) const {
    return bytes < kMinSplitBytes ? 1 : threads();
  }

 private:
  // Below this a copy stays on one thread: a wake-up and a join cost tens of microseconds on a
  // busy machine, about what one core needs to copy 1 MiB.
  static constexpr std::size_t kMinSplitBytes = std::size_t{1} << 20;

  void work(int part);
  void copy_part(int part);

  std::mutex mutex_;
  std::condition_variable start_;
  std::condition_variable done_;
  std::uint64_t generation_ = 0;
  int pending_ = 0;
  bool stopping_ = false;
  std::byte* dst_ = nullptr;
  const std::byte* src_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t part_bytes_ = 0;
  std::vector<std::thread> workers_;
};

}  // namespace acco::transfer::detail
