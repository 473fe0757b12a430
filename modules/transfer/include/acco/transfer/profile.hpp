// The transfer engine's tunables: staging chunk and slot count, copy queues, host copy threads
// and the size thresholds that choose a strategy. The defaults suit a PCIe host; `acco tune`
// measures a machine and saves a Profile as JSON, which load_profile reads back.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "acco/core/result.hpp"
#include "acco/device/device.hpp"

namespace acco::transfer {

inline constexpr const char* kProfileSchema = "acco.xfer-profile/1";

struct Profile {
  // Bytes per staging slot, which is also the pipeline's chunk. Production stacks use 512 KiB to
  // 8 MiB (NCCL steps of 512 KiB, lupine's 4-8 MiB slots; transfer.md c.7): 4 MiB keeps the
  // per-chunk overhead below 1% at 25 GB/s while a few slots stay small.
  std::size_t chunk_bytes = std::size_t{4} << 20;
  // Staging slots: two already overlap a host copy with a DMA; four absorb jitter (c.7).
  int slots = 4;
  // Copy queues; two lets a host-to-device and a device-to-host copy run at once (idea 15).
  int queues = 2;
  // Threads for host-side copies (staging), the caller included. 0 = as many as the link needs,
  // judged from the single-thread memcpy rate the engine measures when it starts.
  int host_copy_threads = 0;
  // Batch::submit packs items smaller than this; larger ones go as copies of their own.
  std::size_t batch_below_bytes = std::size_t{64} << 10;
  // Direct copies larger than this are spread over all queues (pipelined copies use one: their
  // overlap comes from the slots).
  std::size_t split_above_bytes = std::size_t{64} << 20;
  // Copies smaller than this are done by the CPU through a host mapping of device memory when the
  // device has one: a queued DMA costs microseconds of setup, a CPU store of 16 KiB less
  // (gdrcopy-style writes take ~0.5 us; transfer.md idea 13).
  std::size_t zero_copy_below_bytes = std::size_t{16} << 10;
  // Pin a pageable user buffer in place once the engine has seen it this many times, after which
  // it moves by direct DMA. 0 = never. Off by default because the engine cannot know when the
  // caller frees the buffer: see Engine::forget.
  int register_after_uses = 0;
  // Pageable host memory is staged through the engine's pinned slots (kPipelined). false = hand
  // it to the device's own copy (kDirect; the driver stages it as cudaMemcpy does), which `acco
  // tune` chooses where that measured faster: on the host backend, where every emulated DMA is a
  // memcpy, the engine's staging costs a second memcpy and one CPU thread bounds both.
  bool stage_pageable = true;

  bool operator==(const Profile&) const = default;
};

// The engine's defaults for `device`, what Engine::create(device) uses when no profile is given:
// Profile{}, but with stage_pageable off where the device's DMAs are host memcpys (the host
// backend). There the engine's staging is a second copy through slots too large for the cache,
// on top of the DMA's own, while the device's plain copy stages through a bounce buffer that stays
// in the cache: on a 2-vCPU VM, 64 MiB pageable host-to-device moved 6.1-6.8 GB/s plain and
// 5.1 GB/s staged (issue 33). On a GPU the copy engine does the DMA and staging wins. Pure.
[[nodiscard]] Profile default_profile(const device::DeviceInfo& device);

// kInvalidArgument naming the first field out of range.
[[nodiscard]] Status validate(const Profile& profile);

// {"schema": "acco.xfer-profile/1", "chunk_bytes": ..., ...}: every field, always.
[[nodiscard]] nlohmann::json to_json(const Profile& profile);
// Missing fields keep their defaults. kInvalidArgument naming the field for an unknown field, a
// wrong type, a negative or out-of-range value, or a wrong schema.
[[nodiscard]] Result<Profile> profile_from_json(const nlohmann::json& j);

// kNotFound when the file is absent; kInvalidArgument (prefixed with the path) when malformed.
[[nodiscard]] Result<Profile> load_profile(const std::string& path);
// Writes atomically; kInvalidArgument when the profile does not validate, kNotFound or
// kUnavailable when the file cannot be written.
[[nodiscard]] Status save_profile(const std::string& path, const Profile& profile);

}  // namespace acco::transfer
