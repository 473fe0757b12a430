#include "acco/transfer/strategy.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace acco::transfer {
namespace {

constexpr std::array<std::pair<Strategy, std::string_view>, 6> kStrategyNames = {{
    {Strategy::kNone, "none"},
    {Strategy::kHostCopy, "host-copy"},
    {Strategy::kDirect, "direct"},
    {Strategy::kPipelined, "pipelined"},
    {Strategy::kBatched, "batched"},
    {Strategy::kZeroCopy, "zero-copy"},
}};

bool is_dma_capable(device::MemoryKind kind) {
  return kind == device::MemoryKind::kPinned || kind == device::MemoryKind::kRegistered ||
         kind == device::MemoryKind::kMapped;
}

}  // namespace

std::string_view to_string(Strategy strategy) {
  for (const auto& [value, name] : kStrategyNames) {
    if (value == strategy) {
      return name;
    }
  }
  return "unknown";
}

Result<Strategy> strategy_from_string(std::string_view name) {
  for (const auto& [value, known] : kStrategyNames) {
    if (known == name) {
      return value;
    }
  }
  return fail(Errc::kInvalidArgument,
              fmt::format("unknown strategy '{}': expected none, host-copy, direct, pipelined, "
                          "batched or zero-copy",
                          name));
}

std::string_view to_string(Direction direction) {
  switch (direction) {
    case Direction::kHostToHost:
      return "host-to-host";
    case Direction::kHostToDevice:
      return "host-to-device";
    case Direction::kDeviceToHost:
      return "device-to-host";
    case Direction::kDeviceToDevice:
      return "device-to-device";
  }
  return "unknown";
}

Direction direction_of(device::MemoryKind dst, device::MemoryKind src) {
  const bool to_device = dst == device::MemoryKind::kDevice;
  const bool from_device = src == device::MemoryKind::kDevice;
  if (to_device && from_device) {
    return Direction::kDeviceToDevice;
  }
  if (to_device) {
    return Direction::kHostToDevice;
  }
  return from_device ? Direction::kDeviceToHost : Direction::kHostToHost;
}

CopyPlan plan_copy(const CopyShape& shape, const Profile& profile, const DeviceTraits& traits) {
  if (shape.bytes == 0) {
    return {Strategy::kNone, false, 0};
  }
  const int queues = shape.bytes > profile.split_above_bytes ? profile.queues : 1;
  switch (direction_of(shape.dst, shape.src)) {
    case Direction::kHostToHost:
      return {Strategy::kHostCopy, false, 0};
    case Direction::kDeviceToDevice:
      return {Strategy::kDirect, false, queues};
    case Direction::kHostToDevice:
    case Direction::kDeviceToHost:
      break;
  }
  if (traits.device_memory_host_accessible && shape.bytes < profile.zero_copy_below_bytes) {
    return {Strategy::kZeroCopy, false, 0};
  }
  const device::MemoryKind host = shape.dst == device::MemoryKind::kDevice ? shape.src : shape.dst;
  if (is_dma_capable(host)) {
    return {Strategy::kDirect, false, queues};
  }
  if (profile.register_after_uses > 0 && shape.host_buffer_uses >= profile.register_after_uses) {
    return {Strategy::kDirect, true, queues};
  }
  if (!profile.stage_pageable) {
    return {Strategy::kDirect, false, queues};
  }
  return {Strategy::kPipelined, false, 1};
}

nlohmann::json to_json(const CopyRecord& record) {
  return {
      {"strategy", to_string(record.strategy)},
      {"direction", to_string(record.direction)},
      {"dst_kind", device::to_string(record.dst_kind)},
      {"src_kind", device::to_string(record.src_kind)},
      {"bytes", record.bytes},
      {"chunk_bytes", record.chunk_bytes},
      {"chunks", record.chunks},
      {"queues", record.queues},
      {"slots", record.slots},
      {"host_threads", record.host_threads},
      {"items", record.items},
      {"registered", record.registered},
      {"pin_seconds", std::chrono::duration<double>(record.pin_time).count()},
  };
}

}  // namespace acco::transfer
