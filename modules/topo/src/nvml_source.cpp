// The one file that loads NVML. libnvidia-ml.so.1 comes with the driver, so it is opened with
// dlopen at run time and its entry points resolved with dlsym: acco builds and runs without it.
#include <cctype>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <fmt/format.h>

#include "acco/topo/nvml.hpp"

#include "nvml_api.hpp"

// NVML fills fixed-size char arrays that acco declares as nvml.h does; passing them decays.
// NOLINTBEGIN(cppcoreguidelines-pro-bounds-array-to-pointer-decay)
namespace acco::topo {
namespace {

// NVML has had thread-safety bugs (races between init, shutdown and queries from several
// threads), so every call into it from this file happens under this one lock.
std::mutex& nvml_mutex() {
  static std::mutex mutex;
  return mutex;
}

struct LibraryCloser {
  void operator()(void* handle) const { dlclose(handle); }
};
using Library = std::unique_ptr<void, LibraryCloser>;

struct Api {
  // Required: without these there is nothing to report.
  decltype(&nvmlInit_v2) init = nullptr;
  decltype(&nvmlShutdown) shutdown = nullptr;
  decltype(&nvmlErrorString) error_string = nullptr;
  decltype(&nvmlDeviceGetCount_v2) device_count = nullptr;
  decltype(&nvmlDeviceGetHandleByIndex_v2) handle_by_index = nullptr;
  decltype(&nvmlDeviceGetPciInfo_v3) pci_info = nullptr;
  // Optional: older drivers lack some; the fields they fill then stay empty.
  decltype(&nvmlSystemGetDriverVersion) driver_version = nullptr;
  decltype(&nvmlDeviceGetName) name = nullptr;
  decltype(&nvmlDeviceGetUUID) uuid = nullptr;
  decltype(&nvmlDeviceGetMemoryInfo) memory_info = nullptr;
  decltype(&nvmlDeviceGetPerformanceState) performance_state = nullptr;
  decltype(&nvmlDeviceGetPersistenceMode) persistence_mode = nullptr;
  decltype(&nvmlDeviceGetMigMode) mig_mode = nullptr;
  decltype(&nvmlDeviceGetMaxMigDeviceCount) max_mig_device_count = nullptr;
  decltype(&nvmlDeviceGetMigDeviceHandleByIndex) mig_device_handle = nullptr;
  decltype(&nvmlDeviceGetCurrPcieLinkGeneration) pcie_current_gen = nullptr;
  decltype(&nvmlDeviceGetCurrPcieLinkWidth) pcie_current_width = nullptr;
  decltype(&nvmlDeviceGetMaxPcieLinkGeneration) pcie_max_gen = nullptr;
  decltype(&nvmlDeviceGetMaxPcieLinkWidth) pcie_max_width = nullptr;
  decltype(&nvmlDeviceGetNvLinkState) nvlink_state = nullptr;
  decltype(&nvmlDeviceGetNvLinkRemotePciInfo_v2) nvlink_remote_pci = nullptr;
  decltype(&nvmlDeviceGetNvLinkVersion) nvlink_version = nullptr;
  decltype(&nvmlDeviceGetP2PStatus) p2p_status = nullptr;
};

template <typename Fn>
void bind(void* library, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(library, name));
}

// Fills `api` from `library`; returns the first required symbol that is missing, or "".
std::string resolve(void* library, Api& api) {
  std::string missing;
  auto need = [&](const char* name, auto& fn) {
    bind(library, name, fn);
    if (fn == nullptr && missing.empty()) {
      missing = name;
    }
  };
  need("nvmlInit_v2", api.init);
  need("nvmlShutdown", api.shutdown);
  need("nvmlErrorString", api.error_string);
  need("nvmlDeviceGetCount_v2", api.device_count);
  need("nvmlDeviceGetHandleByIndex_v2", api.handle_by_index);
  need("nvmlDeviceGetPciInfo_v3", api.pci_info);
  bind(library, "nvmlSystemGetDriverVersion", api.driver_version);
  bind(library, "nvmlDeviceGetName", api.name);
  bind(library, "nvmlDeviceGetUUID", api.uuid);
  bind(library, "nvmlDeviceGetMemoryInfo", api.memory_info);
  bind(library, "nvmlDeviceGetPerformanceState", api.performance_state);
  bind(library, "nvmlDeviceGetPersistenceMode", api.persistence_mode);
  bind(library, "nvmlDeviceGetMigMode", api.mig_mode);
  bind(library, "nvmlDeviceGetMaxMigDeviceCount", api.max_mig_device_count);
  bind(library, "nvmlDeviceGetMigDeviceHandleByIndex", api.mig_device_handle);
  bind(library, "nvmlDeviceGetCurrPcieLinkGeneration", api.pcie_current_gen);
  bind(library, "nvmlDeviceGetCurrPcieLinkWidth", api.pcie_current_width);
  bind(library, "nvmlDeviceGetMaxPcieLinkGeneration", api.pcie_max_gen);
  bind(library, "nvmlDeviceGetMaxPcieLinkWidth", api.pcie_max_width);
  bind(library, "nvmlDeviceGetNvLinkState", api.nvlink_state);
  bind(library, "nvmlDeviceGetNvLinkRemotePciInfo_v2", api.nvlink_remote_pci);
  bind(library, "nvmlDeviceGetNvLinkVersion", api.nvlink_version);
  bind(library, "nvmlDeviceGetP2PStatus", api.p2p_status);
  return missing;
}

// True when the optional entry point exists and succeeded.
template <typename Fn, typename... Args>
bool ok(Fn fn, Args... args) {
  return fn != nullptr && fn(args...) == NVML_SUCCESS;
}

std::string failure(const Api& api, const char* call, nvmlReturn_t rc) {
  const char* text = api.error_string(rc);
  return fmt::format("{}: {} ({})", call, text != nullptr ? text : "unknown error",
                     static_cast<int>(rc));
}

// NVML does not promise a terminating NUL when a string fills its buffer.
std::string text(const char* buffer, std::size_t size) {
  return {buffer, strnlen(buffer, size)};
}

// NVML writes "00000000:41:00.0" (an 8-digit domain, upper case); sysfs and the rest of acco
// write "0000:41:00.0", and domains above 0xffff (Intel VMD) with as many digits as they need.
std::string normalise_pci(const nvmlPciInfo_t& pci) {
  std::string raw = text(pci.busId, sizeof pci.busId);
  unsigned int domain = 0;
  unsigned int bus = 0;
  unsigned int device = 0;
  unsigned int function = 0;
  char rest = 0;
  // sscanf reads the four hex fields and proves nothing follows them in one call.
  if (std::sscanf(raw.c_str(), "%x:%x:%x.%x%c", &domain, &bus, &device, &function,  // NOLINT
                  &rest) == 4) {
    return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, device, function);
  }
  for (char& c : raw) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return raw;
}

