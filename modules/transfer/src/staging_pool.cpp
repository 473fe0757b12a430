#include "acco/transfer/staging_pool.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>

#include <fmt/format.h>
#include <sys/mman.h>

#include "host_memory.hpp"

namespace acco::transfer {
namespace {

using Clock = std::chrono::steady_clock;

std::size_t round_up(std::size_t value, std::size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// The largest power of two dividing `value` (an address or an offset), capped.
std::size_t alignment_of(std::uintptr_t value, std::size_t cap) {
  const std::uintptr_t lowest_bit = value & (~value + 1);
  return lowest_bit == 0 ? cap : std::min<std::size_t>(lowest_bit, cap);
}

}  // namespace

double PoolInfo::pin_bytes_per_second() const {
  const double seconds = std::chrono::duration<double>(setup_time).count();
  return seconds > 0 ? static_cast<double>(total_bytes) / seconds : 0;
}

// The pool's memory: either a device allocation, or an anonymous mapping pinned by registration.
struct StagingPool::Slab {
  std::unique_ptr<device::Buffer> buffer;
  void* mapping = nullptr;
  std::size_t mapping_bytes = 0;
  std::unique_ptr<device::Registration> registration;
  std::byte* data = nullptr;

  Slab() = default;
  Slab(const Slab&) = delete;
  Slab& operator=(const Slab&) = delete;
  ~Slab() {
    registration.reset();  // unpin before the pages go away
    if (mapping != nullptr) {
      ::munmap(mapping, mapping_bytes);
    }
  }
};

namespace {

// An anonymous mapping of `bytes` starting on a `alignment` boundary, or nullptr. mmap only
// promises page alignment, so map one alignment more and trim both ends.
void* map_aligned(std::size_t bytes, std::size_t alignment) {
  const std::size_t padded = bytes + alignment;
  void* raw = ::mmap(nullptr, padded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    return nullptr;
  }
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (start + alignment - 1) / alignment * alignment;
  if (aligned > start) {
    ::munmap(raw, aligned - start);
  }
  const std::uintptr_t tail = aligned + bytes;
  if (start + padded > tail) {
    ::munmap(reinterpret_cast<void*>(tail), start + padded - tail);
  }
  return reinterpret_cast<void*>(aligned);
}

}  // namespace

Result<std::unique_ptr<StagingPool>> StagingPool::create(device::Device& device,
                                                         const StagingPoolOptions& options) {
  if (options.slot_bytes == 0 || options.slots < 1) {
    return fail(Errc::kInvalidArgument,
                fmt::format("staging pool: need slot_bytes > 0 and slots >= 1, got {} and {}",
                            options.slot_bytes, options.slots));
  }
  std::unique_ptr<core::Fs> live_fs;
  if (options.fs == nullptr) {
    ACCO_ASSIGN_OR_RETURN(live_fs, core::make_disk_fs("/"), "staging pool");
  }
  const core::Fs& fs = options.fs != nullptr ? *options.fs : *live_fs;

  PoolInfo info;
  info.slots = options.slots;
  info.transparent_hugepage = detail::transparent_hugepage_mode(fs);
  const std::size_t page = detail::page_bytes();
  const std::size_t huge_page = detail::huge_page_bytes(fs);
  info.slot_bytes = round_up(options.slot_bytes, page);
  const bool thp = info.transparent_hugepage == "always" || info.transparent_hugepage == "madvise";
  const bool want_huge = options.huge_pages && thp &&
                         info.slot_bytes * static_cast<std::size_t>(options.slots) >= huge_page;
  if (want_huge && info.slot_bytes >= huge_page) {
    // Whole huge pages per slot, so every slot starts on a huge page boundary.
    info.slot_bytes = round_up(info.slot_bytes, huge_page);
  }
  if (info.slot_bytes >
      std::numeric_limits<std::size_t>::max() / 2 / static_cast<std::size_t>(options.slots)) {
    return fail(Errc::kInvalidArgument, fmt::format("staging pool: {} slots of {} bytes overflow",
                                                    options.slots, info.slot_bytes));
  }
  info.total_bytes = info.slot_bytes * static_cast<std::size_t>(options.slots);

  const Clock::time_point start = Clock::now();
  auto slab = std::make_unique<Slab>();
  if (want_huge) {
    const std::size_t bytes = round_up(info.total_bytes, huge_page);
    if (void* mapping = map_aligned(bytes, huge_page); mapping != nullptr) {
      slab->mapping = mapping;
      slab->mapping_bytes = bytes;
      // Advice and NUMA policy act when a page is first touched, so both come before the memset
      // that faults the slab in; the memset also keeps first-touch faults out of every copy.
      info.huge_page_advice = ::madvise(mapping, bytes, MADV_HUGEPAGE) == 0;
      const int node = device.info().numa_node;
      if (node >= 0 && detail::prefer_numa_node(mapping, bytes, node)) {
        info.numa_node = node;
      }
      std::memset(mapping, 0, bytes);
      const Clock::time_point pin_start = Clock::now();
      auto registration = device.register_host(mapping, bytes);
      info.pin_time = Clock::now() - pin_start;
      if (registration) {
        slab->registration = std::move(*registration);
        slab->data = static_cast<std::byte*>(mapping);
        info.kind = device::MemoryKind::kRegistered;
        info.huge_page_bytes = detail::anon_huge_page_bytes(fs, mapping);
      } else {
        // A backend that cannot register memory still allocates pinned memory: fall through.
        slab = std::make_unique<Slab>();
        info.huge_page_advice = false;
        info.numa_node = -1;
      }
    }
  }
  if (slab->data == nullptr) {
    const Clock::time_point pin_start = Clock::now();
    auto buffer = device.allocate_host(info.total_bytes, device::MemoryKind::kPinned);
    info.pin_time = Clock::now() - pin_start;
    ACCO_ASSIGN_OR_RETURN(slab->buffer, std::move(buffer),
                          fmt::format("staging pool: pin {} bytes", info.total_bytes));
    slab->data = static_cast<std::byte*>(slab->buffer->data());
    info.kind = device::MemoryKind::kPinned;
    // The device placed it (on its NUMA node where it can); touch it now, not in the first copy.
    std::memset(slab->data, 0, info.total_bytes);
  }
  info.setup_time = Clock::now() - start;
  // Every slot starts at data + i * slot_bytes: aligned to what both terms are aligned to.
  info.alignment_bytes =
      std::min(alignment_of(reinterpret_cast<std::uintptr_t>(slab->data), huge_page),
               alignment_of(info.slot_bytes, huge_page));
  return std::unique_ptr<StagingPool>(new StagingPool(std::move(slab), std::move(info)));
}

StagingPool::StagingPool(std::unique_ptr<Slab> slab, PoolInfo info)
    : slab_(std::move(slab)), info_(std::move(info)) {
  free_.reserve(static_cast<std::size_t>(info_.slots));
  for (int index = info_.slots - 1; index >= 0; --index) {
    free_.push_back(index);
  }
}

StagingPool::~StagingPool() = default;

StagingPool::Slot StagingPool::slot(int index) const {
  return Slot{index, slab_->data + static_cast<std::size_t>(index) * info_.slot_bytes,
              info_.slot_bytes};
}

StagingPool::Slot StagingPool::acquire() {
  std::unique_lock lock(mutex_);
  freed_.wait(lock, [&] { return !free_.empty(); });
  const int index = free_.back();
  free_.pop_back();
  ++acquisitions_;
  return slot(index);
}

std::optional<StagingPool::Slot> StagingPool::try_acquire() {
  const std::lock_guard lock(mutex_);
  if (free_.empty()) {
    return std::nullopt;
  }
  const int index = free_.back();
  free_.pop_back();
  ++acquisitions_;
  return slot(index);
}

void StagingPool::release(int index) {
  ACCO_CHECK(index >= 0 && index < info_.slots);
  {
    const std::lock_guard lock(mutex_);
    ACCO_CHECK(std::find(free_.begin(), free_.end(), index) == free_.end());
    free_.push_back(index);
  }
  freed_.notify_one();
}

int StagingPool::available() const {
  const std::lock_guard lock(mutex_);
  return static_cast<int>(free_.size());
}

std::size_t StagingPool::acquisitions() const {
  const std::lock_guard lock(mutex_);
  return acquisitions_;
}

}  // namespace acco::transfer
