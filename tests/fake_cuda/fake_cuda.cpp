// A stand-in libcuda.so.1 so the CUDA backend is tested on machines without a GPU. cuInit reads
// the JSON file named by ACCO_FAKE_CUDA_CONFIG (again whenever that name changes); every other
// call answers from it:
//   {"driver_version": 12080,                  (cuDriverGetVersion; default 13000)
//    "init_error": 34,                         (optional: cuInit fails with this CUresult)
//    "devices": [{"name": "NVIDIA H100 80GB HBM3",
//                 "pci": "0000:18:00.0",        (cuDeviceGetPCIBusId and the PCI attributes)
//                 "memory_bytes": 85520809984,  (cuDeviceTotalMem; cuMemAlloc beyond it answers
//                                                CUDA_ERROR_OUT_OF_MEMORY)
//                 "copy_engines": 2, "can_map_host": true,
//                 "copy_bytes_per_second": 2.5e10,   (pinned or device memory on either side)
//                 "pageable_bytes_per_second": 1e10, (a pageable side; default half the above)
//                 "copy_latency_ns": 2000,           (added to every copy)
//                 "peers": [1]}],               (ordinals cuDeviceCanAccessPeer answers 1 for)
//    "errors": {"cuMemHostAlloc": 2},          (entry points answering this CUresult instead)
//    "copy_error": {"after": 3, "error": 700}} (the asynchronous copy after `after` successful
//                                               ones fails with `error`: a device lost mid-copy)
// No ACCO_FAKE_CUDA_CONFIG, or no devices: cuInit answers CUDA_ERROR_NO_DEVICE, as a driver on a
// machine without a GPU does. An unreadable config: CUDA_ERROR_UNKNOWN, with the reason on stderr.
//
// What it models, as the CUDA Driver API reference describes the real driver:
// - One primary context per device (no cuCtxCreate); the last cuDevicePrimaryCtxRelease destroys
//   it with whatever memory it still owns, and a later retain starts a new one.
// - cuDeviceGet's CUdevice handles are not the ordinals (ordinal + 1000), so passing an ordinal
//   where a handle belongs fails with CUDA_ERROR_INVALID_DEVICE.
// - Device pointers are host memory, so copies are memcpy; a copy takes latency + bytes / rate of
//   wall time, so events time it plausibly. Each stream is a thread running its operations in
//   order; an operation after a failure in its stream fails with that failure.
// - A copy_error breaks its stream's context for good, as a device lost or an illegal address
//   does: work still queued in any stream of the context fails with it, and so does every later
//   call on the context (allocations, frees, registrations, copies, streams, events, callbacks,
//   synchronisation) until its destruction; device queries (cuDeviceGet*) and other devices'
//   contexts go on.
// - cuStreamAddCallback's callback runs on its stream's thread once the work before it is done,
//   exactly once, with CUDA_SUCCESS or the stream's or context's error (acco queues host tasks
//   this way; cuLaunchHostFunc, whose functions the driver does not call after an error, is not
//   provided).
// - Refusals acco relies on: cuMemHostRegister of a range overlapping pinned or registered memory
//   (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED), cuMemHostUnregister of memory not registered,
//   frees of the wrong kind, cuCtxEnablePeerAccess twice (..._ALREADY_ENABLED) or to a device
//   that is no peer, cuEventRecord on a stream of another context (CUDA_ERROR_INVALID_HANDLE).
// What it does not model: callbacks of different streams run at once on their streams' threads,
// while the real driver may serialise all of them on one thread of its own (so a host task that
// waits for another stream's host task can deadlock there and not here); cuMemcpyAsync from or
// to pageable memory returns before the copy (the driver stages it first, and returns only
// after a device-to-pageable copy); the legacy default stream (cuMemcpy runs to completion in the
// caller); contexts other than primary ones, kernels, managed memory, MIG and MPS.
//
// Test-only exports: acco_fake_cuda_live_allocations() counts device and pinned allocations and
// registrations not yet freed; acco_fake_cuda_reclaimed_allocations() those a context's
// destruction freed because their owner could not (a broken context refuses cuMemFree);
// acco_fake_cuda_retained_contexts() counts primary context retains not yet released;
// acco_fake_cuda_legacy_stream_syncs() counts waits for the legacy default stream;
// acco_fake_cuda_peer_access(from, to) is 1 while device `from`'s primary context has peer access
// to `to`'s enabled (the last release disables it).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuda/driver_api.hpp"

using Clock = std::chrono::steady_clock;

struct CUctx_st {
  int device = 0;
  int retains = 0;
  std::set<int> peers_enabled;
};

