#include "cuda/cuda_buffer.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>

#include <unistd.h>

#include "cuda/cuda_error.hpp"
#include "cuda/numa_placement.hpp"

namespace acco::dev::detail {
namespace {

std::size_t page_size() {
  const long size = sysconf(_SC_PAGESIZE);
  return size > 0 ? static_cast<std::size_t>(size) : 4096;
}

class CudaBuffer final : public Buffer {
 public:
  CudaBuffer(std::shared_ptr<AllocationTable> table, int device, void* data, std::size_t size,
             MemoryKind kind)
      : table_(std::move(table)), device_(device), data_(data), size_(size), kind_(kind) {
    table_->insert({static_cast<const std::byte*>(data_), size_, kind_});
  }
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;

  // Out of the table first, so an allocation that reuses the address cannot be erased by us.
  // Free errors cannot be reported from a destructor; the runtime keeps them for the next call.
  ~CudaBuffer() override {
    table_->erase(data_);
    switch (kind_) {
      case MemoryKind::kDevice:
        static_cast<void>(cudaSetDevice(device_));
        static_cast<void>(cudaFree(data_));
        break;
      case MemoryKind::kPinned:
      case MemoryKind::kMapped:
        static_cast<void>(cudaFreeHost(data_));
        break;
      case MemoryKind::kPageable:
      case MemoryKind::kRegistered:
        std::free(data_);
        break;
    }
  }

  [[nodiscard]] void* data() const override { return data_; }
  [[nodiscard]] std::size_t size() const override { return size_; }
  [[nodiscard]] MemoryKind kind() const override { return kind_; }
  [[nodiscard]] bool host_accessible() const override { return kind_ != MemoryKind::kDevice; }

 private:
  std::shared_ptr<AllocationTable> table_;
  int device_;
  void* data_;
  std::size_t size_;
  MemoryKind kind_;
};

class CudaRegistration final : public Registration {
 public:
  CudaRegistration(std::shared_ptr<AllocationTable> table, void* data, std::size_t size,
                   std::chrono::nanoseconds pin_time)
      : table_(std::move(table)), data_(data), size_(size), pin_time_(pin_time) {
    table_->insert({static_cast<const std::byte*>(data_), size_, MemoryKind::kRegistered});
  }
  CudaRegistration(const CudaRegistration&) = delete;
  CudaRegistration& operator=(const CudaRegistration&) = delete;
  ~CudaRegistration() override {
    table_->erase(data_);
    static_cast<void>(cudaHostUnregister(data_));
  }

  [[nodiscard]] void* data() const override { return data_; }
  [[nodiscard]] std::size_t size() const override { return size_; }
  [[nodiscard]] std::chrono::nanoseconds pin_time() const override { return pin_time_; }

 private:
  std::shared_ptr<AllocationTable> table_;
  void* data_;
  std::size_t size_;
  std::chrono::nanoseconds pin_time_;
};

}  // namespace

Result<std::unique_ptr<Buffer>> allocate_device_buffer(std::shared_ptr<AllocationTable> table,
                                                       int device, std::size_t bytes) {
  if (bytes == 0) {
    return fail(Errc::kInvalidArgument, "allocate: 0 bytes");
  }
  void* data = nullptr;
  if (const cudaError_t code = cudaMalloc(&data, bytes); code != cudaSuccess) {
    return tl::unexpected(cuda_error("cudaMalloc", code)
                              .with_context("allocate " + std::to_string(bytes) + " bytes"));
  }
  return std::make_unique<CudaBuffer>(std::move(table), device, data, bytes, MemoryKind::kDevice);
}

Result<std::unique_ptr<Buffer>> allocate_host_buffer(std::shared_ptr<AllocationTable> table,
                                                     std::size_t bytes, MemoryKind kind,
                                                     int numa_node) {
  const std::string where =
      std::string("allocate_host ") + to_string(kind) + " " + std::to_string(bytes) + " bytes";
  if (bytes == 0) {
    return fail(Errc::kInvalidArgument, where + ": 0 bytes");
  }
  void* data = nullptr;
  switch (kind) {
    case MemoryKind::kPageable: {
      const std::size_t page = page_size();
      if (bytes > SIZE_MAX - page) {
        return fail(Errc::kInvalidArgument, where + ": too large");
      }
      // aligned_alloc wants a multiple of the alignment; the tail of the last page is unused.
      data = std::aligned_alloc(page, (bytes + page - 1) / page * page);
      if (data == nullptr) {
        return fail(Errc::kDeviceError, where + ": aligned_alloc: out of memory");
      }
      prefer_node(data, bytes, numa_node);
      break;
    }
    case MemoryKind::kPinned:
    case MemoryKind::kMapped: {
      // cudaHostAlloc pins, so populates, at once: the policy must be in place during the call.
      const ScopedPreferredNode prefer(numa_node);
      // Portable: the backend's table tells every device this memory is pinned, so it must be
      // pinned for every device's context, not only the allocating one.
      const unsigned flags =
          cudaHostAllocPortable | (kind == MemoryKind::kMapped ? cudaHostAllocMapped : 0U);
      if (const cudaError_t code = cudaHostAlloc(&data, bytes, flags); code != cudaSuccess) {
        return tl::unexpected(cuda_error("cudaHostAlloc", code).with_context(where));
      }
      break;
    }
    case MemoryKind::kDevice:
    case MemoryKind::kRegistered:
      return fail(Errc::kInvalidArgument,
                  where +
                      ": host buffers are pageable, pinned or mapped (use allocate or "
                      "register_host)");
  }
  return std::make_unique<CudaBuffer>(std::move(table), -1, data, bytes, kind);
}

Result<std::unique_ptr<Registration>> register_host_memory(std::shared_ptr<AllocationTable> table,
                                                           void* ptr, std::size_t bytes) {
  const std::string where = "register_host " + std::to_string(bytes) + " bytes";
  if (ptr == nullptr || bytes == 0) {
    return fail(Errc::kInvalidArgument, where + ": null pointer or 0 bytes");
  }
  if (table->find_overlap(ptr, bytes, MemoryKind::kRegistered)) {
    return fail(Errc::kInvalidArgument, where + ": overlaps another registration");
  }
  const auto start = std::chrono::steady_clock::now();
  const cudaError_t code = cudaHostRegister(ptr, bytes, cudaHostRegisterPortable);
  const auto pin_time = std::chrono::steady_clock::now() - start;
  if (code == cudaErrorHostMemoryAlreadyRegistered) {
    // Pinned by someone else (another registration racing this one, a buffer of this backend,
    // or code outside acco): the caller's mistake, not the device's.
    return tl::unexpected(
        cuda_error("cudaHostRegister", code, Errc::kInvalidArgument).with_context(where));
  }
  if (code != cudaSuccess) {
    return tl::unexpected(cuda_error("cudaHostRegister", code).with_context(where));
  }
  return std::make_unique<CudaRegistration>(
      std::move(table), ptr, bytes, std::chrono::duration_cast<std::chrono::nanoseconds>(pin_time));
}

}  // namespace acco::dev::detail
