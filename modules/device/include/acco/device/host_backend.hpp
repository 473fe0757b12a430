// The host backend: emulated devices whose memory lives in RAM and whose copy engines are
// threads. A device can emulate a link (bandwidth per direction and latency, shared by every
// queue that crosses it) and a compute speed factor, so everything above the device layer runs
// and is measured on machines without accelerators.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "acco/core/result.hpp"
#include "acco/device/device.hpp"

namespace acco::device {

struct EmulatedLink {
  std::string name;                     // "pcie4x16", "25GB/s", "unlimited"
  double bytes_per_second = 0;          // per direction; 0 = unlimited (memcpy speed)
  std::chrono::nanoseconds latency{0};  // added to every DMA transfer
  bool operator==(const EmulatedLink&) const = default;
};

// Per-transfer latency of a rated link given without one: a queued DMA on a GPU costs a few
// microseconds from submit to completion (launch, doorbell, completion write), so one-by-one small
// copies on an emulated link cost what they cost on a device. "unlimited" has none.
inline constexpr std::chrono::nanoseconds kDefaultLinkLatency{2000};

// "pcie3x16", "pcie4x16", "pcie5x16", "pcie4x8", ... (encoded rate of that generation and
// width), "unlimited", or explicit figures "25GB/s" (units B/s, kB/s, MB/s, GB/s), each optionally
// followed by a latency: "25GB/s,2us", "pcie4x16,1us", "25GB/s,0us" (ns, us, ms); a rate without
// one gets kDefaultLinkLatency. kInvalidArgument naming the accepted forms otherwise.
// Thread-safe.
[[nodiscard]] Result<EmulatedLink> parse_link(std::string_view spec);

struct HostBackendOptions {
  int devices = 1;
  EmulatedLink link;                                   // the same link for every device
  std::vector<double> speed_factors;                   // per device; missing entries are 1
  std::uint64_t memory_bytes_per_device = 4ULL << 30;  // allocation budget (kDeviceError beyond)
  int copy_engines = 2;                                // DMA engines per direction and device
};

// kInvalidArgument for devices < 1, negative factors or copy_engines < 1 (also: more speed
// factors than devices, a zero factor, a negative link bandwidth or latency).
//
// What the host backend does where the Device contract leaves room:
// - Device methods are thread-safe. Device::copy runs on one internal queue, so concurrent plain
//   copies take turns, like CUDA's legacy default stream.
// - Addresses are known backend-wide, like CUDA's unified addressing: every device recognises
//   pinned, mapped and registered memory, and other devices' memory as kDevice. A copy between
//   two devices crosses the source's device-to-host and the destination's host-to-device channel.
// - Pageable memory moves in 2 MiB chunks, each staged through a pinned buffer then DMA'd, with no
//   overlap. Queue::copy from pageable memory to a device returns once the source has been
//   staged (the caller may reuse it); every other Queue::copy returns at once. A range running
//   past the end of a registration counts as pageable.
// - An operation's error (a host task that throws: kInternal) is returned by every event
//   recorded after it and by the next synchronize(), which clears it; later operations still run.
//   Queue::wait(event) only orders: the event's errors stay with its own queue.
// - Buffers, registrations, queues and events keep what they use alive, so they may outlive their
//   Device and the backend. Destroying a queue first runs what is pending on it.
[[nodiscard]] Result<std::unique_ptr<Backend>> make_host_backend(const HostBackendOptions& options);

}  // namespace acco::device