std::optional<int> query_link(decltype(&nvmlDeviceGetCurrPcieLinkGeneration) fn,
                              nvmlDevice_t device) {
  unsigned int value = 0;
  if (!ok(fn, device, &value)) {
    return std::nullopt;
  }
  return static_cast<int>(value);
}

// MIG device slots are sparse: a slot without an instance answers NOT_FOUND, so count the
// handles that exist rather than trusting the maximum.
int count_mig_instances(const Api& api, nvmlDevice_t device) {
  unsigned int slots = 0;
  if (!ok(api.max_mig_device_count, device, &slots)) {
    return 0;
  }
  int count = 0;
  for (unsigned int slot = 0; slot < slots; ++slot) {
    nvmlDevice_t instance = nullptr;
    if (ok(api.mig_device_handle, device, slot, &instance)) {
      ++count;
    }
  }
  return count;
}

std::vector<NvLink> query_nvlinks(const Api& api, nvmlDevice_t device) {
  std::vector<NvLink> links;
  if (api.nvlink_state == nullptr) {
    return links;
  }
  for (unsigned int link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
    nvmlEnableState_t state = NVML_FEATURE_DISABLED;
    const nvmlReturn_t rc = api.nvlink_state(device, link, &state);
    // A GPU has fewer links than NVML's maximum: the first index past its last link answers
    // INVALID_ARGUMENT, and a GPU without NVLink answers NOT_SUPPORTED for link 0.
    if (rc == NVML_ERROR_INVALID_ARGUMENT || rc == NVML_ERROR_NOT_SUPPORTED) {
      break;
    }
    if (rc != NVML_SUCCESS) {
      continue;
    }
    NvLink& entry = links.emplace_back();
    entry.link = static_cast<int>(link);
    entry.active = state == NVML_FEATURE_ENABLED;
    nvmlPciInfo_t remote{};
    if (ok(api.nvlink_remote_pci, device, link, &remote)) {
      entry.remote_pci = normalise_pci(remote);
    }
    unsigned int version = 0;
    if (ok(api.nvlink_version, device, link, &version)) {
      entry.version = static_cast<int>(version);
    }
  }
  return links;
}

