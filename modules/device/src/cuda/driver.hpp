// The CUDA driver (libcuda.so.1), loaded at run time: the only door of the CUDA backend to the
// GPU. Opening it resolves every entry point the backend calls and initialises the driver, so a
// backend never meets a missing function later. Private to the backend.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "acco/core/result.hpp"

#include "cuda/driver_api.hpp"

namespace acco::device::detail {

// The library the CUDA backend loads when none is named: the driver's own file name.
inline constexpr const char* kCudaLibrary = "libcuda.so.1";

// The entry points, by their exported names (driver_api.hpp).
struct DriverApi {
  decltype(&cuGetErrorString) get_error_string = nullptr;
  decltype(&cuGetErrorName) get_error_name = nullptr;
  decltype(&cuInit) init = nullptr;
  decltype(&cuDriverGetVersion) driver_get_version = nullptr;
  decltype(&cuDeviceGet) device_get = nullptr;
  decltype(&cuDeviceGetCount) device_get_count = nullptr;
  decltype(&cuDeviceGetName) device_get_name = nullptr;
  decltype(&cuDeviceTotalMem_v2) device_total_mem = nullptr;
  decltype(&cuDeviceGetAttribute) device_get_attribute = nullptr;
  decltype(&cuDeviceGetPCIBusId) device_get_pci_bus_id = nullptr;
  decltype(&cuDevicePrimaryCtxRetain) primary_ctx_retain = nullptr;
  decltype(&cuDevicePrimaryCtxRelease_v2) primary_ctx_release = nullptr;
  decltype(&cuCtxSetCurrent) ctx_set_current = nullptr;
  decltype(&cuDeviceCanAccessPeer) device_can_access_peer = nullptr;
  decltype(&cuCtxEnablePeerAccess) ctx_enable_peer_access = nullptr;
  decltype(&cuMemAlloc_v2) mem_alloc = nullptr;
  decltype(&cuMemFree_v2) mem_free = nullptr;
  decltype(&cuMemHostAlloc) mem_host_alloc = nullptr;
  decltype(&cuMemFreeHost) mem_free_host = nullptr;
  decltype(&cuMemHostRegister_v2) mem_host_register = nullptr;
  decltype(&cuMemHostUnregister) mem_host_unregister = nullptr;
  decltype(&cuPointerGetAttribute) pointer_get_attribute = nullptr;
  decltype(&cuMemcpy) memcpy = nullptr;
  decltype(&cuMemcpyAsync) memcpy_async = nullptr;
  decltype(&cuStreamCreate) stream_create = nullptr;
  decltype(&cuStreamDestroy_v2) stream_destroy = nullptr;
  decltype(&cuStreamSynchronize) stream_synchronize = nullptr;
  decltype(&cuStreamWaitEvent) stream_wait_event = nullptr;
  decltype(&cuEventCreate) event_create = nullptr;
  decltype(&cuEventDestroy_v2) event_destroy = nullptr;
  decltype(&cuEventRecord) event_record = nullptr;
  decltype(&cuEventQuery) event_query = nullptr;
  decltype(&cuEventSynchronize) event_synchronize = nullptr;
  decltype(&cuEventElapsedTime) event_elapsed_time = nullptr;
  decltype(&cuStreamAddCallback) stream_add_callback = nullptr;
};

// cuDriverGetVersion's number as CUDA writes it: 12080 -> "12.8".
[[nodiscard]] std::string cuda_version_text(int version);

class Driver {
 public:
  // Loads `library` (a name the dynamic loader searches for, or a path), resolves every entry
  // point and calls cuInit. kUnavailable, naming the reason, when the library cannot be loaded (no
  // NVIDIA driver installed), lacks an entry point (a driver older than acco needs: the message
  // names the missing symbol and the driver's version), or cuInit fails (the CUDA toolkit's stub
  // library, no device, a driver that is installed but not loaded). Thread-safe.
  [[nodiscard]] static Result<std::shared_ptr<const Driver>> open(const std::string& library);

  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;
  // The library stays loaded: the driver runs threads of its own that may outlive any object.
  ~Driver() = default;

  [[nodiscard]] const DriverApi& api() const { return api_; }
  [[nodiscard]] const std::string& library() const { return library_; }
  // cuDriverGetVersion: the highest CUDA version this driver supports, e.g. 12080.
  [[nodiscard]] int version() const { return version_; }

  // "<call>: <cuGetErrorString> (<cuGetErrorName>)" with code `errc`, then what to do for the
  // errors that say the machine keeps CUDA from working (an old driver, a busy or unlicensed GPU,
  // the fabric manager not running, a driver library and kernel module that differ, a cuda-compat
  // library on the wrong GPU), and CUDA_VISIBLE_DEVICES when no device is found and it is set.
  [[nodiscard]] Error error(std::string_view call, CUresult code,
                            Errc errc = Errc::kDeviceError) const;
  // Success for CUDA_SUCCESS, else error(call, code).
  [[nodiscard]] Status check(std::string_view call, CUresult code) const;

 private:
  Driver(std::string library, const DriverApi& api, int version)
      : library_(std::move(library)), api_(api), version_(version) {}

  std::string library_;
  DriverApi api_;
  int version_ = 0;
};

}  // namespace acco::device::detail
