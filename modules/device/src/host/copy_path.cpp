#include "host/copy_path.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>

#include <fmt/format.h>

namespace acco::device::host {
namespace {

struct End {
  MemoryKind kind = MemoryKind::kPageable;
  std::shared_ptr<DeviceCore> device;  // for kDevice
};

Result<End> classify(const AddressSpace& space, const void* ptr, std::size_t bytes,
                     const char* which) {
  const std::optional<AddressSpace::Range> range = space.find(ptr);
  if (!range) {
    return End{};
  }
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  if (bytes <= range->end() - address) {
    return End{range->kind, range->kind == MemoryKind::kDevice ? range->owner : nullptr};
  }
  // The driver pins what it needs of a partly registered range itself, i.e. stages it.
  if (range->kind == MemoryKind::kRegistered) {
    return End{};
  }
  return fail(Errc::kInvalidArgument,
              fmt::format("{} runs {} bytes past the end of a {}-byte {} allocation", which,
                          bytes - (range->end() - address), range->size, to_string(range->kind)));
}

bool is_device(const End& end) {
  return end.kind == MemoryKind::kDevice;
}

bool is_dma_capable(const End& end) {
  return end.kind == MemoryKind::kPinned || end.kind == MemoryKind::kRegistered ||
         end.kind == MemoryKind::kMapped;
}

CopyPlan::Path choose_path(const End& dst, const End& src) {
  using Path = CopyPlan::Path;
  if (is_device(src) && is_device(dst)) {
    return src.device == dst.device ? Path::kMemcpy : Path::kBetweenDevices;
  }
  if (is_device(dst)) {
    return is_dma_capable(src) ? Path::kToDevice : Path::kStagedToDevice;
  }
  if (is_device(src)) {
    return is_dma_capable(dst) ? Path::kToHost : Path::kStagedToHost;
  }
  return Path::kMemcpy;
}

}  // namespace

Result<CopyPlan> plan_copy(const AddressSpace& space, void* dst, const void* src,
                           std::size_t bytes) {
  if (dst == nullptr || src == nullptr) {
    return fail(Errc::kInvalidArgument, fmt::format("copy of {} bytes: null {}", bytes,
                                                    dst == nullptr ? "destination" : "source"));
  }
  ACCO_ASSIGN_OR_RETURN(End dst_end, classify(space, dst, bytes, "destination"),
                        fmt::format("copy of {} bytes", bytes));
  ACCO_ASSIGN_OR_RETURN(End src_end, classify(space, src, bytes, "source"),
                        fmt::format("copy of {} bytes", bytes));
  // Ranges are checked first: a range past its allocation's end may reach a neighbour.
  const auto d = reinterpret_cast<std::uintptr_t>(dst);
  const auto s = reinterpret_cast<std::uintptr_t>(src);
  if ((d >= s ? d - s : s - d) < bytes) {
    return fail(
        Errc::kInvalidArgument,
        fmt::format("copy of {} bytes: source {} and destination {} overlap", bytes, src, dst));
  }
  return CopyPlan{choose_path(dst_end, src_end), dst, src, bytes, std::move(src_end.device),
                  std::move(dst_end.device)};
}

void run_copy(const CopyPlan& plan, std::span<std::byte> bounce,
              const std::function<void()>& source_consumed) {
  using Path = CopyPlan::Path;
  auto* dst = static_cast<std::byte*>(plan.dst);
  const auto* src = static_cast<const std::byte*>(plan.src);
  switch (plan.path) {
    case Path::kMemcpy:
      std::memcpy(dst, src, plan.bytes);
      source_consumed();
      return;
    case Path::kToDevice:
      plan.dst_device->to_device.transfer(dst, src, plan.bytes);
      source_consumed();
      return;
    case Path::kToHost:
      plan.src_device->to_host.transfer(dst, src, plan.bytes);
      source_consumed();
      return;
    case Path::kBetweenDevices:
      transfer_through_host(plan.src_device->to_host, plan.dst_device->to_device, dst, src,
                            plan.bytes);
      source_consumed();
      return;
    case Path::kStagedToDevice:
      // Like the CUDA driver: copy a chunk into pinned memory, DMA it, then the next chunk, with
      // no overlap between the two. This is the baseline the transfer engine's pipeline beats.
      for (std::size_t offset = 0; offset < plan.bytes; offset += bounce.size()) {
        const std::size_t chunk = std::min(bounce.size(), plan.bytes - offset);
        std::memcpy(bounce.data(), src + offset, chunk);
        if (offset + chunk == plan.bytes) {
          source_consumed();
        }
        plan.dst_device->to_device.transfer(dst + offset, bounce.data(), chunk);
      }
      return;
    case Path::kStagedToHost:
      for (std::size_t offset = 0; offset < plan.bytes; offset += bounce.size()) {
        const std::size_t chunk = std::min(bounce.size(), plan.bytes - offset);
        plan.src_device->to_host.transfer(bounce.data(), src + offset, chunk);
        std::memcpy(dst + offset, bounce.data(), chunk);
      }
      source_consumed();
      return;
  }
}

}  // namespace acco::device::host
