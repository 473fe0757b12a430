#include "cuda/cuda_device.hpp"

#include <string>
#include <utility>

#include "cuda/cuda_buffer.hpp"
#include "cuda/cuda_queue.hpp"

namespace acco::device::detail {

CudaDevice::CudaDevice(DeviceInfo info, bool can_map_host,
                       std::shared_ptr<const PrimaryContext> context,
                       std::shared_ptr<AllocationTable> table)
    : info_(std::move(info)),
      can_map_host_(can_map_host),
      context_(std::move(context)),
      table_(std::move(table)) {}

Result<std::unique_ptr<Buffer>> CudaDevice::allocate(std::size_t bytes) {
  ACCO_RETURN_IF_ERROR(context_->make_current(), context_->where("allocate"));
  ACCO_ASSIGN_OR_RETURN(auto buffer, allocate_device_buffer(table_, context_, bytes),
                        context_->name());
  return buffer;
}

Result<std::unique_ptr<Buffer>> CudaDevice::allocate_host(std::size_t bytes, MemoryKind kind) {
  if (kind == MemoryKind::kMapped && !can_map_host_) {
    return fail(Errc::kUnsupported, info_.name + " cannot map host memory");
  }
  ACCO_RETURN_IF_ERROR(context_->make_current(), context_->where("allocate_host"));
  ACCO_ASSIGN_OR_RETURN(auto buffer,
                        allocate_host_buffer(table_, context_, bytes, kind, info_.numa_node),
                        context_->name());
  return buffer;
}

Result<std::unique_ptr<Registration>> CudaDevice::register_host(void* ptr, std::size_t bytes) {
  ACCO_RETURN_IF_ERROR(context_->make_current(), context_->where("register_host"));
  ACCO_ASSIGN_OR_RETURN(auto registration, register_host_memory(table_, context_, ptr, bytes),
                        context_->name());
  return registration;
}

Result<std::unique_ptr<Queue>> CudaDevice::create_queue() {
  ACCO_RETURN_IF_ERROR(context_->make_current(), context_->where("create_queue"));
  return create_cuda_queue(context_, table_);
}

Status CudaDevice::copy(void* dst, const void* src, std::size_t bytes) {
  ACCO_RETURN_IF_ERROR(validate_copy(*table_, dst, src, bytes), context_->name());
  if (bytes == 0) {
    return {};
  }
  ACCO_RETURN_IF_ERROR(context_->make_current(), context_->where("device copy"));
  // Unified addressing tells the direction from the addresses, as cudaMemcpyDefault did.
  ACCO_RETURN_IF_ERROR(
      context_->driver().check("cuMemcpy",
                               context_->api().memcpy(reinterpret_cast<CUdeviceptr>(dst),
                                                      reinterpret_cast<CUdeviceptr>(src), bytes)),
      context_->where("device copy"));
  // cuMemcpy may return before the copy is done (device to device: no host synchronisation;
  // pageable host to device: once the data is staged), while Device::copy promises a finished
  // copy. It runs on the legacy default stream (handle 0): waiting for that stream waits for it,
  // and not for the queues, which are non-blocking streams.
  ACCO_RETURN_IF_ERROR(
      context_->driver().check("cuStreamSynchronize", context_->api().stream_synchronize(nullptr)),
      context_->where("device copy"));
  return {};
}

MemoryKind CudaDevice::kind_of(const void* ptr) const {
  if (const auto entry = table_->find(ptr)) {
    return entry->kind;
  }
  // Not ours: ask the driver, which answers CUDA_ERROR_INVALID_VALUE for memory it does not know
  // (pageable). It cannot tell pinned from mapped from registered, and under unified addressing
  // every page-locked allocation is device-addressable anyway, so page-locked memory from
  // elsewhere reads as pinned. Managed memory is addressable from both sides without a copy,
  // which is what kMapped promises callers.
  const auto address = reinterpret_cast<CUdeviceptr>(ptr);
  const DriverApi& api = context_->api();
  unsigned int managed = 0;
  if (api.pointer_get_attribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, address) ==
          CUDA_SUCCESS &&
      managed != 0) {
    return MemoryKind::kMapped;
  }
  unsigned int type = 0;
  if (api.pointer_get_attribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, address) != CUDA_SUCCESS) {
    return MemoryKind::kPageable;
  }
  switch (type) {
    case CU_MEMORYTYPE_DEVICE:
      return MemoryKind::kDevice;
    case CU_MEMORYTYPE_HOST:
      return MemoryKind::kPinned;
    case CU_MEMORYTYPE_UNIFIED:
      return MemoryKind::kMapped;
    default:
      break;
  }
  return MemoryKind::kPageable;
}

}  // namespace acco::device::detail
