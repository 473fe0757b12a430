#include "acco/xfer/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "engine_core.hpp"
#include "host_memory.hpp"

namespace acco::xfer {

// ---- Transfer ----------------------------------------------------------------------------------

Result<CopyRecord> Transfer::wait() {
  for (const auto& event : events_) {
    if (Status status = event->wait(); !status) {
      return tl::unexpected(
          std::move(status.error())
              .with_context(
                  fmt::format("{} copy of {} bytes", to_string(record_.strategy), record_.bytes)));
    }
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

// kInvalidArgument when `strategy` cannot move a copy between these kinds.
Status check_forced(Strategy strategy, dev::MemoryKind dst, dev::MemoryKind src, std::size_t bytes,
                    const DeviceTraits& traits) {
  const Direction direction = direction_of(dst, src);
  const bool one_device_end =
      direction == Direction::kHostToDevice || direction == Direction::kDeviceToHost;
  const dev::MemoryKind host = dst == dev::MemoryKind::kDevice ? src : dst;
  const char* problem = nullptr;
  switch (strategy) {
    case Strategy::kNone:
      problem = bytes > 0 ? "moves nothing" : nullptr;
      break;
    case Strategy::kHostCopy:
      problem = direction != Direction::kHostToHost ? "needs host memory at both ends" : nullptr;
      break;
    case Strategy::kDirect:
      problem = one_device_end && host == dev::MemoryKind::kPageable
                    ? "cannot DMA pageable memory (use pipelined)"
                    : (direction == Direction::kHostToHost ? "needs a device end" : nullptr);
      break;
    case Strategy::kPipelined:
      problem = one_device_end ? nullptr : "needs exactly one device end";
      break;
    case Strategy::kZeroCopy:
      problem = !one_device_end ? "needs exactly one device end"
                : !traits.device_memory_host_accessible
                    ? "needs a host mapping of device memory, which this device lacks"
                    : nullptr;
      break;
    case Strategy::kBatched:
      problem = "is for Engine::batch()";
      break;
  }
  if (problem != nullptr) {
    return fail(
        Errc::kInvalidArgument,
        fmt::format("strategy {} for a {} copy ({} to {}): {}", to_string(strategy),
                    to_string(direction), dev::to_string(src), dev::to_string(dst), problem));
  }
  return {};
}

}  // namespace

Result<std::unique_ptr<Engine>> Engine::create(dev::Device& device, const Profile& profile) {
  ACCO_RETURN_IF_ERROR(validate(profile), "engine");
  auto core = std::make_unique<detail::EngineCore>(device, profile);
  for (int i = 0; i < profile.queues; ++i) {
    auto queue = device.create_queue();
    if (!queue) {
      return tl::unexpected(std::move(queue.error()).with_context("engine: create queue"));
    }
    core->queues.push_back(std::move(*queue));
  }
  auto pool = StagingPool::create(device, {profile.chunk_bytes, profile.slots});
  if (!pool) {
    return tl::unexpected(std::move(pool.error()).with_context("engine"));
  }
  core->pool = std::move(*pool);
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

const Profile& Engine::profile() const {
  return core_->profile;
}

const EngineInfo& Engine::info() const {
  return core_->info;
}

dev::Device& Engine::device() const {
  return core_->device;
}

void Engine::forget(const void* host_ptr) {
  core_->registrations.forget(host_ptr);
}

std::size_t Engine::registrations() const {
  return core_->registrations.registrations();
}

Result<Transfer> Engine::copy(void* dst, const void* src, std::size_t bytes,
                              const CopyOptions& options) {
  detail::EngineCore& core = *core_;
  CopyRecord record;
  record.bytes = bytes;
  record.items = 1;
  if (bytes == 0) {
    return Transfer(record, {});
  }
  // Formatted only on an error path: small copies are microseconds, a format is a good part of one.
  const auto context = [bytes] { return fmt::format("copy of {} bytes", bytes); };
  if (dst == nullptr || src == nullptr) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: null {}", context(), dst == nullptr ? "destination" : "source"));
  }
  const auto d = reinterpret_cast<std::uintptr_t>(dst);
  const auto s = reinterpret_cast<std::uintptr_t>(src);
  if ((d >= s ? d - s : s - d) < bytes) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: source {} and destination {} overlap", context(), src, dst));
  }

  record.dst_kind = core.device.kind_of(dst);
  record.src_kind = core.device.kind_of(src);
  record.direction = direction_of(record.dst_kind, record.src_kind);
  const bool to_device = record.direction == Direction::kHostToDevice;
  const bool to_host = record.direction == Direction::kDeviceToHost;
  void* host_end = to_device ? const_cast<void*>(src) : dst;
  dev::MemoryKind& host_kind = to_device ? record.src_kind : record.dst_kind;

  CopyShape shape{record.dst_kind, record.src_kind, bytes, 0};
  if (to_device || to_host) {
    bool covered = false;
    if (core.registrations.registered(host_end, bytes, &covered)) {
      record.registered = covered;
      if (!covered) {
        // Our registration is shorter than this copy; the rest is pageable, so stage it all.
        (to_device ? shape.src : shape.dst) = dev::MemoryKind::kPageable;
      }
    } else if (host_kind == dev::MemoryKind::kPageable && core.profile.register_after_uses > 0 &&
               !options.strategy) {
      shape.host_buffer_uses = core.registrations.note_use(host_end, bytes);
    }
  }

  CopyPlan plan;
  if (options.strategy) {
    ACCO_RETURN_IF_ERROR(
        check_forced(*options.strategy, shape.dst, shape.src, bytes, core.info.traits), context());
    plan = plan_copy(shape, core.profile, core.info.traits);
    plan.strategy = *options.strategy;
    plan.register_host = false;
    plan.queues = std::max(plan.queues, 1);
  } else {
    plan = plan_copy(shape, core.profile, core.info.traits);
  }
  if (plan.register_host) {
    auto pin_time = core.registrations.pin(core.device, host_end, bytes);
    if (pin_time) {
      record.registered = true;
      record.pin_time = *pin_time;
      host_kind = dev::MemoryKind::kRegistered;
    } else {
      plan.strategy = Strategy::kPipelined;  // could not pin (limit, overlap): stage it instead
    }
  }
  record.strategy = plan.strategy;

  Result<detail::Events> events = detail::Events{};
  switch (plan.strategy) {
    case Strategy::kNone:
      break;
    case Strategy::kHostCopy:
      events = detail::copy_host(core, dst, src, bytes, record);
      break;
    case Strategy::kZeroCopy:
      events = detail::copy_zero_copy(core, dst, src, bytes, record);
      break;
    case Strategy::kDirect:
      events = detail::copy_direct(core, dst, src, bytes, plan.queues, record);
      break;
    case Strategy::kPipelined:
      events = detail::copy_pipelined(core, dst, src, bytes, record);
      break;
    case Strategy::kBatched:
      return fail(Errc::kInternal, "batched plan for a single copy");
  }
  if (!events) {
    return tl::unexpected(std::move(events.error()).with_context(context()));
  }
  return Transfer(record, std::move(*events));
}

}  // namespace acco::xfer