void query_gpu(const Api& api, nvmlDevice_t device, NvmlGpu& gpu) {
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
  if (ok(api.name, device, name, static_cast<unsigned int>(sizeof name))) {
    gpu.name = text(name, sizeof name);
  }
  char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
  if (ok(api.uuid, device, uuid, static_cast<unsigned int>(sizeof uuid))) {
    gpu.uuid = text(uuid, sizeof uuid);
  }
  nvmlMemory_t memory{};
  if (ok(api.memory_info, device, &memory)) {
    gpu.memory_total_bytes = memory.total;
  }
  nvmlPstates_t pstate = NVML_PSTATE_UNKNOWN;
  if (ok(api.performance_state, device, &pstate) &&
      static_cast<unsigned int>(pstate) <= NVML_PSTATE_15) {
    gpu.pstate = static_cast<int>(pstate);
  }
  nvmlEnableState_t persistence = NVML_FEATURE_DISABLED;
  if (ok(api.persistence_mode, device, &persistence)) {
    gpu.persistence_mode = persistence == NVML_FEATURE_ENABLED;
  }
  unsigned int mig_current = NVML_DEVICE_MIG_DISABLE;
  unsigned int mig_pending = NVML_DEVICE_MIG_DISABLE;
  if (ok(api.mig_mode, device, &mig_current, &mig_pending)) {
    gpu.mig_enabled = mig_current == NVML_DEVICE_MIG_ENABLE;
    if (*gpu.mig_enabled) {
      gpu.mig_instances = count_mig_instances(api, device);
    }
  }
  gpu.pcie_current_gen = query_link(api.pcie_current_gen, device);
  gpu.pcie_current_width = query_link(api.pcie_current_width, device);
  gpu.pcie_max_gen = query_link(api.pcie_max_gen, device);
  gpu.pcie_max_width = query_link(api.pcie_max_width, device);
  gpu.nvlinks = query_nvlinks(api, device);
}

std::string_view p2p_name(nvmlGpuP2PStatus_t status) {
  const auto value = static_cast<std::size_t>(status);
  return value < detail::kP2pStatusNames.size() ? detail::kP2pStatusNames[value]
                                                : detail::kP2pStatusNames.back();
}

// `devices[i]` is null where GPU i could not be opened; its pairs are left out.
std::vector<P2pStatus> query_p2p(const Api& api, const std::vector<nvmlDevice_t>& devices,
                                 std::size_t self, const std::vector<NvmlGpu>& gpus) {
  std::vector<P2pStatus> pairs;
  for (std::size_t peer = 0; peer < devices.size(); ++peer) {
    if (peer == self || devices[peer] == nullptr) {
      continue;
    }
    nvmlGpuP2PStatus_t read = NVML_P2P_STATUS_UNKNOWN;
    nvmlGpuP2PStatus_t write = NVML_P2P_STATUS_UNKNOWN;
    if (ok(api.p2p_status, devices[self], devices[peer], NVML_P2P_CAPS_INDEX_READ, &read) &&
        ok(api.p2p_status, devices[self], devices[peer], NVML_P2P_CAPS_INDEX_WRITE, &write)) {
      pairs.push_back(
          P2pStatus{gpus[peer].pci, std::string(p2p_name(read)), std::string(p2p_name(write))});
    }
  }
  return pairs;
}

// Runs between nvmlInit_v2 and nvmlShutdown.
void query_gpus(const Api& api, NvmlReport& report) {
  unsigned int count = 0;
  if (const nvmlReturn_t rc = api.device_count(&count); rc != NVML_SUCCESS) {
    report.reason = failure(api, "nvmlDeviceGetCount_v2", rc);
    return;
  }
  report.available = true;
  char version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  if (ok(api.driver_version, version, static_cast<unsigned int>(sizeof version))) {
    report.driver_version = text(version, sizeof version);
  }
  // Handles and addresses first: every GPU's P2P entries name their peers by address.
  std::vector<nvmlDevice_t> devices(count, nullptr);
  report.gpus.resize(count);
  for (unsigned int i = 0; i < count; ++i) {
    report.gpus[i].index = static_cast<int>(i);
    nvmlPciInfo_t pci{};
    if (api.handle_by_index(i, &devices[i]) != NVML_SUCCESS ||
        api.pci_info(devices[i], &pci) != NVML_SUCCESS) {
      devices[i] = nullptr;
      continue;
    }
    report.gpus[i].pci = normalise_pci(pci);
  }
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (devices[i] != nullptr) {
      query_gpu(api, devices[i], report.gpus[i]);
      report.gpus[i].p2p = query_p2p(api, devices, i, report.gpus);
    }
  }
}

}  // namespace

NvmlReport query_nvml(const std::string& library) {
  NvmlReport report;
  report.library = library;
  if (library.empty()) {
    // dlopen("") would hand back the program itself rather than fail.
    report.reason = "no NVML library named";
    return report;
  }
  const std::lock_guard lock(nvml_mutex());
  const Library handle(dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (handle == nullptr) {
    const char* error = dlerror();
    report.reason = error != nullptr ? error : library + ": cannot be loaded";
    return report;
  }
  Api api;
  if (const std::string missing = resolve(handle.get(), api); !missing.empty()) {
    report.reason = fmt::format("{}: missing symbol {}", library, missing);
    return report;
  }
  if (const nvmlReturn_t rc = api.init(); rc != NVML_SUCCESS) {
    report.reason = failure(api, "nvmlInit_v2", rc);
    return report;
  }
  query_gpus(api, report);
  api.shutdown();
  return report;
}

}  // namespace acco::topo
// NOLINTEND(cppcoreguidelines-pro-bounds-array-to-pointer-decay)