namespace {

using nlohmann::json;

struct DeviceConfig {
  std::string name;
  std::string pci;
  unsigned domain = 0;
  unsigned bus = 0;
  unsigned slot = 0;
  std::size_t memory_bytes = 0;
  int copy_engines = 1;
  bool can_map_host = true;
  double bytes_per_second = 2.5e10;
  double pageable_bytes_per_second = 1.25e10;
  std::chrono::nanoseconds latency{2000};
  std::set<int> peers;
};

enum class Kind {
  kDevice,
  kPinned,
  kRegistered
};

struct Allocation {
  std::size_t size = 0;
  Kind kind = Kind::kDevice;
  int context = -1;  // the ordinal of the primary context that owns it (device memory: its device)
};

struct State {
  std::mutex mutex;
  std::string config_path;
  bool loaded = false;
  CUresult init_error = CUDA_SUCCESS;
  int driver_version = 13000;
  std::vector<DeviceConfig> devices;
  std::vector<std::unique_ptr<CUctx_st>> contexts;
  std::vector<std::size_t> used_bytes;
  std::vector<CUresult> sticky;  // per primary context: the error that broke it, if any
  std::map<std::string, CUresult> errors;
  long long copy_error_after = -1;
  CUresult copy_error = CUDA_SUCCESS;
  long long copies = 0;
  std::map<std::uintptr_t, Allocation> allocations;  // by begin address
  int reclaimed = 0;  // allocations a context's destruction freed, not their owner
};

State& state() {
  static State instance;
  return instance;
}

thread_local CUctx_st* current_context = nullptr;
// cuStreamSynchronize calls on the legacy default stream (handle 0), for the test-only counter.
std::atomic<int> legacy_stream_syncs{0};

std::uintptr_t address(const void* ptr) {
  return reinterpret_cast<std::uintptr_t>(ptr);
}

// Under state().mutex.
bool initialised(const State& s) {
  return s.loaded && s.init_error == CUDA_SUCCESS;
}

// An injected failure for entry point `name`, or CUDA_SUCCESS. Under state().mutex.
CUresult injected(const State& s, const char* name) {
  if (!initialised(s)) {
    return CUDA_ERROR_NOT_INITIALIZED;
  }
  if (const auto it = s.errors.find(name); it != s.errors.end()) {
    return it->second;
  }
  return CUDA_SUCCESS;
}

// CUdevice handles are not the ordinals, so a caller that passes an ordinal where cuDeviceGet's
// handle belongs fails (the real driver makes no promise that the two are equal).
constexpr int kFirstDeviceHandle = 1000;

// The ordinal of device handle `dev`, or -1 for a handle cuDeviceGet never gave.
int ordinal_of(const State& s, CUdevice dev) {
  const int ordinal = dev - kFirstDeviceHandle;
  return ordinal >= 0 && static_cast<std::size_t>(ordinal) < s.devices.size() ? ordinal : -1;
}

CUresult load(State& s, const std::string& path) {
  s.loaded = true;
  s.config_path = path;
  s.init_error = CUDA_SUCCESS;
  s.driver_version = 13000;
  s.devices.clear();
  s.contexts.clear();
  s.used_bytes.clear();
  s.sticky.clear();
  s.errors.clear();
  s.copy_error_after = -1;
  s.copies = 0;
  if (path.empty()) {
    s.init_error = CUDA_ERROR_NO_DEVICE;
    return s.init_error;
  }
  try {
    std::ifstream in(path);
    if (!in) {
      throw std::runtime_error("cannot open " + path);
    }
    const json config = json::parse(in);
    s.driver_version = config.value("driver_version", 13000);
    s.init_error = static_cast<CUresult>(config.value("init_error", 0));
    const json errors = config.value("errors", json::object());
    for (const auto& [name, code] : errors.items()) {
      s.errors[name] = static_cast<CUresult>(code.get<int>());
    }
    if (config.contains("copy_error")) {
      s.copy_error_after = config["copy_error"].at("after").get<long long>();
      s.copy_error = static_cast<CUresult>(config["copy_error"].at("error").get<int>());
    }
    for (const json& entry : config.value("devices", json::array())) {
      DeviceConfig device;
      device.name = entry.at("name").get<std::string>();
      device.pci = entry.at("pci").get<std::string>();
      if (std::sscanf(device.pci.c_str(), "%x:%x:%x", &device.domain, &device.bus,  // NOLINT
                      &device.slot) != 3) {
        throw std::runtime_error("pci '" + device.pci + "' is not domain:bus:device.function");
      }
      device.memory_bytes = entry.at("memory_bytes").get<std::size_t>();
      device.copy_engines = entry.value("copy_engines", 1);
      device.can_map_host = entry.value("can_map_host", true);
      device.bytes_per_second = entry.value("copy_bytes_per_second", 2.5e10);
      device.pageable_bytes_per_second =
          entry.value("pageable_bytes_per_second", device.bytes_per_second / 2);
      device.latency = std::chrono::nanoseconds(entry.value("copy_latency_ns", 2000));
      for (const json& peer : entry.value("peers", json::array())) {
        device.peers.insert(peer.get<int>());
      }
      s.devices.push_back(std::move(device));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake libcuda: %s: %s\n", path.c_str(), e.what());  // NOLINT
    s.devices.clear();
    s.init_error = CUDA_ERROR_UNKNOWN;
    return s.init_error;
  }
  for (std::size_t i = 0; i < s.devices.size(); ++i) {
    auto context = std::make_unique<CUctx_st>();
    context->device = static_cast<int>(i);
    s.contexts.push_back(std::move(context));
  }
  s.used_bytes.assign(s.devices.size(), 0);
  s.sticky.assign(s.devices.size(), CUDA_SUCCESS);
  if (s.init_error == CUDA_SUCCESS && s.devices.empty()) {
    s.init_error = CUDA_ERROR_NO_DEVICE;
  }
  return s.init_error;
}

// The allocation holding ptr, if any. Under state().mutex.
const std::pair<const std::uintptr_t, Allocation>* find(const State& s, std::uintptr_t ptr) {
  auto it = s.allocations.upper_bound(ptr);
  if (it == s.allocations.begin()) {
    return nullptr;
  }
  --it;
  return ptr - it->first < it->second.size ? &*it : nullptr;
}

// The error that broke primary context `ordinal` (a device lost mid-copy), or CUDA_SUCCESS. Once
// set, every call on that context and every operation still queued in its streams fails with it,
// until the context is destroyed. Under state().mutex.
CUresult context_error(const State& s, int ordinal) {
  return s.sticky[static_cast<std::size_t>(ordinal)];
}

// The same for a caller that does not hold state().mutex.
CUresult context_error(int ordinal) {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  return context_error(s, ordinal);
}

// The last release of a primary context destroys it, and with it whatever its owner could not
// free (a broken context refuses every cuMemFree): a later retain starts a new, working context.
// Under state().mutex.
void destroy_context(State& s, int ordinal) {
  CUctx_st& context = *s.contexts[static_cast<std::size_t>(ordinal)];
  context.peers_enabled.clear();
  for (auto it = s.allocations.begin(); it != s.allocations.end();) {
    if (it->second.context != ordinal) {
      ++it;
      continue;
    }
    if (it->second.kind == Kind::kDevice) {
      s.used_bytes[static_cast<std::size_t>(ordinal)] -= it->second.size;
    }
    if (it->second.kind != Kind::kRegistered) {
      std::free(reinterpret_cast<void*>(it->first));  // NOLINT
    }
    ++s.reclaimed;
    it = s.allocations.erase(it);
  }
  s.sticky[static_cast<std::size_t>(ordinal)] = CUDA_SUCCESS;
}

// How long a copy of `bytes` between dst and src takes, and the device it concerns (that of a
// device side, else the calling thread's). CUDA_ERROR_INVALID_VALUE when a device range runs past
// its allocation. Under state().mutex.
struct CopyPlan {
  CUresult result = CUDA_SUCCESS;
  int device = 0;
  std::chrono::nanoseconds duration{0};
};

CopyPlan plan_copy(const State& s, CUdeviceptr dst, CUdeviceptr src, std::size_t bytes) {
  CopyPlan plan;
  plan.device = current_context != nullptr ? current_context->device : 0;
  bool pageable = false;
  for (const CUdeviceptr side : {dst, src}) {
    const auto* entry = find(s, side);
    if (entry == nullptr) {
      pageable = true;
      continue;
    }
    if (bytes > entry->second.size - (side - entry->first)) {
      plan.result = CUDA_ERROR_INVALID_VALUE;
      return plan;
    }
    if (entry->second.kind == Kind::kDevice) {
      plan.device = entry->second.context;
    }
  }
  const DeviceConfig& device = s.devices[static_cast<std::size_t>(plan.device)];
  const double rate = pageable ? device.pageable_bytes_per_second : device.bytes_per_second;
  plan.duration =
      device.latency +
      std::chrono::nanoseconds(static_cast<long long>(static_cast<double>(bytes) / rate * 1e9));
  if (s.sticky[static_cast<std::size_t>(plan.device)] != CUDA_SUCCESS) {
    plan.result = s.sticky[static_cast<std::size_t>(plan.device)];
  }
  return plan;
}

// Copies and takes the modelled time (at least).
void run_copy(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes,
              std::chrono::nanoseconds duration) {
  const auto start = Clock::now();
  std::memcpy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
  std::this_thread::sleep_until(start + duration);
}

struct EventState {
  std::mutex mutex;
  std::condition_variable changed;
  std::uint64_t recorded = 0;   // records made
  std::uint64_t completed = 0;  // records reached by their stream
  Clock::time_point at;
  CUresult error = CUDA_SUCCESS;  // the stream's failure before the last record, if any
};

}  // namespace

struct CUevent_st {
  explicit CUevent_st(int owner) : device(owner) {}
  int device;  // the ordinal of the context it was created in
  std::shared_ptr<EventState> state = std::make_shared<EventState>();
};

// One thread running the stream's operations in order.
struct CUstream_st {
  explicit CUstream_st(int owner) : device(owner), worker([this] { run(); }) {}
  CUstream_st(const CUstream_st&) = delete;
  CUstream_st& operator=(const CUstream_st&) = delete;
  ~CUstream_st() {
    {
      const std::scoped_lock lock(mutex);
      stopping = true;
    }
    changed.notify_all();
    worker.join();
  }

