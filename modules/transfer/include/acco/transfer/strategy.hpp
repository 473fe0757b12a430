// How the transfer engine moves one copy: the strategies, the pure rule that picks one from the
// memory kinds, the size and the profile, and the record of what a copy did, which the caller
// gets back and reports print.
#pragma once

#include <chrono>
#include <cstddef>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "acco/core/result.hpp"
#include "acco/device/device.hpp"
#include "acco/transfer/profile.hpp"

namespace acco::transfer {

enum class Strategy {
  kNone,       // zero bytes: nothing to do
  kHostCopy,   // both ends in host memory: memcpy on the host, no device involved
  kDirect,     // one Queue::copy per part: device memory or DMA-capable host memory
  kPipelined,  // pageable host memory staged through pinned slots, host copies overlapping DMA
  kBatched,    // many small copies packed into one staging buffer and moved as one transfer
  // The CPU loads/stores device memory through its host mapping, no DMA and no queue. On the
  // host backend that mapping is plain RAM, so these bytes bypass the emulated link; a GPU needs
  // a BAR1 mapping (gdrcopy), which the CUDA backend does not offer, so it never takes this path.
  kZeroCopy,
};
[[nodiscard]] std::string_view to_string(Strategy strategy);
// kInvalidArgument listing the names ("none", "host-copy", "direct", ...) otherwise.
[[nodiscard]] Result<Strategy> strategy_from_string(std::string_view name);

enum class Direction {
  kHostToHost,
  kHostToDevice,
  kDeviceToHost,
  kDeviceToDevice,
};
[[nodiscard]] std::string_view to_string(Direction direction);
[[nodiscard]] Direction direction_of(device::MemoryKind dst, device::MemoryKind src);

// What the engine knows about one copy before it starts.
struct CopyShape {
  device::MemoryKind dst = device::MemoryKind::kPageable;
  device::MemoryKind src = device::MemoryKind::kPageable;
  std::size_t bytes = 0;
  // How many times the engine has seen this pageable host buffer, this copy included.
  int host_buffer_uses = 0;
};

// What the engine learnt about its device when it started.
struct DeviceTraits {
  // Device memory has a host mapping the CPU may load and store (the host backend's RAM; a
  // BAR1/gdrcopy mapping on a GPU). Without it there is no zero-copy path.
  bool device_memory_host_accessible = false;
};

struct CopyPlan {
  Strategy strategy = Strategy::kNone;
  bool register_host = false;  // pin the pageable host side in place first, then go direct
  int queues = 0;              // queues the copy is spread over
  bool operator==(const CopyPlan&) const = default;
};

// Pure: what Engine::copy does with a copy of this shape under this profile.
[[nodiscard]] CopyPlan plan_copy(const CopyShape& shape, const Profile& profile,
                                 const DeviceTraits& traits);

// What one copy (or batch) did. Plain value, serialisable for reports.
struct CopyRecord {
  Strategy strategy = Strategy::kNone;
  Direction direction = Direction::kHostToHost;
  device::MemoryKind dst_kind = device::MemoryKind::kPageable;
  device::MemoryKind src_kind = device::MemoryKind::kPageable;
  std::size_t bytes = 0;
  std::size_t chunk_bytes = 0;  // size of each piece (chunk, batch round, split part); 0 if none
  std::size_t chunks = 0;       // pieces moved
  int queues = 0;               // queues used
  int slots = 0;                // staging slots in use at most
  int host_threads = 0;         // threads doing host-side copies, the caller included
  std::size_t items = 0;        // copies covered: 1, or a batch's item count
  bool registered = false;      // the host side is pinned in place by the engine
  std::chrono::nanoseconds pin_time{0};  // pinning paid by this copy (a new registration)
  bool operator==(const CopyRecord&) const = default;
};

[[nodiscard]] nlohmann::json to_json(const CopyRecord& record);

}  // namespace acco::transfer
