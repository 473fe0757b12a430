// The one file that loads the CUDA driver. libcuda.so.1 comes with the NVIDIA driver, not the
// toolkit, so it is opened with dlopen at run time and its entry points resolved with dlsym: acco
// builds everywhere and runs without it.
#include "cuda/driver.hpp"

#include <cstdlib>
#include <mutex>
#include <utility>

#include <dlfcn.h>
#include <fmt/format.h>

namespace acco::device::detail {
namespace {

// dlerror's state is per thread but dlopen's search is not worth racing; one open at a time.
std::mutex& open_mutex() {
  static std::mutex mutex;
  return mutex;
}

template <typename Fn>
void bind_entry(void* library, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(library, name));
}

// Fills `api` from `library`; returns the first symbol that is missing, or "". Every one is
// required: the backend calls each of them.
std::string resolve_entries(void* library, DriverApi& api) {
  std::string missing;
  auto need = [&](const char* name, auto& fn) {
    bind_entry(library, name, fn);
    if (fn == nullptr && missing.empty()) {
      missing = name;
    }
  };
  need("cuGetErrorString", api.get_error_string);
  need("cuGetErrorName", api.get_error_name);
  need("cuInit", api.init);
  need("cuDriverGetVersion", api.driver_get_version);
  need("cuDeviceGet", api.device_get);
  need("cuDeviceGetCount", api.device_get_count);
  need("cuDeviceGetName", api.device_get_name);
  need("cuDeviceTotalMem_v2", api.device_total_mem);
  need("cuDeviceGetAttribute", api.device_get_attribute);
  need("cuDeviceGetPCIBusId", api.device_get_pci_bus_id);
  need("cuDevicePrimaryCtxRetain", api.primary_ctx_retain);
  need("cuDevicePrimaryCtxRelease_v2", api.primary_ctx_release);
  need("cuCtxSetCurrent", api.ctx_set_current);
  need("cuDeviceCanAccessPeer", api.device_can_access_peer);
  need("cuCtxEnablePeerAccess", api.ctx_enable_peer_access);
  need("cuMemAlloc_v2", api.mem_alloc);
  need("cuMemFree_v2", api.mem_free);
  need("cuMemHostAlloc", api.mem_host_alloc);
  need("cuMemFreeHost", api.mem_free_host);
  need("cuMemHostRegister_v2", api.mem_host_register);
  need("cuMemHostUnregister", api.mem_host_unregister);
  need("cuPointerGetAttribute", api.pointer_get_attribute);
  need("cuMemcpy", api.memcpy);
  need("cuMemcpyAsync", api.memcpy_async);
  need("cuStreamCreate", api.stream_create);
  need("cuStreamDestroy_v2", api.stream_destroy);
  need("cuStreamSynchronize", api.stream_synchronize);
  need("cuStreamWaitEvent", api.stream_wait_event);
  need("cuEventCreate", api.event_create);
  need("cuEventDestroy_v2", api.event_destroy);
  need("cuEventRecord", api.event_record);
  need("cuEventQuery", api.event_query);
  need("cuEventSynchronize", api.event_synchronize);
  need("cuEventElapsedTime", api.event_elapsed_time);
  need("cuStreamAddCallback", api.stream_add_callback);
  return missing;
}

// The driver's version for a message: "driver 12080 (CUDA 12.8)", or what kept it from answering.
std::string version_for_message(void* library) {
  auto* get_version =
      reinterpret_cast<decltype(&cuDriverGetVersion)>(dlsym(library, "cuDriverGetVersion"));
  if (get_version == nullptr) {
    return "a driver without cuDriverGetVersion";
  }
  int version = 0;
  if (get_version(&version) != CUDA_SUCCESS) {
    return "a driver whose cuDriverGetVersion fails";
  }
  return fmt::format("driver {} (CUDA {})", version, cuda_version_text(version));
}

// What to do about the errors that say the machine, not acco, keeps CUDA from working, from what
// the CUDA Driver API reference says each means; nullptr for the rest.
const char* remedy(CUresult code) {
  switch (code) {
    case CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER:
      return "the installed NVIDIA driver is older than this call needs: update the driver";
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
      return "the GPU is busy or unavailable: its compute mode (nvidia-smi -q -d COMPUTE) is "
             "exclusive-process with another process on it, or prohibited";
    case CUDA_ERROR_DEVICE_NOT_LICENSED:
      return "this (virtual) GPU has no valid NVIDIA vGPU license";
    case CUDA_ERROR_OPERATING_SYSTEM:
      return "a system call inside the driver failed; the kernel log (dmesg) may say which";
    case CUDA_ERROR_SYSTEM_NOT_READY:
      return "the system is not ready for CUDA yet: a driver daemon it needs is not running (on "
             "NVSwitch systems, HGX and DGX, nvidia-fabricmanager)";
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
      return "the CUDA driver library and the loaded nvidia kernel module are of different "
             "versions: after a driver update, reboot or reload the module; or take a cuda-compat "
             "libcuda off the library path";
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
      return "a CUDA forward-compatibility libcuda (cuda-compat) is loaded, which this GPU does "
             "not support: take it off the library path";
    default:
      return nullptr;
  }
}

// What the process was told to see, when it names no device the driver has.
std::string visible_devices_note(CUresult code) {
  if (code != CUDA_ERROR_NO_DEVICE) {
    return "";
  }
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");  // NOLINT(concurrency-mt-unsafe)
  return visible != nullptr ? fmt::format(": CUDA_VISIBLE_DEVICES is '{}'", visible) : "";
}

}  // namespace

