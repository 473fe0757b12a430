// The device layer: accelerators as Devices with in-order asynchronous Queues, Events and
// buffers of every memory kind, behind one interface for every backend. The host backend runs
// everywhere (device memory in RAM, copy engines as threads, an optionally emulated link); the
// CUDA backend drives real GPUs. Nothing above this layer knows which one it talks to.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "acco/core/result.hpp"

namespace acco::device {

enum class MemoryKind {
  kDevice,      // memory of one device
  kPageable,    // ordinary host memory (malloc, the stack): not DMA-able, copies are staged
  kPinned,      // page-locked host memory allocated by the backend (cudaHostAlloc)
  kRegistered,  // user host memory pinned in place (cudaHostRegister)
  kMapped,      // pinned host memory the device can address directly (zero-copy)
};
[[nodiscard]] const char* to_string(MemoryKind kind);

// Owns one allocation. Destroying it frees the memory; the caller must make sure no queued
// operation still uses it (synchronize first).
class Buffer {
 public:
  virtual ~Buffer() = default;
  [[nodiscard]] virtual void* data() const = 0;
  [[nodiscard]] virtual std::size_t size() const = 0;
  [[nodiscard]] virtual MemoryKind kind() const = 0;
  // True when the host may read and write data() directly (host kinds always; device memory only
  // on the host backend).
  [[nodiscard]] virtual bool host_accessible() const = 0;
};

// Keeps user memory pinned (MemoryKind::kRegistered) until destroyed.
class Registration {
 public:
  virtual ~Registration() = default;
  [[nodiscard]] virtual void* data() const = 0;
  [[nodiscard]] virtual std::size_t size() const = 0;
  // What pinning cost, so callers can report it and decide whether reuse repays it.
  [[nodiscard]] virtual std::chrono::nanoseconds pin_time() const = 0;
};

// A point in a queue. Complete when every operation submitted before it has finished.
class Event {
 public:
  virtual ~Event() = default;
  // Blocks until complete. Returns the first error of an operation before it in its queue.
  [[nodiscard]] virtual Status wait() = 0;
  [[nodiscard]] virtual bool ready() const = 0;
  // Device-clock time from `earlier` to this event; both must be complete and from the same
  // device. kInvalidArgument otherwise.
  [[nodiscard]] virtual Result<std::chrono::nanoseconds> since(const Event& earlier) const = 0;
};

// In-order and asynchronous: operations run one after another in submission order, concurrently
// with the caller and with other queues. Submission is not thread-safe: one thread per queue.
class Queue {
 public:
  virtual ~Queue() = default;
  // Copies `bytes` from src to dst. The device tells memory kinds apart by address (its own
  // allocations and registrations; anything else is pageable). Pinned, registered and mapped host
  // memory move by DMA at link speed; pageable memory is staged by the backend the way the
  // vendor driver does it (synchronously with respect to the caller for host-to-device).
  // kInvalidArgument for null pointers, overlapping ranges or a range past an allocation's end.
  [[nodiscard]] virtual Status copy(void* dst, const void* src, std::size_t bytes) = 0;
  // Runs `task` on the host in queue order (pipelines use it to order host copies with DMA),
  // exactly once, also when an operation before it failed (the failure reaches events and
  // synchronize): a task may give back what earlier operations used. The task must not call
  // the device layer itself (a GPU driver runs it on a thread of its own).
  [[nodiscard]] virtual Status host_task(std::function<void()> task) = 0;
  [[nodiscard]] virtual Result<std::shared_ptr<Event>> record() = 0;
  // Later operations in this queue start only after `event` (possibly from another queue of the
  // same device) is complete.
  [[nodiscard]] virtual Status wait(std::shared_ptr<Event> event) = 0;
  // Blocks until everything submitted so far is done; returns the first error, if any.
  [[nodiscard]] virtual Status synchronize() = 0;
  // The backend's own stream, for a library that enqueues on it itself (NCCL): this queue's
  // cudaStream_t on CUDA, its device made current on the calling thread; null where the backend
  // has none (the host backend: such a library works synchronously there). synchronize() waits
  // for what the library enqueued too.
  [[nodiscard]] virtual Result<void*> native_stream() { return nullptr; }
};

struct DeviceInfo {
  int index = 0;
  std::string name;     // "host 0 (pcie4x16)", "NVIDIA H200"
  std::string backend;  // "host", "cuda"
  std::string pci;      // "0000:18:00.0"; empty for emulated devices
  int numa_node = -1;
  std::uint64_t memory_bytes = 0;
  // The link's peak per direction, bytes per second: emulated on the host backend, from the
  // topology or driver on CUDA; 0 when unknown or unlimited.
  double link_bytes_per_second = 0;
  std::chrono::nanoseconds link_latency{0};
  int copy_engines = 1;     // queues that can move data at the same time in one direction
  double speed_factor = 1;  // relative compute speed (host backend emulation)
  bool operator==(const DeviceInfo&) const = default;
};

class Device {
 public:
  virtual ~Device() = default;
  [[nodiscard]] virtual const DeviceInfo& info() const = 0;
  // Device memory. kInvalidArgument for 0 bytes; kDeviceError when out of memory.
  [[nodiscard]] virtual Result<std::unique_ptr<Buffer>> allocate(std::size_t bytes) = 0;
  // Host memory of kind kPageable, kPinned or kMapped, page-aligned, on this device's NUMA node
  // where the system allows.
  [[nodiscard]] virtual Result<std::unique_ptr<Buffer>> allocate_host(std::size_t bytes,
                                                                      MemoryKind kind) = 0;
  // Pins [ptr, ptr+bytes) in place. kInvalidArgument when it overlaps another registration.
  [[nodiscard]] virtual Result<std::unique_ptr<Registration>> register_host(void* ptr,
                                                                            std::size_t bytes) = 0;
  [[nodiscard]] virtual Result<std::unique_ptr<Queue>> create_queue() = 0;
  // The plain path (cudaMemcpy): synchronous, any memory kinds.
  [[nodiscard]] virtual Status copy(void* dst, const void* src, std::size_t bytes) = 0;
  // What the device knows about an address: kDevice, kPinned, kRegistered, kMapped or kPageable.
  [[nodiscard]] virtual MemoryKind kind_of(const void* ptr) const = 0;
  // Makes this the calling thread's current device, for libraries that work on the current one
  // (NCCL's ncclCommInitRank): cudaSetDevice on CUDA; nothing to do on the host backend.
  [[nodiscard]] virtual Status make_current() { return {}; }
};

// Owns its devices; they live as long as the backend.
class Backend {
 public:
  virtual ~Backend() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  [[nodiscard]] virtual std::vector<Device*> devices() = 0;
};

}  // namespace acco::device
