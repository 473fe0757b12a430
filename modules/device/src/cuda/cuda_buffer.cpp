#include "cuda/cuda_buffer.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>

#include <unistd.h>

#include "cuda/numa_placement.hpp"

namespace acco::device::detail {
namespace {

std::size_t page_size() {
  const long size = sysconf(_SC_PAGESIZE);
  return size > 0 ? static_cast<std::size_t>(size) : 4096;
}

class CudaBuffer final : public Buffer {
 public:
  CudaBuffer(std::shared_ptr<AllocationTable> table, std::shared_ptr<const PrimaryContext> context,
             void* data, std::size_t size, MemoryKind kind)
      : table_(std::move(table)),
        context_(std::move(context)),
        data_(data),
        size_(size),
        kind_(kind) {
    table_->insert({static_cast<const std::byte*>(data_), size_, kind_});
  }
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;

  // Out of the table first, so an allocation that reuses the address cannot be erased by us.
  // Free errors cannot be reported from a destructor; a sticky one shows in the next call.
  ~CudaBuffer() override {
    table_->erase(data_);
    switch (kind_) {
      case MemoryKind::kDevice:
        static_cast<void>(context_->make_current());
        static_cast<void>(context_->api().mem_free(reinterpret_cast<CUdeviceptr>(data_)));
        break;
      case MemoryKind::kPinned:
      case MemoryKind::kMapped:
        static_cast<void>(context_->make_current());
        static_cast<void>(context_->api().mem_free_host(data_));
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
  std::shared_ptr<const PrimaryContext> context_;  // keeps the driver's context alive until freed
  void* data_;
  std::size_t size_;
  MemoryKind kind_;
};

class CudaRegistration final : public Registration {
 public:
  CudaRegistration(std::shared_ptr<AllocationTable> table,
                   std::shared_ptr<const PrimaryContext> context, void* data, std::size_t size,
                   std::chrono::nanoseconds pin_time)
      : table_(std::move(table)),
        context_(std::move(context)),
        data_(data),
        size_(size),
        pin_time_(pin_time) {
    table_->insert({static_cast<const std::byte*>(data_), size_, MemoryKind::kRegistered});
  }
  CudaRegistration(const CudaRegistration&) = delete;
  CudaRegistration& operator=(const CudaRegistration&) = delete;
  ~CudaRegistration() override {
    table_->erase(data_);
    static_cast<void>(context_->make_current());
    static_cast<void>(context_->api().mem_host_unregister(data_));
  }

  [[nodiscard]] void* data() const override { return data_; }
  [[nodiscard]] std::size_t size() const override { return size_; }
  [[nodiscard]] std::chrono::nanoseconds pin_time() const override { return pin_time_; }

 private:
  std::shared_ptr<AllocationTable> table_;
  std::shared_ptr<const PrimaryContext> context_;
  void* data_;
  std::size_t size_;
  std::chrono::nanoseconds pin_time_;
};

}  // namespace

Result<std::unique_ptr<Buffer>> allocate_device_buffer(
    std::shared_ptr<AllocationTable> table, std::shared_ptr<const PrimaryContext> context,
    std::size_t bytes) {
  if (bytes == 0) {
    return fail(Errc::kInvalidArgument, "allocate: 0 bytes");
  }
  CUdeviceptr data = 0;
  if (const CUresult code = context->api().mem_alloc(&data, bytes); code != CUDA_SUCCESS) {
    return tl::unexpected(context->driver()
                              .error("cuMemAlloc_v2", code)
                              .with_context("allocate " + std::to_string(bytes) + " bytes"));
  }
  // Unified addressing (every 64-bit platform the driver supports): a device address is a
  // pointer no host allocation aliases.
  return std::make_unique<CudaBuffer>(std::move(table), std::move(context),
                                      reinterpret_cast<void*>(data), bytes, MemoryKind::kDevice);
}

Result<std::unique_ptr<Buffer>> allocate_host_buffer(std::shared_ptr<AllocationTable> table,
                                                     std::shared_ptr<const PrimaryContext> context,
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
      // cuMemHostAlloc pins, so populates, at once: the policy must be in place during the call.
      const ScopedPreferredNode prefer(numa_node);
      // Portable: the backend's table tells every device this memory is pinned, so it must be
      // pinned for every device's context, not only the allocating one.
      const unsigned flags =
          CU_MEMHOSTALLOC_PORTABLE | (kind == MemoryKind::kMapped ? CU_MEMHOSTALLOC_DEVICEMAP : 0U);
      if (const CUresult code = context->api().mem_host_alloc(&data, bytes, flags);
          code != CUDA_SUCCESS) {
        return tl::unexpected(context->driver().error("cuMemHostAlloc", code).with_context(where));
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
  return std::make_unique<CudaBuffer>(std::move(table), std::move(context), data, bytes, kind);
}

Result<std::unique_ptr<Registration>> register_host_memory(
    std::shared_ptr<AllocationTable> table, std::shared_ptr<const PrimaryContext> context,
    void* ptr, std::size_t bytes) {
  const std::string where = "register_host " + std::to_string(bytes) + " bytes";
  if (ptr == nullptr || bytes == 0) {
    return fail(Errc::kInvalidArgument, where + ": null pointer or 0 bytes");
  }
  if (table->find_overlap(ptr, bytes, MemoryKind::kRegistered)) {
    return fail(Errc::kInvalidArgument, where + ": overlaps another registration");
  }
  const auto start = std::chrono::steady_clock::now();
  const CUresult code = context->api().mem_host_register(ptr, bytes, CU_MEMHOSTREGISTER_PORTABLE);
  const auto pin_time = std::chrono::steady_clock::now() - start;
  if (code == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) {
    // Pinned by someone else (another registration racing this one, a buffer of this backend,
    // or code outside acco): the caller's mistake, not the device's.
    return tl::unexpected(context->driver()
                              .error("cuMemHostRegister_v2", code, Errc::kInvalidArgument)
                              .with_context(where));
  }
  if (code != CUDA_SUCCESS) {
    return tl::unexpected(
        context->driver().error("cuMemHostRegister_v2", code).with_context(where));
  }
  return std::make_unique<CudaRegistration>(
      std::move(table), std::move(context), ptr, bytes,
      std::chrono::duration_cast<std::chrono::nanoseconds>(pin_time));
}

}  // namespace acco::device::detail