  // An operation gets the stream's failure so far; it returns its own (CUDA_SUCCESS if none).
  void submit(std::function<CUresult(CUresult)> operation) {
    {
      const std::scoped_lock lock(mutex);
      operations.push_back(std::move(operation));
    }
    changed.notify_all();
  }

  CUresult synchronize() {
    std::unique_lock lock(mutex);
    changed.wait(lock, [this] { return operations.empty() && !busy; });
    return error;
  }

  void run() {
    std::unique_lock lock(mutex);
    for (;;) {
      changed.wait(lock, [this] { return stopping || !operations.empty(); });
      if (operations.empty()) {
        return;  // stopping, and drained
      }
      auto operation = std::move(operations.front());
      operations.pop_front();
      busy = true;
      const CUresult stream_error = error;
      lock.unlock();
      // A broken context fails the work still queued in every one of its streams.
      const CUresult before = stream_error != CUDA_SUCCESS ? stream_error : context_error(device);
      const CUresult result = operation(before);
      lock.lock();
      if (error == CUDA_SUCCESS) {
        error = result;
      }
      busy = false;
      changed.notify_all();
    }
  }

  int device;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::function<CUresult(CUresult)>> operations;
  bool busy = false;
  bool stopping = false;
  CUresult error = CUDA_SUCCESS;
  std::thread worker;  // last: starts once the rest is built
};

namespace {

struct ErrorText {
  const char* name;
  const char* text;
};

const std::map<int, ErrorText>& error_texts() {
  static const std::map<int, ErrorText> texts = {
      {0, {"CUDA_SUCCESS", "no error"}},
      {1, {"CUDA_ERROR_INVALID_VALUE", "invalid argument"}},
      {2, {"CUDA_ERROR_OUT_OF_MEMORY", "out of memory"}},
      {3, {"CUDA_ERROR_NOT_INITIALIZED", "initialization error"}},
      {4, {"CUDA_ERROR_DEINITIALIZED", "driver shutting down"}},
      {34, {"CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"}},
      {36,
       {"CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER",
        "API call is not supported in the installed CUDA driver"}},
      {46, {"CUDA_ERROR_DEVICE_UNAVAILABLE", "CUDA-capable device(s) is/are busy or unavailable"}},
      {100, {"CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"}},
      {101, {"CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"}},
      {102, {"CUDA_ERROR_DEVICE_NOT_LICENSED", "device doesn't have valid Grid license"}},
      {201, {"CUDA_ERROR_INVALID_CONTEXT", "invalid device context"}},
      {217,
       {"CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
        "peer access is not supported between these "
        "two devices"}},
      {304,
       {"CUDA_ERROR_OPERATING_SYSTEM", "OS call failed or operation not supported on this OS"}},
      {400, {"CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"}},
      {500, {"CUDA_ERROR_NOT_FOUND", "named symbol not found"}},
      {600, {"CUDA_ERROR_NOT_READY", "device not ready"}},
      {700, {"CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"}},
      {704, {"CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "peer access is already enabled"}},
      {712,
       {"CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
        "part or all of the requested memory range is already mapped"}},
      {713,
       {"CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
        "pointer does not correspond to a registered memory region"}},
      {719, {"CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"}},
      {800, {"CUDA_ERROR_NOT_PERMITTED", "operation not permitted"}},
      {801, {"CUDA_ERROR_NOT_SUPPORTED", "operation not supported"}},
      {802, {"CUDA_ERROR_SYSTEM_NOT_READY", "system not yet initialized"}},
      {803,
       {"CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
        "system has unsupported display driver / cuda driver combination"}},
      {804,
       {"CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
        "forward compatibility was attempted on non supported HW"}},
      {999, {"CUDA_ERROR_UNKNOWN", "unknown error"}},
  };
  return texts;
}

void* aligned(std::size_t bytes) {
  constexpr std::size_t kPage = 4096;
  return std::aligned_alloc(kPage, (bytes + kPage - 1) / kPage * kPage);
}

// "init_error": 34 makes the fake the toolkit's stub library, which answers every call with
// CUDA_ERROR_STUB_LIBRARY, its error strings included.
bool stub_library() {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  return s.loaded && s.init_error == CUDA_ERROR_STUB_LIBRARY;
}

// Pinned and registered ranges may not overlap. Under state().mutex.
bool overlaps_host(const State& s, std::uintptr_t begin, std::size_t bytes) {
  for (const auto& [start, allocation] : s.allocations) {
    if (allocation.kind != Kind::kDevice && start < begin + bytes &&
        begin < start + allocation.size) {
      return true;
    }
  }
  return false;
}

}  // namespace

extern "C" {

CUresult cuGetErrorString(CUresult error, const char** pStr) {
  if (stub_library()) {
    return CUDA_ERROR_STUB_LIBRARY;
  }
  const auto it = error_texts().find(static_cast<int>(error));
  if (it == error_texts().end()) {
    *pStr = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
  *pStr = it->second.text;
  return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult error, const char** pStr) {
  if (stub_library()) {
    return CUDA_ERROR_STUB_LIBRARY;
  }
  const auto it = error_texts().find(static_cast<int>(error));
  if (it == error_texts().end()) {
    *pStr = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
  *pStr = it->second.name;
  return CUDA_SUCCESS;
}

CUresult cuInit(unsigned int Flags) {
  if (Flags != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  const char* path = std::getenv("ACCO_FAKE_CUDA_CONFIG");  // NOLINT(concurrency-mt-unsafe)
  const std::string wanted = path != nullptr ? path : "";
  if (!s.loaded || wanted != s.config_path) {
    return load(s, wanted);
  }
  return s.init_error;
}

CUresult cuDriverGetVersion(int* driverVersion) {
  if (driverVersion == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  if (!s.loaded) {
    // Before cuInit the real driver answers too; the config says which version it is.
    const char* path = std::getenv("ACCO_FAKE_CUDA_CONFIG");  // NOLINT(concurrency-mt-unsafe)
    static_cast<void>(load(s, path != nullptr ? path : ""));
  }
  *driverVersion = s.driver_version;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int* count) {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  if (const CUresult code = injected(s, "cuDeviceGetCount"); code != CUDA_SUCCESS) {
    return code;
  }
  *count = static_cast<int>(s.devices.size());
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  if (const CUresult code = injected(s, "cuDeviceGet"); code != CUDA_SUCCESS) {
    return code;
  }
  if (ordinal < 0 || static_cast<std::size_t>(ordinal) >= s.devices.size()) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  *device = kFirstDeviceHandle + ordinal;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  if (const CUresult code = injected(s, "cuDeviceGetName"); code != CUDA_SUCCESS) {
    return code;
  }
  const int ordinal = ordinal_of(s, dev);
  if (ordinal < 0) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  if (name == nullptr || len <= 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::snprintf(name, static_cast<std::size_t>(len), "%s",  // NOLINT
                s.devices[static_cast<std::size_t>(ordinal)].name.c_str());
  return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  if (const CUresult code = injected(s, "cuDeviceTotalMem_v2"); code != CUDA_SUCCESS) {
    return code;
  }
  const int ordinal = ordinal_of(s, dev);
  if (ordinal < 0) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  *bytes = s.devices[static_cast<std::size_t>(ordinal)].memory_bytes;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  if (const CUresult code = injected(s, "cuDeviceGetAttribute"); code != CUDA_SUCCESS) {
    return code;
  }
  const int ordinal = ordinal_of(s, dev);
  if (ordinal < 0) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  const DeviceConfig& device = s.devices[static_cast<std::size_t>(ordinal)];
  switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
      *pi = device.can_map_host ? 1 : 0;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
      *pi = static_cast<int>(device.bus);
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
      *pi = static_cast<int>(device.slot);
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT:
      *pi = device.copy_engines;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
      *pi = 1;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
      *pi = static_cast<int>(device.domain);
      return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

// The driver writes the domain with 8 digits in upper case, as NVML does: "00000000:18:00.0".
CUresult cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  if (const CUresult code = injected(s, "cuDeviceGetPCIBusId"); code != CUDA_SUCCESS) {
    return code;
  }
  const int ordinal = ordinal_of(s, dev);
  if (ordinal < 0) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  if (pciBusId == nullptr || len < 13) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const DeviceConfig& device = s.devices[static_cast<std::size_t>(ordinal)];
  std::snprintf(pciBusId, static_cast<std::size_t>(len), "%08X:%02X:%02X.0",  // NOLINT
                device.domain, device.bus, device.slot);
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  if (const CUresult code = injected(s, "cuDevicePrimaryCtxRetain"); code != CUDA_SUCCESS) {
    return code;
  }
  const int ordinal = ordinal_of(s, dev);
  if (ordinal < 0) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  CUctx_st* context = s.contexts[static_cast<std::size_t>(ordinal)].get();
  ++context->retains;
  *pctx = context;
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  const int ordinal = ordinal_of(s, dev);
  if (ordinal < 0) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  CUctx_st* context = s.contexts[static_cast<std::size_t>(ordinal)].get();
  if (context->retains == 0) {
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  if (--context->retains == 0) {
    destroy_context(s, ordinal);
  }
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  if (const CUresult code = injected(s, "cuCtxSetCurrent"); code != CUDA_SUCCESS) {
    return code;
  }
  if (ctx != nullptr && ctx->retains == 0) {
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  current_context = ctx;
  return CUDA_SUCCESS;
}

CUresult cuDeviceCanAccessPeer(int* canAccessPeer, CUdevice dev, CUdevice peerDev) {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  if (const CUresult code = injected(s, "cuDeviceCanAccessPeer"); code != CUDA_SUCCESS) {
    return code;
  }
  const int ordinal = ordinal_of(s, dev);
  const int peer = ordinal_of(s, peerDev);
  if (ordinal < 0 || peer < 0) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  *canAccessPeer = s.devices[static_cast<std::size_t>(ordinal)].peers.count(peer) != 0 ? 1 : 0;
  return CUDA_SUCCESS;
}

CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags) {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  if (const CUresult code = injected(s, "cuCtxEnablePeerAccess"); code != CUDA_SUCCESS) {
    return code;
  }
  if (current_context == nullptr) {
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  if (const CUresult broken = context_error(s, current_context->device); broken != CUDA_SUCCESS) {
    return broken;
  }
  if (Flags != 0 || peerContext == nullptr || peerContext->retains == 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const DeviceConfig& device = s.devices[static_cast<std::size_t>(current_context->device)];
  if (device.peers.count(peerContext->device) == 0) {
    return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
  }
  if (!current_context->peers_enabled.insert(peerContext->device).second) {
    return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
  }
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  if (const CUresult code = injected(s, "cuMemAlloc_v2"); code != CUDA_SUCCESS) {
    return code;
  }
  if (current_context == nullptr) {
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  if (bytesize == 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const auto device = static_cast<std::size_t>(current_context->device);
  if (const CUresult broken = context_error(s, current_context->device); broken != CUDA_SUCCESS) {
    return broken;
  }
  if (bytesize > s.devices[device].memory_bytes - s.used_bytes[device]) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  void* data = aligned(bytesize);
  if (data == nullptr) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  s.used_bytes[device] += bytesize;
  s.allocations[address(data)] = {bytesize, Kind::kDevice, current_context->device};
  *dptr = address(data);
  return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr dptr) {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  const auto it = s.allocations.find(dptr);
  if (it == s.allocations.end() || it->second.kind != Kind::kDevice) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (const CUresult broken = context_error(s, it->second.context); broken != CUDA_SUCCESS) {
    return broken;  // freed with the context
  }
  s.used_bytes[static_cast<std::size_t>(it->second.context)] -= it->second.size;
  s.allocations.erase(it);
  std::free(reinterpret_cast<void*>(dptr));  // NOLINT
  return CUDA_SUCCESS;
}

CUresult cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  if (const CUresult code = injected(s, "cuMemHostAlloc"); code != CUDA_SUCCESS) {
    return code;
  }
  if (current_context == nullptr) {
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  if (const CUresult broken = context_error(s, current_context->device); broken != CUDA_SUCCESS) {
    return broken;
  }
  if (bytesize == 0 || (Flags & ~(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  void* data = aligned(bytesize);
  if (data == nullptr) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  s.allocations[address(data)] = {bytesize, Kind::kPinned, current_context->device};
  *pp = data;
  return CUDA_SUCCESS;
}

CUresult cuMemFreeHost(void* p) {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  const auto it = s.allocations.find(address(p));
  if (it == s.allocations.end() || it->second.kind != Kind::kPinned) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (const CUresult broken = context_error(s, it->second.context); broken != CUDA_SUCCESS) {
    return broken;  // freed with the context
  }
  s.allocations.erase(it);
  std::free(p);  // NOLINT
  return CUDA_SUCCESS;
}

CUresult cuMemHostRegister_v2(void* p, size_t bytesize, unsigned int Flags) {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  if (const CUresult code = injected(s, "cuMemHostRegister_v2"); code != CUDA_SUCCESS) {
    return code;
  }
  if (current_context == nullptr) {
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  if (const CUresult broken = context_error(s, current_context->device); broken != CUDA_SUCCESS) {
    return broken;
  }
  if (p == nullptr || bytesize == 0 || (Flags & ~CU_MEMHOSTREGISTER_PORTABLE) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (overlaps_host(s, address(p), bytesize)) {
    return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  }
  s.allocations[address(p)] = {bytesize, Kind::kRegistered, current_context->device};
  return CUDA_SUCCESS;
}

CUresult cuMemHostUnregister(void* p) {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  const auto it = s.allocations.find(address(p));
  if (it == s.allocations.end() || it->second.kind != Kind::kRegistered) {
    return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
  }
  if (const CUresult broken = context_error(s, it->second.context); broken != CUDA_SUCCESS) {
    return broken;  // unregistered with the context
  }
  s.allocations.erase(it);
  return CUDA_SUCCESS;
}

CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  if (const CUresult code = injected(s, "cuPointerGetAttribute"); code != CUDA_SUCCESS) {
    return code;
  }
  const auto* entry = find(s, ptr);
  if (entry == nullptr || data == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;  // what the driver answers for memory it does not know
  }
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      *static_cast<unsigned int*>(data) =
          entry->second.kind == Kind::kDevice ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
      *static_cast<unsigned int*>(data) = 0;
      return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount) {
  CopyPlan plan;
  {
    State& s = state();
    const std::scoped_lock lock(s.mutex);
    if (const CUresult code = injected(s, "cuMemcpy"); code != CUDA_SUCCESS) {
      return code;
    }
    if (current_context == nullptr) {
      return CUDA_ERROR_INVALID_CONTEXT;
    }
    if (const CUresult broken = context_error(s, current_context->device); broken != CUDA_SUCCESS) {
      return broken;
    }
    plan = plan_copy(s, dst, src, ByteCount);
  }
  if (plan.result != CUDA_SUCCESS) {
    return plan.result;
  }
  run_copy(dst, src, ByteCount, plan.duration);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream) {
  CopyPlan plan;
  bool fails = false;
  CUresult failure = CUDA_SUCCESS;
  {
    State& s = state();
    const std::scoped_lock lock(s.mutex);
    if (const CUresult code = injected(s, "cuMemcpyAsync"); code != CUDA_SUCCESS) {
      return code;
    }
    if (current_context == nullptr) {
      return CUDA_ERROR_INVALID_CONTEXT;
    }
    if (hStream == nullptr) {
      return CUDA_ERROR_INVALID_HANDLE;  // acco always names its stream
    }
    if (const CUresult broken = context_error(s, hStream->device); broken != CUDA_SUCCESS) {
      return broken;
    }
    plan = plan_copy(s, dst, src, ByteCount);
    if (plan.result != CUDA_SUCCESS) {
      return plan.result;
    }
    if (s.copy_error_after >= 0 && s.copies++ == s.copy_error_after) {
      fails = true;
      failure = s.copy_error;
    }
  }
  const int context = hStream->device;
  hStream->submit([=](CUresult before) {
    if (before != CUDA_SUCCESS) {
      return before;
    }
    if (fails) {
      // The device is lost under the copy: the stream's context is broken for good.
      State& s = state();
      const std::scoped_lock lock(s.mutex);
      s.sticky[static_cast<std::size_t>(context)] = failure;
      return failure;
    }
    run_copy(dst, src, ByteCount, plan.duration);
    return CUDA_SUCCESS;
  });
  return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream* phStream, unsigned int Flags) {
  int device = 0;
  {
    State& s = state();
    const std::scoped_lock lock(s.mutex);
    if (const CUresult code = injected(s, "cuStreamCreate"); code != CUDA_SUCCESS) {
      return code;
    }
    if (current_context == nullptr) {
      return CUDA_ERROR_INVALID_CONTEXT;
    }
    if ((Flags & ~static_cast<unsigned>(CU_STREAM_NON_BLOCKING)) != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    device = current_context->device;
    if (const CUresult broken = context_error(s, device); broken != CUDA_SUCCESS) {
      return broken;
    }
  }
  *phStream = new CUstream_st(device);
  return CUDA_SUCCESS;
}

// The driver returns at once and frees the stream when its work is done; joining its thread here
// is the same to the caller, who cannot name the stream any more. A broken context answers with
// its error, and the stream goes with the context (here: at once).
CUresult cuStreamDestroy_v2(CUstream hStream) {
  if (hStream == nullptr) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  const int context = hStream->device;
  delete hStream;
  return context_error(context);
}

CUresult cuStreamSynchronize(CUstream hStream) {
  if (hStream == nullptr) {
    // The legacy default stream of the current context: the fake's cuMemcpy, the only work it
    // takes, has finished when it returns.
    if (current_context == nullptr) {
      return CUDA_ERROR_INVALID_CONTEXT;
    }
    ++legacy_stream_syncs;
    return context_error(current_context->device);
  }
  const CUresult failed = hStream->synchronize();
  return failed != CUDA_SUCCESS ? failed : context_error(hStream->device);
}

CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  if (hStream == nullptr || hEvent == nullptr || Flags != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (const CUresult broken = context_error(hStream->device); broken != CUDA_SUCCESS) {
    return broken;
  }
  std::shared_ptr<EventState> event = hEvent->state;
  std::uint64_t target = 0;
  {
    const std::scoped_lock lock(event->mutex);
    target = event->recorded;
  }
  hStream->submit([event, target](CUresult before) {
    std::unique_lock lock(event->mutex);
    event->changed.wait(lock, [&] { return event->completed >= target; });
    return before;
  });
  return CUDA_SUCCESS;
}

CUresult cuEventCreate(CUevent* phEvent, unsigned int Flags) {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  if (const CUresult code = injected(s, "cuEventCreate"); code != CUDA_SUCCESS) {
    return code;
  }
  if (current_context == nullptr) {
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  if (Flags != CU_EVENT_DEFAULT) {
    return CUDA_ERROR_INVALID_VALUE;  // acco times every event
  }
  if (const CUresult broken = context_error(s, current_context->device); broken != CUDA_SUCCESS) {
    return broken;
  }
  *phEvent = new CUevent_st(current_context->device);
  return CUDA_SUCCESS;
}

CUresult cuEventDestroy_v2(CUevent hEvent) {
  if (hEvent == nullptr) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  const int context = hEvent->device;
  delete hEvent;  // a pending record keeps its state alive
  return context_error(context);
}

CUresult cuEventRecord(CUevent hEvent, CUstream hStream) {
  if (hEvent == nullptr || hStream == nullptr) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  if (hEvent->device != hStream->device) {
    return CUDA_ERROR_INVALID_HANDLE;  // the event and the stream must share a context
  }
  if (const CUresult broken = context_error(hStream->device); broken != CUDA_SUCCESS) {
    return broken;
  }
  std::shared_ptr<EventState> event = hEvent->state;
  std::uint64_t sequence = 0;
  {
    const std::scoped_lock lock(event->mutex);
    sequence = ++event->recorded;
  }
  hStream->submit([event, sequence](CUresult before) {
    {
      const std::scoped_lock lock(event->mutex);
      event->completed = sequence;
      event->at = Clock::now();
      event->error = before;
    }
    event->changed.notify_all();
    return before;
  });
  return CUDA_SUCCESS;
}

CUresult cuEventQuery(CUevent hEvent) {
  if (hEvent == nullptr) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  if (const CUresult broken = context_error(hEvent->device); broken != CUDA_SUCCESS) {
    return broken;
  }
  const std::scoped_lock lock(hEvent->state->mutex);
  if (hEvent->state->completed < hEvent->state->recorded) {
    return CUDA_ERROR_NOT_READY;
  }
  return hEvent->state->error;
}

CUresult cuEventSynchronize(CUevent hEvent) {
  if (hEvent == nullptr) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  CUresult failed = CUDA_SUCCESS;
  {
    EventState& event = *hEvent->state;
    std::unique_lock lock(event.mutex);
    const std::uint64_t target = event.recorded;
    event.changed.wait(lock, [&] { return event.completed >= target; });
    failed = event.error;
  }
  return failed != CUDA_SUCCESS ? failed : context_error(hEvent->device);
}

CUresult cuEventElapsedTime(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  if (pMilliseconds == nullptr || hStart == nullptr || hEnd == nullptr) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  if (const CUresult broken = context_error(hEnd->device); broken != CUDA_SUCCESS) {
    return broken;
  }
  Clock::time_point start;
  Clock::time_point end;
  for (auto [event, at] : {std::pair{hStart, &start}, std::pair{hEnd, &end}}) {
    const std::scoped_lock lock(event->state->mutex);
    if (event->state->recorded == 0) {
      return CUDA_ERROR_INVALID_HANDLE;
    }
    if (event->state->completed < event->state->recorded) {
      return CUDA_ERROR_NOT_READY;
    }
    *at = event->state->at;
  }
  *pMilliseconds = std::chrono::duration<float, std::milli>(end - start).count();
  return CUDA_SUCCESS;
}

// The callback runs on the stream's thread once the work before it is done, exactly once, and
// also after a failure: it gets the stream's or its context's error (cuLaunchHostFunc's
// functions, which acco does not use, are not called after one).
CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void* userData,
                             unsigned int flags) {
  {
    State& s = state();
    const std::scoped_lock lock(s.mutex);
    if (const CUresult code = injected(s, "cuStreamAddCallback"); code != CUDA_SUCCESS) {
      return code;
    }
  }
  if (hStream == nullptr || callback == nullptr || flags != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (const CUresult broken = context_error(hStream->device); broken != CUDA_SUCCESS) {
    return broken;
  }
  hStream->submit([hStream, callback, userData](CUresult before) {
    callback(hStream, before, userData);
    return before;
  });
  return CUDA_SUCCESS;
}

// Test-only.
int acco_fake_cuda_live_allocations() {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  return static_cast<int>(s.allocations.size());
}

// 1 when device `from`'s primary context has peer access to device `to`'s enabled.
int acco_fake_cuda_peer_access(int from, int to) {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  if (from < 0 || static_cast<std::size_t>(from) >= s.contexts.size()) {
    return 0;
  }
  return s.contexts[static_cast<std::size_t>(from)]->peers_enabled.count(to) != 0 ? 1 : 0;
}

// Allocations freed by a context's destruction rather than by their owner: 0 unless a context
// broke (a healthy owner frees everything before its last release).
int acco_fake_cuda_reclaimed_allocations() {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  return s.reclaimed;
}

int acco_fake_cuda_legacy_stream_syncs() {
  return legacy_stream_syncs.load();
}

int acco_fake_cuda_retained_contexts() {
  State& s = state();
  const std::scoped_lock lock(s.mutex);
  int retains = 0;
  for (const auto& context : s.contexts) {
    retains += context->retains;
  }
  return retains;
}

}  // extern "C"
