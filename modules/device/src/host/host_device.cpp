#include "host/host_device.hpp"

#include <chrono>
#include <cstdint>
#include <utility>

#include <fmt/format.h>

#include "host/pages.hpp"

namespace acco::device::host {
namespace {

class HostBuffer final : public Buffer {
 public:
  // `space` is null for pageable memory, which the backend does not track; `budget` is set for
  // device memory, whose pages return to the device's budget.
  HostBuffer(Pages pages, std::size_t size, MemoryKind kind, std::shared_ptr<AddressSpace> space,
             std::shared_ptr<DeviceCore> budget)
      : pages_(std::move(pages)),
        size_(size),
        kind_(kind),
        space_(std::move(space)),
        budget_(std::move(budget)) {}
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer() override {
    if (space_) {
      space_->erase(pages_.get());
    }
    if (budget_) {
      budget_->release_memory(round_up_to_pages(size_));
    }
  }

  [[nodiscard]] void* data() const override { return pages_.get(); }
  [[nodiscard]] std::size_t size() const override { return size_; }
  [[nodiscard]] MemoryKind kind() const override { return kind_; }
  [[nodiscard]] bool host_accessible() const override { return true; }

 private:
  Pages pages_;
  std::size_t size_;
  MemoryKind kind_;
  std::shared_ptr<AddressSpace> space_;
  std::shared_ptr<DeviceCore> budget_;
};

class HostRegistration final : public Registration {
 public:
  HostRegistration(void* data, std::size_t size, std::chrono::nanoseconds pin_time,
                   std::shared_ptr<AddressSpace> space)
      : data_(data), size_(size), pin_time_(pin_time), space_(std::move(space)) {}
  HostRegistration(const HostRegistration&) = delete;
  HostRegistration& operator=(const HostRegistration&) = delete;
  ~HostRegistration() override { space_->erase(data_); }

  [[nodiscard]] void* data() const override { return data_; }
  [[nodiscard]] std::size_t size() const override { return size_; }
  [[nodiscard]] std::chrono::nanoseconds pin_time() const override { return pin_time_; }

 private:
  void* data_;
  std::size_t size_;
  std::chrono::nanoseconds pin_time_;
  std::shared_ptr<AddressSpace> space_;
};

// Pinning faults in and locks every page; reading each page once pays the fault-in part, which is
// most of the cost for memory not touched yet. Reads only, so the contents stay as they are.
void touch_pages(const void* ptr, std::size_t bytes) {
  const auto* bytes_ptr = static_cast<const volatile std::byte*>(ptr);
  const std::size_t page = page_size();
  const std::size_t first_boundary =
      page - static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(ptr) % page);
  (void)bytes_ptr[0];
  for (std::size_t offset = first_boundary; offset < bytes; offset += page) {
    (void)bytes_ptr[offset];
  }
}

}  // namespace

HostDevice::HostDevice(DeviceInfo info, const EmulatedLink& link,
                       std::shared_ptr<AddressSpace> space)
    : core_(std::make_shared<DeviceCore>(std::move(info), link)), space_(std::move(space)) {}

Result<std::unique_ptr<Buffer>> HostDevice::allocate(std::size_t bytes) {
  const auto where = [&] { return fmt::format("{}: allocate {} bytes", core_->info.name, bytes); };
  if (bytes == 0) {
    return fail(Errc::kInvalidArgument, where() + ": size is zero");
  }
  const std::size_t rounded = round_up_to_pages(bytes);
  if (rounded < bytes) {
    return fail(Errc::kDeviceError, where() + ": out of device memory: size too large");
  }
  ACCO_RETURN_IF_ERROR(core_->reserve_memory(rounded), where());
  Pages pages = allocate_pages(bytes);
  if (!pages) {
    core_->release_memory(rounded);
    return fail(Errc::kDeviceError, where() + ": out of device memory: the host has no more RAM");
  }
  if (Status inserted = space_->insert(pages.get(), bytes, MemoryKind::kDevice, core_); !inserted) {
    core_->release_memory(rounded);
    return tl::unexpected(std::move(inserted.error()).with_context(where()));
  }
  return std::make_unique<HostBuffer>(std::move(pages), bytes, MemoryKind::kDevice, space_, core_);
}

Result<std::unique_ptr<Buffer>> HostDevice::allocate_host(std::size_t bytes, MemoryKind kind) {
  const auto where = [&] {
    return fmt::format("{}: allocate {} bytes of {} host memory", core_->info.name, bytes,
                       to_string(kind));
  };
  if (kind != MemoryKind::kPageable && kind != MemoryKind::kPinned && kind != MemoryKind::kMapped) {
    return fail(Errc::kInvalidArgument, where() + ": kind must be pageable, pinned or mapped");
  }
  if (bytes == 0) {
    return fail(Errc::kInvalidArgument, where() + ": size is zero");
  }
  Pages pages = allocate_pages(bytes);
  if (!pages) {
    return fail(Errc::kDeviceError, where() + ": out of host memory");
  }
  if (kind == MemoryKind::kPageable) {
    return std::make_unique<HostBuffer>(std::move(pages), bytes, kind, nullptr, nullptr);
  }
  // Not locked: the emulation needs no DMA, and locking gigabytes would need CAP_IPC_LOCK. Being
  // known by address is what makes the memory pinned here.
  ACCO_RETURN_IF_ERROR(space_->insert(pages.get(), bytes, kind, core_), where());
  return std::make_unique<HostBuffer>(std::move(pages), bytes, kind, space_, nullptr);
}

Result<std::unique_ptr<Registration>> HostDevice::register_host(void* ptr, std::size_t bytes) {
  const auto where = [&] {
    return fmt::format("{}: register {} bytes at {}", core_->info.name, bytes, ptr);
  };
  if (ptr == nullptr || bytes == 0) {
    return fail(Errc::kInvalidArgument,
                where() + (ptr == nullptr ? ": null pointer" : ": size is zero"));
  }
  const auto start = std::chrono::steady_clock::now();
  ACCO_RETURN_IF_ERROR(space_->insert(ptr, bytes, MemoryKind::kRegistered, core_), where());
  touch_pages(ptr, bytes);
  const auto pin_time = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::steady_clock::now() - start);
  return std::make_unique<HostRegistration>(ptr, bytes, pin_time, space_);
}

Result<std::unique_ptr<Queue>> HostDevice::create_queue() {
  ACCO_ASSIGN_OR_RETURN(std::unique_ptr<HostQueue> queue, HostQueue::create(core_, space_));
  return std::unique_ptr<Queue>(std::move(queue));
}

Status HostDevice::copy(void* dst, const void* src, std::size_t bytes) {
  // One internal queue, like the legacy default stream: concurrent plain copies take turns.
  const std::lock_guard lock(copy_mutex_);
  if (!copy_queue_) {
    ACCO_ASSIGN_OR_RETURN(copy_queue_, HostQueue::create(core_, space_));
  }
  ACCO_RETURN_IF_ERROR(copy_queue_->copy(dst, src, bytes));
  return copy_queue_->synchronize();
}

MemoryKind HostDevice::kind_of(const void* ptr) const {
  const std::optional<AddressSpace::Range> range = space_->find(ptr);
  return range ? range->kind : MemoryKind::kPageable;
}

}  // namespace acco::device::host
