// The transfer engine: moves bytes between host and device memory of one device as fast as its
// link allows, choosing per copy between direct DMA, pipelined staging, batching, zero-copy and
// registering a reused buffer, and telling the caller what it did.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/device/device.hpp"
#include "acco/transfer/counters.hpp"
#include "acco/transfer/profile.hpp"
#include "acco/transfer/staging_pool.hpp"
#include "acco/transfer/strategy.hpp"

namespace acco::transfer {

namespace detail {
struct EngineCore;
}  // namespace detail

struct CopyOptions {
  // Use this strategy instead of the profile's choice (benchmarks, tests). kInvalidArgument when
  // it cannot move this copy: kDirect with pageable host memory, kPipelined or kZeroCopy without
  // exactly one device end, kZeroCopy without a host mapping of device memory, kHostCopy with a
  // device end, kBatched (use Engine::batch), kNone for a non-empty copy.
  std::optional<Strategy> strategy;
};

// What the engine found when it started.
struct EngineInfo {
  PoolInfo pool;
  DeviceTraits traits;
  int queues = 0;
  int host_copy_threads = 0;  // resolved from the profile (never 0 here)
  // One thread, measured between two staging slots at start: on the host backend the emulated
  // DMA is itself a memcpy, so this bounds what any strategy reaches there.
  double host_memcpy_bytes_per_second = 0;
  // The device's link (DeviceInfo::link_bytes_per_second); where the device does not know it and
  // the profile leaves the host copy threads to the engine, one staging slot's DMA to the device
  // measured at start (CUDA), which sizes those threads; 0 when neither is known.
  double link_bytes_per_second = 0;
};

// What one thread's memcpy from pageable memory that is not in the cache moves, at most: the
// engine's start-up measurement copies between staging slots that sit in the cache, and on an
// H200 VM (Sapphire Rapids, 16 vCPUs) it read above the Gen5 link's 63 GB/s, so one thread was
// chosen, while a memcpy of 512 MiB moved 9.2 GB/s and pageable host-to-device staging needed 4
// to 8 threads to reach 29 GB/s (issue 34). Server cores copy 6-15 GB/s each from DRAM.
inline constexpr double kColdMemcpyBytesPerSecond = 8e9;

// Above this many threads copies gain nothing: on that H200 VM memcpy moved 10.3 GB/s on one
// thread, 44 on 8, 51 on 12 and 37 on 16 (memory bandwidth, not cores, is the limit).
inline constexpr int kMaxAutoHostCopyThreads = 12;

// Host copy threads (the caller included) for staging to keep pace with a link of
// `link_bytes_per_second`: link / min(memcpy, kColdMemcpyBytesPerSecond), rounded up, within 1 and
// cores - 1 (one core left to the submitting thread's other work), at most
// kMaxAutoHostCopyThreads. 1 when a rate is unknown. What a profile's host_copy_threads 0
// resolves to. Pure.
[[nodiscard]] int auto_host_copy_threads(double link_bytes_per_second,
                                         double memcpy_bytes_per_second, int cores);

// Completion of one copy or batch. Movable; cheap. May outlive the Engine (the engine drains its
// queues when destroyed).
class Transfer {
 public:
  Transfer() = default;  // complete, moved nothing
  // Blocks until every part is done. The record on success, otherwise the first error of a part.
  // May be called again; returns the same.
  [[nodiscard]] Result<CopyRecord> wait();
  [[nodiscard]] bool ready() const;
  // Known as soon as the copy is submitted.
  [[nodiscard]] const CopyRecord& record() const { return record_; }

 private:
  friend class Engine;
  friend class Batch;
  Transfer(CopyRecord record, std::vector<std::shared_ptr<device::Event>> events)
      : record_(record), events_(std::move(events)) {}

  CopyRecord record_;
  std::vector<std::shared_ptr<device::Event>> events_;
};

class Engine;

// Collects copies and moves them together: small host<->device items are packed into staging
// slots, each slot crosses the link as one DMA, and the items are scattered on the far side.
// Belongs to the Engine that made it and to that engine's thread.
class Batch {
 public:
  // kInvalidArgument for a null pointer or overlapping ranges. Zero-length items are dropped.
  // Nothing is read until submit().
  [[nodiscard]] Status add(void* dst, const void* src, std::size_t bytes);
  [[nodiscard]] std::size_t items() const { return items_.size(); }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

  // Moves every item and empties the batch. Host sources of packed host-to-device items are read
  // before submit returns; everything else must stay valid until the Transfer completes. On an
  // error some items may have been copied; nothing is left queued. kDeviceError when device
  // staging memory cannot be allocated.
  [[nodiscard]] Result<Transfer> submit();

 private:
  friend class Engine;
  struct Item {
    void* dst;
    const void* src;
    std::size_t bytes;
  };
  explicit Batch(Engine& engine) : engine_(&engine) {}

  Engine* engine_;
  std::vector<Item> items_;
  std::size_t bytes_ = 0;
};

// Bound to one device. Not thread-safe (but counters()): use one Engine per thread (each owns its
// queues, and a Queue accepts submissions from one thread). Its staging pool is safe to share
// internally with the queue workers.
class Engine {
 public:
  // kInvalidArgument for an invalid profile; kDeviceError when queues or staging memory cannot be
  // created. `device` must outlive the engine. Without a profile, default_profile(device.info()):
  // the defaults that suit this kind of device.
  [[nodiscard]] static Result<std::unique_ptr<Engine>> create(device::Device& device);
  [[nodiscard]] static Result<std::unique_ptr<Engine>> create(device::Device& device,
                                                              const Profile& profile);
  // Waits for everything queued, then unpins the buffers it registered and frees its pool.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Copies `bytes` from src to dst; either may be device memory of this device or host memory of
  // any kind (device->kind_of tells them apart). The record says how. Copies are independent:
  // they may run concurrently and finish in any order, so wait for one before another touches the
  // same memory. Staged copies from pageable memory return once the source has been read
  // (host-to-device) or the destination written (device-to-host); zero-copy and host copies
  // return complete; the rest return at once.
  // Errors: kInvalidArgument for null pointers, overlapping ranges, a range past the end of an
  // allocation or a forced strategy that cannot move this copy; kDeviceError from the device.
  // Zero bytes complete at once, whatever the pointers.
  [[nodiscard]] Result<Transfer> copy(void* dst, const void* src, std::size_t bytes,
                                      const CopyOptions& options = {});

  [[nodiscard]] Batch batch() { return Batch(*this); }

  // Unpins a host buffer the engine registered (see Profile::register_after_uses) and forgets its
  // use count. Call it, after waiting for its copies, before freeing such a buffer: a GPU would
  // otherwise keep DMA-ing to the old pages. No-op for buffers the engine does not know.
  void forget(const void* host_ptr);
  // Buffers the engine holds pinned in place now.
  [[nodiscard]] std::size_t registrations() const;

  // What the engine has moved since it started: copies counted when they are dispatched (queued
  // or done), batch items once their batch is submitted; failed copies are not counted. Safe to
  // call from any thread while another uses the engine (relaxed atomics: each counter is exact,
  // a read taken during a copy may see its bytes before its copy count).
  [[nodiscard]] EngineCounters counters() const;

  [[nodiscard]] const Profile& profile() const;
  [[nodiscard]] const EngineInfo& info() const;
  [[nodiscard]] device::Device& device() const;

 private:
  friend class Batch;
  explicit Engine(std::unique_ptr<detail::EngineCore> core);

  std::unique_ptr<detail::EngineCore> core_;
};

}  // namespace acco::transfer