std::string cuda_version_text(int version) {
  return fmt::format("{}.{}", version / 1000, version % 1000 / 10);
}

Result<std::shared_ptr<const Driver>> Driver::open(const std::string& library) {
  if (library.empty()) {
    // dlopen("") would hand back the program itself rather than fail.
    return fail(Errc::kUnavailable, "no CUDA driver library named");
  }
  const std::lock_guard lock(open_mutex());
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* reason = dlerror();
    return fail(Errc::kUnavailable,
                fmt::format("{}: cannot be loaded, no NVIDIA driver installed? ({})", library,
                            reason != nullptr ? reason : "no reason given"));
  }
  DriverApi api;
  if (const std::string missing = resolve_entries(handle, api); !missing.empty()) {
    std::string message = fmt::format("{}: {} lacks {}, which acco needs (CUDA 11.0 or later)",
                                      library, version_for_message(handle), missing);
    dlclose(handle);
    return fail(Errc::kUnavailable, std::move(message));
  }
  int version = 0;
  if (api.driver_get_version(&version) != CUDA_SUCCESS) {
    version = 0;
  }
  const Driver probe(library, api, version);
  if (const CUresult code = api.init(0); code != CUDA_SUCCESS) {
    // The stub answers every call with CUDA_ERROR_STUB_LIBRARY, cuGetErrorString included.
    Error error = code == CUDA_ERROR_STUB_LIBRARY
                      ? Error{Errc::kUnavailable,
                              "cuInit: CUDA_ERROR_STUB_LIBRARY: this is the CUDA toolkit's stub "
                              "library (stubs/libcuda.so), not a driver"}
                      : probe.error("cuInit", code, Errc::kUnavailable);
    dlclose(handle);
    return tl::unexpected(std::move(error).with_context(library));
  }
  // Never closed: the driver starts threads of its own, and unloading it under them would crash.
  return std::shared_ptr<const Driver>(new Driver(library, api, version));
}

Error Driver::error(std::string_view call, CUresult code, Errc errc) const {
  const char* text = nullptr;
  const char* name = nullptr;
  if (api_.get_error_string(code, &text) != CUDA_SUCCESS || text == nullptr) {
    text = "unknown error";
  }
  std::string message =
      api_.get_error_name(code, &name) != CUDA_SUCCESS || name == nullptr
          ? fmt::format("{}: {} (CUresult {})", call, text, static_cast<int>(code))
          : fmt::format("{}: {} ({})", call, text, name);
  if (const char* what_to_do = remedy(code); what_to_do != nullptr) {
    message += fmt::format(": {}", what_to_do);
  }
  return Error{errc, message + visible_devices_note(code)};
}

Status Driver::check(std::string_view call, CUresult code) const {
  if (code == CUDA_SUCCESS) {
    return {};
  }
  return tl::unexpected(error(call, code));
}

}  // namespace acco::device::detail
