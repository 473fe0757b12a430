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

// Threads the host side needs so its copies keep pace with the link, leaving one core for the
// submitting thread's other work (on the host backend, for the DMA itself).
int auto_copy_threads(double link_bytes_per_second, double memcpy_bytes_per_second) {
  if (link_bytes_per_second <= 0 || memcpy_bytes_per_second <= 0) {
    return 1;
  }
  const int cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  const int needed = static_cast<int>(std::ceil(link_bytes_per_second / memcpy_bytes_per_second));
  return std::clamp(needed, 1, std::max(1, cores - 1));
}

}  // namespace

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
  info.host_copy_threads = profile.host_copy_threads > 0
                               ? profile.host_copy_threads
                               : auto_copy_threads(device.info().link_bytes_per_second,
                                                   info.host_memcpy_bytes_per_second);
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
