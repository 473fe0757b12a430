#include "acco/transfer/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "engine_core.hpp"
#include "host_memory.hpp"

namespace acco::transfer {

// ---- Transfer ----------------------------------------------------------------------------------

Result<CopyRecord> Transfer::wait() {
  for (const auto& event : events_) {
    ACCO_RETURN_IF_ERROR(event->wait(), fmt::format("{} copy of {} bytes",
                                                    to_string(record_.strategy), record_.bytes));
  }
  return record_;
}

bool Transfer::ready() const {
  return std::all_of(events_.begin(), events_.end(),
                     [](const auto& event) { return event->ready(); });
}

// ---- Engine ------------------------------------------------------------------------------------

namespace {

using Clock = std::chrono::steady_clock;

// One thread copying between two staging slots (or the halves of one), best of three. The slab
// was just written, so for small pools this is partly a cache figure; it only sizes the host copy
// threads, and benchmarks measure memcpy on their own data.
double measure_memcpy(StagingPool& pool) {
  const StagingPool::Slot from = pool.acquire();
  std::optional<StagingPool::Slot> to = pool.try_acquire();
  std::size_t bytes = from.bytes;
  std::byte* dst = to ? to->data : from.data + from.bytes / 2;
  if (!to) {
    bytes = from.bytes / 2;
  }
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const Clock::time_point start = Clock::now();
    std::memcpy(dst, from.data, bytes);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (seconds > 0) {
      best = std::max(best, static_cast<double>(bytes) / seconds);
    }
  }
  pool.release(from.index);
  if (to) {
    pool.release(to->index);
  }
  return best;
}

// One staging slot's DMA to the device, best of three, for a device whose link rate the backend
// does not know (CUDA: the driver does not say; the topology does, but the engine sits below
// it). 0 when the device has no room for a slot or a copy fails.
double measure_dma(device::Device& device, device::Queue& queue, StagingPool& pool) {
  auto target = device.allocate(pool.info().slot_bytes);
  if (!target) {
    return 0;
  }
  const StagingPool::Slot slot = pool.acquire();
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const Clock::time_point start = Clock::now();
    if (!queue.copy((*target)->data(), slot.data, slot.bytes) || !queue.synchronize()) {
      best = 0;
      break;
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (seconds > 0) {
      best = std::max(best, static_cast<double>(slot.bytes) / seconds);
    }
  }
  pool.release(slot.index);
  return best;
}

}  // namespace

int auto_host_copy_threads(double link_bytes_per_second, double memcpy_bytes_per_second,
                           int cores) {
  if (link_bytes_per_second <= 0 || memcpy_bytes_per_second <= 0) {
    return 1;
  }
  const double per_thread = std::min(memcpy_bytes_per_second, kColdMemcpyBytesPerSecond);
  const int needed = static_cast<int>(std::ceil(link_bytes_per_second / per_thread));
  return std::clamp(needed, 1, std::clamp(cores - 1, 1, kMaxAutoHostCopyThreads));
}

Result<std::unique_ptr<Engine>> Engine::create(device::Device& device) {
  return create(device, default_profile(device.info()));
}

Result<std::unique_ptr<Engine>> Engine::create(device::Device& device, const Profile& profile) {
  ACCO_RETURN_IF_ERROR(validate(profile), "engine");
  auto core = std::make_unique<detail::EngineCore>(device, profile);
  for (int i = 0; i < profile.queues; ++i) {
    ACCO_ASSIGN_OR_RETURN(auto queue, device.create_queue(), "engine: create queue");
    core->queues.push_back(std::move(queue));
  }
  ACCO_ASSIGN_OR_RETURN(
      core->pool, (StagingPool::create(device, {profile.chunk_bytes, profile.slots})), "engine");
  core->device_slots.resize(static_cast<std::size_t>(profile.slots));

  EngineInfo& info = core->info;
  info.pool = core->pool->info();
  info.queues = profile.queues;
  // Whether device memory has a host mapping is a property of the backend, learnt from one small
  // allocation; a device too full for it simply gets no zero-copy path.
  if (auto probe = device.allocate(detail::page_bytes()); probe) {
    info.traits.device_memory_host_accessible = (*probe)->host_accessible();
  }
  info.host_memcpy_bytes_per_second = measure_memcpy(*core->pool);
  info.link_bytes_per_second = device.info().link_bytes_per_second;
  if (profile.host_copy_threads > 0) {
    info.host_copy_threads = profile.host_copy_threads;
  } else {
    if (info.link_bytes_per_second <= 0) {
      info.link_bytes_per_second = measure_dma(device, *core->queues.front(), *core->pool);
    }
    info.host_copy_threads =
        auto_host_copy_threads(info.link_bytes_per_second, info.host_memcpy_bytes_per_second,
                               static_cast<int>(std::thread::hardware_concurrency()));
  }
  core->copier = std::make_unique<detail::HostCopier>(info.host_copy_threads);
  return std::unique_ptr<Engine>(new Engine(std::move(core)));
}

Engine::Engine(std::unique_ptr<detail::EngineCore> core) : core_(std::move(core)) {}

Engine::~Engine() {
  for (auto& queue : core_->queues) {
    (void)queue->synchronize();
  }
}

EngineCounters Engine::counters() const {
  return core_->counters.read();
}

const Profile& Engine::profile() const {
  return core_->profile;
}

const EngineInfo& Engine::info() const {
  return core_->info;
}

device::Device& Engine::device() const {
  return core_->device;
}

void Engine::forget(const void* host_ptr) {
  core_->registrations.forget(host_ptr);
}

std::size_t Engine::registrations() const {
  return core_->registrations.registrations();
}

}  // namespace acco::transfer
