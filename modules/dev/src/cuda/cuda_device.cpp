#include "cuda/cuda_device.hpp"

#include <string>
#include <utility>

#include "cuda/cuda_buffer.hpp"
#include "cuda/cuda_error.hpp"
#include "cuda/cuda_queue.hpp"

namespace acco::dev::detail {

CudaDevice::CudaDevice(DeviceInfo info, bool can_map_host, std::shared_ptr<AllocationTable> table)
    : info_(std::move(info)), can_map_host_(can_map_host), table_(std::move(table)) {}

Status CudaDevice::select() const {
  return cuda_check("cudaSetDevice", cudaSetDevice(info_.index));
}

Result<std::unique_ptr<Buffer>> CudaDevice::allocate(std::size_t bytes) {
  ACCO_RETURN_IF_ERROR(select(), "allocate");
  return allocate_device_buffer(table_, info_.index, bytes);
}

Result<std::unique_ptr<Buffer>> CudaDevice::allocate_host(std::size_t bytes, MemoryKind kind) {
  if (kind == MemoryKind::kMapped && !can_map_host_) {
    return fail(Errc::kUnsupported, info_.name + " cannot map host memory");
  }
  ACCO_RETURN_IF_ERROR(select(), "allocate_host");
  return allocate_host_buffer(table_, bytes, kind, info_.numa_node);
}

Result<std::unique_ptr<Registration>> CudaDevice::register_host(void* ptr, std::size_t bytes) {
  ACCO_RETURN_IF_ERROR(select(), "register_host");
  return register_host_memory(table_, ptr, bytes);
}

Result<std::unique_ptr<Queue>> CudaDevice::create_queue() {
  ACCO_RETURN_IF_ERROR(select(), "create_queue");
  return create_cuda_queue(info_.index, table_);
}

Status CudaDevice::copy(void* dst, const void* src, std::size_t bytes) {
  ACCO_RETURN_IF_ERROR(validate_copy(*table_, dst, src, bytes), "device");
  if (bytes == 0) {
    return {};
  }
  ACCO_RETURN_IF_ERROR(select(), "device copy");
  ACCO_RETURN_IF_ERROR(cuda_check("cudaMemcpy", cudaMemcpy(dst, src, bytes, cudaMemcpyDefault)),
                       "device copy");
  return {};
}

MemoryKind CudaDevice::kind_of(const void* ptr) const {
  if (const auto entry = table_->find(ptr)) {
    return entry->kind;
  }
  // Not ours: ask the runtime. It cannot tell pinned from mapped from registered, and under
  // unified addressing every page-locked allocation is device-addressable anyway, so page-locked
  // memory from elsewhere reads as pinned. Managed memory is addressable from both sides without
  // a copy, which is what kMapped promises callers.
  cudaPointerAttributes attributes{};
  if (const cudaError_t code = cudaPointerGetAttributes(&attributes, ptr); code != cudaSuccess) {
    static_cast<void>(cudaGetLastError());
    return MemoryKind::kPageable;
  }
  switch (attributes.type) {
    case cudaMemoryTypeDevice:
      return MemoryKind::kDevice;
    case cudaMemoryTypeHost:
      return MemoryKind::kPinned;
    case cudaMemoryTypeManaged:
      return MemoryKind::kMapped;
    case cudaMemoryTypeUnregistered:
      break;
  }
  return MemoryKind::kPageable;
}

}  // namespace acco::dev::detail
