// What a transfer engine has moved since it started: bytes and copies per direction and the
// batches submitted. A plain value read from the engine's relaxed atomic counters, for the
// monitoring daemon's /metrics (acco_transfer_bytes_total) and for tests.
#pragma once

#include <cstdint>

#include "acco/transfer/strategy.hpp"

namespace acco::transfer {

struct DirectionCounters {
  std::uint64_t bytes = 0;
  std::uint64_t copies = 0;  // copies, or batch items, of this direction
  bool operator==(const DirectionCounters&) const = default;
};

struct EngineCounters {
  DirectionCounters host_to_host;
  DirectionCounters host_to_device;
  DirectionCounters device_to_host;
  DirectionCounters device_to_device;
  std::uint64_t batches = 0;  // non-empty Batch::submit calls that succeeded

  [[nodiscard]] const DirectionCounters& of(Direction direction) const {
    switch (direction) {
      case Direction::kHostToHost:
        return host_to_host;
      case Direction::kHostToDevice:
        return host_to_device;
      case Direction::kDeviceToHost:
        return device_to_host;
      case Direction::kDeviceToDevice:
        break;
    }
    return device_to_device;
  }
  [[nodiscard]] DirectionCounters& of(Direction direction) {
    return const_cast<DirectionCounters&>(  // NOLINT(cppcoreguidelines-pro-type-const-cast)
        static_cast<const EngineCounters&>(*this).of(direction));
  }
  // Bytes of every direction.
  [[nodiscard]] std::uint64_t bytes() const {
    return host_to_host.bytes + host_to_device.bytes + device_to_host.bytes +
           device_to_device.bytes;
  }
  EngineCounters& operator+=(const EngineCounters& other) {
    for (const Direction d : {Direction::kHostToHost, Direction::kHostToDevice,
                              Direction::kDeviceToHost, Direction::kDeviceToDevice}) {
      of(d).bytes += other.of(d).bytes;
      of(d).copies += other.of(d).copies;
    }
    batches += other.batches;
    return *this;
  }
  bool operator==(const EngineCounters&) const = default;
};

}  // namespace acco::transfer
