// The case classes, registered in registry.cpp.
#pragma once

#include <memory>

#include "acco/bench/case.hpp"
#include "acco/device/device.hpp"

namespace acco::bench::detail {

enum class CopyDirection {
  kHostToDevice,
  kDeviceToHost
};
enum class CopyPath {
  kPlain,
  kEngine
};

// Host<->device copies of one memory kind, through the plain API or the transfer engine.
[[nodiscard]] std::unique_ptr<Case> host_device_case(CopyDirection direction,
                                                     device::MemoryKind kind, CopyPath path);
// Both directions at once on pinned memory, one result per direction.
[[nodiscard]] std::unique_ptr<Case> bidirectional_case();
// Device memory to device memory on one device.
[[nodiscard]] std::unique_ptr<Case> device_local_case();
// Every ordered pair of devices.
[[nodiscard]] std::unique_ptr<Case> peer_matrix_case();
// API latency of a small pinned copy, submit to completion.
[[nodiscard]] std::unique_ptr<Case> latency_case(CopyDirection direction);
// Pinned host-to-device over sizes from 4 KiB up; finds the size reaching half of peak.
[[nodiscard]] std::unique_ptr<Case> sweep_case();
// Many 4 KiB copies, batched by the engine or one by one.
[[nodiscard]] std::unique_ptr<Case> small_copies_case(bool batched);
// Host memcpy: the host-side limit for staging.
[[nodiscard]] std::unique_ptr<Case> host_memcpy_case();

// The storage suite (acco bench --suite storage): the file read into host staging by acco's
// reader and by fio over a sweep of block sizes and depths, and into device memory by the
// reader's pipeline against the naive read-then-copy.
[[nodiscard]] std::unique_ptr<Case> storage_read_case();
[[nodiscard]] std::unique_ptr<Case> storage_to_device_case();

// Device-level cases (every pair) run once per backend, not once per device.
[[nodiscard]] bool runs_once_per_backend(const Case& c);

}  // namespace acco::bench::detail
