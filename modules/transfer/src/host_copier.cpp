#include "host_copier.hpp"

#include <algorithm>
#include <cstring>

namespace acco::transfer::detail {
namespace {

// Parts start on cache-line boundaries so no two threads write the same line.
constexpr std::size_t kPartAlignment = 64;

}  // namespace

HostCopier::HostCopier(int threads) {
  for (int part = 1; part < threads; ++part) {
    workers_.emplace_back([this, part] { work(part); });
  }
}

HostCopier::~HostCopier() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  start_.notify_all();
  for (std::thread& worker : workers_) {
    worker.join();
  }
}

void HostCopier::copy(void* dst, const void* src, std::size_t bytes) {
  if (workers_.empty() || bytes < kMinSplitBytes) {
    std::memcpy(dst, src, bytes);
    return;
  }
  const auto parts = static_cast<std::size_t>(threads());
  {
    const std::lock_guard lock(mutex_);
    dst_ = static_cast<std::byte*>(dst);
    src_ = static_cast<const std::byte*>(src);
    bytes_ = bytes;
    part_bytes_ =
        ((bytes + parts - 1) / parts + kPartAlignment - 1) / kPartAlignment * kPartAlignment;
    pending_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  start_.notify_all();
  copy_part(0);
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return pending_ == 0; });
}

void HostCopier::copy_part(int part) {
  // Read without the lock: the parameters were published under it before the generation moved
  // on, and they do not change until every part has reported done.
  const std::size_t begin = std::min(bytes_, static_cast<std::size_t>(part) * part_bytes_);
  const std::size_t end = std::min(bytes_, begin + part_bytes_);
  if (end > begin) {
    std::memcpy(dst_ + begin, src_ + begin, end - begin);
  }
}

void HostCopier::work(int part) {
  std::uint64_t seen = 0;
  std::unique_lock lock(mutex_);
  for (;;) {
    start_.wait(lock, [&] { return stopping_ || generation_ != seen; });
    if (stopping_) {
      return;
    }
    seen = generation_;
    lock.unlock();
    copy_part(part);
    lock.lock();
    if (--pending_ == 0) {
      done_.notify_one();
    }
  }
}

}  // namespace acco::transfer::detail
