// Zero-copy: the CPU loads and stores device memory through its host mapping, with no DMA and no
// queue, so a small copy does not pay the setup and latency every DMA pays (Strategy::kZeroCopy
// says where that mapping exists).
#include <cstring>

#include "engine_core.hpp"

namespace acco::transfer::detail {

Status copy_zero_copy(EngineCore& core, void* dst, const void* src, std::size_t bytes,
                      CopyRecord& record) {
  // No device layer call checks this range, so check here that it ends in device memory.
  const auto* device_end =
      static_cast<const std::byte*>(record.direction == Direction::kHostToDevice ? dst : src);
  if (core.device.kind_of(device_end + bytes - 1) != device::MemoryKind::kDevice) {
    return fail(Errc::kInvalidArgument, "the device range runs past the end of device memory");
  }
  std::memcpy(dst, src, bytes);
  record.host_threads = 1;
  return {};  // complete on return
}

}  // namespace acco::transfer::detail
