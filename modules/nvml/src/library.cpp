// The one file that loads NVML. libnvidia-ml.so.1 comes with the driver, so it is opened with
// dlopen at run time and its entry points resolved with dlsym: acco builds and runs without it.
#include "acco/nvml/library.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string_view>
#include <utility>

#include <dlfcn.h>
#include <fmt/format.h>

#include "error_map.hpp"
#include "nvml_api.hpp"

// NVML fills fixed-size char arrays that acco declares as nvml.h does; passing them decays.
// NOLINTBEGIN(cppcoreguidelines-pro-bounds-array-to-pointer-decay)
namespace acco::nvml {

struct Library::Api {
  // Required: without these there is nothing to report.
  decltype(&nvmlInit_v2) init = nullptr;
  decltype(&nvmlShutdown) shutdown = nullptr;
  decltype(&nvmlErrorString) error_string = nullptr;
  decltype(&nvmlDeviceGetCount_v2) device_count = nullptr;
  decltype(&nvmlDeviceGetHandleByIndex_v2) handle_by_index = nullptr;
  decltype(&nvmlDeviceGetPciInfo_v3) pci_info = nullptr;
  // Optional: older drivers lack some; their calls answer kUnsupported.
  decltype(&nvmlSystemGetDriverVersion) driver_version = nullptr;
  decltype(&nvmlDeviceGetName) name = nullptr;
  decltype(&nvmlDeviceGetUUID) uuid = nullptr;
  decltype(&nvmlDeviceGetMemoryInfo) memory_info = nullptr;
  decltype(&nvmlDeviceGetPerformanceState) performance_state = nullptr;
  decltype(&nvmlDeviceGetPersistenceMode) persistence_mode = nullptr;
  decltype(&nvmlDeviceGetMigMode) mig_mode = nullptr;
  decltype(&nvmlDeviceGetMaxMigDeviceCount) max_mig_device_count = nullptr;
  decltype(&nvmlDeviceGetMigDeviceHandleByIndex) mig_device_handle = nullptr;
  decltype(&nvmlDeviceGetGpuInstanceId) gpu_instance_id = nullptr;
  decltype(&nvmlDeviceGetComputeInstanceId) compute_instance_id = nullptr;
  decltype(&nvmlDeviceGetCurrPcieLinkGeneration) pcie_current_gen = nullptr;
  decltype(&nvmlDeviceGetCurrPcieLinkWidth) pcie_current_width = nullptr;
  decltype(&nvmlDeviceGetMaxPcieLinkGeneration) pcie_max_gen = nullptr;
  decltype(&nvmlDeviceGetMaxPcieLinkWidth) pcie_max_width = nullptr;
  decltype(&nvmlDeviceGetNvLinkState) nvlink_state = nullptr;
  decltype(&nvmlDeviceGetNvLinkRemotePciInfo_v2) nvlink_remote_pci = nullptr;
  decltype(&nvmlDeviceGetNvLinkVersion) nvlink_version = nullptr;
  decltype(&nvmlDeviceGetP2PStatus) p2p_status = nullptr;
  decltype(&nvmlDeviceGetTemperature) temperature = nullptr;
  decltype(&nvmlDeviceGetTemperatureThreshold) temperature_threshold = nullptr;
  decltype(&nvmlDeviceGetMarginTemperature) margin_temperature = nullptr;
  decltype(&nvmlDeviceGetPowerUsage) power_usage = nullptr;
  decltype(&nvmlDeviceGetTotalEnergyConsumption) total_energy = nullptr;
  decltype(&nvmlDeviceGetEnforcedPowerLimit) enforced_power_limit = nullptr;
  decltype(&nvmlDeviceGetPowerManagementLimit) power_management_limit = nullptr;
  decltype(&nvmlDeviceGetPowerManagementDefaultLimit) power_management_default_limit = nullptr;
  decltype(&nvmlDeviceGetPowerManagementLimitConstraints) power_limit_constraints = nullptr;
  decltype(&nvmlDeviceGetClockInfo) clock_info = nullptr;
  decltype(&nvmlDeviceGetMaxClockInfo) max_clock_info = nullptr;
  decltype(&nvmlDeviceGetUtilizationRates) utilization = nullptr;
  decltype(&nvmlDeviceGetPcieThroughput) pcie_throughput = nullptr;
  decltype(&nvmlDeviceGetPcieReplayCounter) pcie_replay_counter = nullptr;
  // The newer name first: drivers of API 13 deprecate ...ThrottleReasons.
  decltype(&nvmlDeviceGetCurrentClocksEventReasons) clocks_event_reasons = nullptr;
  decltype(&nvmlDeviceGetCurrentClocksThrottleReasons) clocks_throttle_reasons = nullptr;
  decltype(&nvmlDeviceGetFieldValues) field_values = nullptr;
  decltype(&nvmlDeviceSetPowerManagementLimit) set_power_management_limit = nullptr;
  decltype(&nvmlDeviceSetGpuLockedClocks) set_gpu_locked_clocks = nullptr;
  decltype(&nvmlDeviceResetGpuLockedClocks) reset_gpu_locked_clocks = nullptr;
  decltype(&nvmlEventSetCreate) event_set_create = nullptr;
  decltype(&nvmlDeviceRegisterEvents) register_events = nullptr;
  decltype(&nvmlEventSetWait_v2) event_set_wait = nullptr;
  decltype(&nvmlEventSetFree) event_set_free = nullptr;
};

namespace {

// NVML has had thread-safety bugs (races between init, shutdown and queries from several
// threads), so every call into it from any Library happens under this one lock.
std::mutex& nvml_mutex() {
  static std::mutex mutex;
  return mutex;
}

template <typename Fn>
void bind(void* library, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(library, name));
}

// Fills `api` from `library`; returns the first required symbol that is missing, or "".
std::string resolve(void* library, Library::Api& api) {
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
  bind(library, "nvmlDeviceGetGpuInstanceId", api.gpu_instance_id);
  bind(library, "nvmlDeviceGetComputeInstanceId", api.compute_instance_id);
  bind(library, "nvmlDeviceGetCurrPcieLinkGeneration", api.pcie_current_gen);
  bind(library, "nvmlDeviceGetCurrPcieLinkWidth", api.pcie_current_width);
  bind(library, "nvmlDeviceGetMaxPcieLinkGeneration", api.pcie_max_gen);
  bind(library, "nvmlDeviceGetMaxPcieLinkWidth", api.pcie_max_width);
  bind(library, "nvmlDeviceGetNvLinkState", api.nvlink_state);
  bind(library, "nvmlDeviceGetNvLinkRemotePciInfo_v2", api.nvlink_remote_pci);
  bind(library, "nvmlDeviceGetNvLinkVersion", api.nvlink_version);
  bind(library, "nvmlDeviceGetP2PStatus", api.p2p_status);
  bind(library, "nvmlDeviceGetTemperature", api.temperature);
  bind(library, "nvmlDeviceGetTemperatureThreshold", api.temperature_threshold);
  bind(library, "nvmlDeviceGetMarginTemperature", api.margin_temperature);
  bind(library, "nvmlDeviceGetPowerUsage", api.power_usage);
  bind(library, "nvmlDeviceGetTotalEnergyConsumption", api.total_energy);
  bind(library, "nvmlDeviceGetEnforcedPowerLimit", api.enforced_power_limit);
  bind(library, "nvmlDeviceGetPowerManagementLimit", api.power_management_limit);
  bind(library, "nvmlDeviceGetPowerManagementDefaultLimit", api.power_management_default_limit);
  bind(library, "nvmlDeviceGetPowerManagementLimitConstraints", api.power_limit_constraints);
  bind(library, "nvmlDeviceGetClockInfo", api.clock_info);
  bind(library, "nvmlDeviceGetMaxClockInfo", api.max_clock_info);
  bind(library, "nvmlDeviceGetUtilizationRates", api.utilization);
  bind(library, "nvmlDeviceGetPcieThroughput", api.pcie_throughput);
  bind(library, "nvmlDeviceGetPcieReplayCounter", api.pcie_replay_counter);
  bind(library, "nvmlDeviceGetCurrentClocksEventReasons", api.clocks_event_reasons);
  bind(library, "nvmlDeviceGetCurrentClocksThrottleReasons", api.clocks_throttle_reasons);
  bind(library, "nvmlDeviceGetFieldValues", api.field_values);
  bind(library, "nvmlDeviceSetPowerManagementLimit", api.set_power_management_limit);
  bind(library, "nvmlDeviceSetGpuLockedClocks", api.set_gpu_locked_clocks);
  bind(library, "nvmlDeviceResetGpuLockedClocks", api.reset_gpu_locked_clocks);
  bind(library, "nvmlEventSetCreate", api.event_set_create);
  bind(library, "nvmlDeviceRegisterEvents", api.register_events);
  bind(library, "nvmlEventSetWait_v2", api.event_set_wait);
  bind(library, "nvmlEventSetFree", api.event_set_free);
  return missing;
}

// Calls `fn` under the lock; an absent optional entry point is kUnsupported.
template <typename Fn, typename... Args>
Status call(const Library::Api& api, const char* name, Fn fn, Args... args) {
  if (fn == nullptr) {
    return tl::unexpected(detail::missing_entry_point(name));
  }
  const std::lock_guard lock(nvml_mutex());
  const nvmlReturn_t rc = fn(args...);
  if (rc != NVML_SUCCESS) {
    return tl::unexpected(detail::nvml_error(name, rc, api.error_string(rc)));
  }
  return {};
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

nvmlDevice_t raw(void* handle) {
  return static_cast<nvmlDevice_t>(handle);
}

Result<std::uint64_t> field_value(const nvmlFieldValue_t& field, const Library::Api& api) {
  if (field.nvmlReturn != NVML_SUCCESS) {
    return tl::unexpected(detail::nvml_error(fmt::format("field {}", field.fieldId),
                                             field.nvmlReturn, api.error_string(field.nvmlReturn)));
  }
  // A union read by the type NVML says it wrote.
  // NOLINTBEGIN(cppcoreguidelines-pro-type-union-access)
  switch (field.valueType) {
    case NVML_VALUE_TYPE_DOUBLE:
      if (!(field.value.dVal >= 0)) {
        break;
      }
      return static_cast<std::uint64_t>(std::llround(field.value.dVal));
    case NVML_VALUE_TYPE_UNSIGNED_INT:
      return field.value.uiVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
      return field.value.ulVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
      return field.value.ullVal;
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
      if (field.value.sllVal < 0) {
        break;
      }
      return static_cast<std::uint64_t>(field.value.sllVal);
    case NVML_VALUE_TYPE_SIGNED_INT:
      if (field.value.siVal < 0) {
        break;
      }
      return static_cast<std::uint64_t>(field.value.siVal);
    case NVML_VALUE_TYPE_UNSIGNED_SHORT:
      return field.value.usVal;
  }
  // NOLINTEND(cppcoreguidelines-pro-type-union-access)
  return fail(Errc::kDeviceError, fmt::format("field {}: a negative or unknown value (type {})",
                                              field.fieldId, static_cast<int>(field.valueType)));
}

}  // namespace

Result<std::shared_ptr<Library>> Library::open(const std::string& library) {
  if (library.empty()) {
    // dlopen("") would hand back the program itself rather than fail.
    return fail(Errc::kUnavailable, "no NVML library named");
  }
  const std::lock_guard lock(nvml_mutex());
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return fail(Errc::kUnavailable, error != nullptr ? error : library + ": cannot be loaded");
  }
  auto api = std::make_unique<Api>();
  if (const std::string missing = resolve(handle, *api); !missing.empty()) {
    dlclose(handle);
    return fail(Errc::kUnavailable, fmt::format("{}: missing symbol {}", library, missing));
  }
  if (const nvmlReturn_t rc = api->init(); rc != NVML_SUCCESS) {
    Error error = detail::nvml_error("nvmlInit_v2", rc, api->error_string(rc));
    error.code = Errc::kUnavailable;
    dlclose(handle);
    return tl::unexpected(std::move(error));
  }
  return std::shared_ptr<Library>(new Library(library, handle, std::move(api)));
}

Library::Library(std::string path, void* handle, std::unique_ptr<Api> api)
    : path_(std::move(path)), handle_(handle), api_(std::move(api)) {}

Library::~Library() {
  const std::lock_guard lock(nvml_mutex());
  api_->shutdown();
  dlclose(handle_);
}

Result<std::string> Library::driver_version() const {
  char version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlSystemGetDriverVersion", api_->driver_version, version,
                            static_cast<unsigned int>(sizeof version)));
  return text(version, sizeof version);
}

Result<unsigned int> Library::device_count() const {
  unsigned int count = 0;
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetCount_v2", api_->device_count, &count));
  return count;
}

Result<Device> Library::device(unsigned int index) const {
  nvmlDevice_t device = nullptr;
  ACCO_RETURN_IF_ERROR(
      call(*api_, "nvmlDeviceGetHandleByIndex_v2", api_->handle_by_index, index, &device));
  return Device(device);
}

Result<std::string> Library::pci_bus_id(Device device) const {
  nvmlPciInfo_t pci{};
  ACCO_RETURN_IF_ERROR(
      call(*api_, "nvmlDeviceGetPciInfo_v3", api_->pci_info, raw(device.handle_), &pci));
  return normalise_pci(pci);
}

Result<std::string> Library::name(Device device) const {
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetName", api_->name, raw(device.handle_), name,
                            static_cast<unsigned int>(sizeof name)));
  return text(name, sizeof name);
}

Result<std::string> Library::uuid(Device device) const {
  char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetUUID", api_->uuid, raw(device.handle_), uuid,
                            static_cast<unsigned int>(sizeof uuid)));
  return text(uuid, sizeof uuid);
}

Result<MemoryInfo> Library::memory_info(Device device) const {
  nvmlMemory_t memory{};
  ACCO_RETURN_IF_ERROR(
      call(*api_, "nvmlDeviceGetMemoryInfo", api_->memory_info, raw(device.handle_), &memory));
  return MemoryInfo{memory.total, memory.free, memory.used};
}

Result<int> Library::performance_state(Device device) const {
  nvmlPstates_t pstate = NVML_PSTATE_UNKNOWN;
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetPerformanceState", api_->performance_state,
                            raw(device.handle_), &pstate));
  return static_cast<int>(pstate);
}

Result<bool> Library::persistence_mode(Device device) const {
  nvmlEnableState_t mode = NVML_FEATURE_DISABLED;
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetPersistenceMode", api_->persistence_mode,
                            raw(device.handle_), &mode));
  return mode == NVML_FEATURE_ENABLED;
}

Result<MigMode> Library::mig_mode(Device device) const {
  unsigned int current = NVML_DEVICE_MIG_DISABLE;
  unsigned int pending = NVML_DEVICE_MIG_DISABLE;
  ACCO_RETURN_IF_ERROR(
      call(*api_, "nvmlDeviceGetMigMode", api_->mig_mode, raw(device.handle_), &current, &pending));
  return MigMode{.current = current == NVML_DEVICE_MIG_ENABLE,
                 .pending = pending == NVML_DEVICE_MIG_ENABLE};
}

Result<bool> Library::mig_enabled(Device device) const {
  ACCO_ASSIGN_OR_RETURN(const MigMode mode, mig_mode(device));
  return mode.current;
}

Result<unsigned int> Library::gpu_instance_id(Device mig) const {
  unsigned int id = 0;
  ACCO_RETURN_IF_ERROR(
      call(*api_, "nvmlDeviceGetGpuInstanceId", api_->gpu_instance_id, raw(mig.handle_), &id));
  return id;
}

Result<unsigned int> Library::compute_instance_id(Device mig) const {
  unsigned int id = 0;
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetComputeInstanceId", api_->compute_instance_id,
                            raw(mig.handle_), &id));
  return id;
}

Result<unsigned int> Library::max_mig_device_count(Device device) const {
  unsigned int count = 0;
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetMaxMigDeviceCount", api_->max_mig_device_count,
                            raw(device.handle_), &count));
  return count;
}

Result<Device> Library::mig_device(Device device, unsigned int slot) const {
  nvmlDevice_t instance = nullptr;
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetMigDeviceHandleByIndex", api_->mig_device_handle,
                            raw(device.handle_), slot, &instance));
  return Device(instance);
}

Result<unsigned int> Library::pcie_link(Device device, PcieLink which) const {
  unsigned int value = 0;
  switch (which) {
    case PcieLink::kCurrentGen:
      ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetCurrPcieLinkGeneration",
                                api_->pcie_current_gen, raw(device.handle_), &value));
      break;
    case PcieLink::kCurrentWidth:
      ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetCurrPcieLinkWidth", api_->pcie_current_width,
                                raw(device.handle_), &value));
      break;
    case PcieLink::kMaxGen:
      ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetMaxPcieLinkGeneration", api_->pcie_max_gen,
                                raw(device.handle_), &value));
      break;
    case PcieLink::kMaxWidth:
      ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetMaxPcieLinkWidth", api_->pcie_max_width,
                                raw(device.handle_), &value));
      break;
  }
  return value;
}

Result<bool> Library::nvlink_active(Device device, unsigned int link) const {
  nvmlEnableState_t state = NVML_FEATURE_DISABLED;
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetNvLinkState", api_->nvlink_state,
                            raw(device.handle_), link, &state));
  return state == NVML_FEATURE_ENABLED;
}

Result<std::string> Library::nvlink_remote_pci(Device device, unsigned int link) const {
  nvmlPciInfo_t pci{};
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetNvLinkRemotePciInfo_v2", api_->nvlink_remote_pci,
                            raw(device.handle_), link, &pci));
  return normalise_pci(pci);
}

Result<unsigned int> Library::nvlink_version(Device device, unsigned int link) const {
  unsigned int version = 0;
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetNvLinkVersion", api_->nvlink_version,
                            raw(device.handle_), link, &version));
  return version;
}

Result<int> Library::p2p_status(Device device, Device peer, P2pCaps caps) const {
  nvmlGpuP2PStatus_t status = NVML_P2P_STATUS_UNKNOWN;
  const nvmlGpuP2PCapsIndex_t index =
      caps == P2pCaps::kRead ? NVML_P2P_CAPS_INDEX_READ : NVML_P2P_CAPS_INDEX_WRITE;
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetP2PStatus", api_->p2p_status, raw(device.handle_),
                            raw(peer.handle_), index, &status));
  return static_cast<int>(status);
}

Result<unsigned int> Library::temperature_celsius(Device device) const {
  unsigned int value = 0;
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetTemperature", api_->temperature,
                            raw(device.handle_), NVML_TEMPERATURE_GPU, &value));
  return value;
}

Result<unsigned int> Library::temperature_threshold_celsius(Device device,
                                                            TemperatureThreshold which) const {
  unsigned int value = 0;
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetTemperatureThreshold", api_->temperature_threshold,
                            raw(device.handle_), static_cast<nvmlTemperatureThresholds_t>(which),
                            &value));
  return value;
}

Result<int> Library::margin_temperature_celsius(Device device) const {
  nvmlMarginTemperature_t margin{};
  margin.version = nvmlMarginTemperature_v1;
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetMarginTemperature", api_->margin_temperature,
                            raw(device.handle_), &margin));
  return margin.marginTemperature;
}

Result<unsigned int> Library::power_usage_milliwatts(Device device) const {
  unsigned int value = 0;
  ACCO_RETURN_IF_ERROR(
      call(*api_, "nvmlDeviceGetPowerUsage", api_->power_usage, raw(device.handle_), &value));
  return value;
}

Result<std::uint64_t> Library::total_energy_millijoules(Device device) const {
  unsigned long long value = 0;
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetTotalEnergyConsumption", api_->total_energy,
                            raw(device.handle_), &value));
  return static_cast<std::uint64_t>(value);
}

Result<unsigned int> Library::enforced_power_limit_milliwatts(Device device) const {
  unsigned int value = 0;
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetEnforcedPowerLimit", api_->enforced_power_limit,
                            raw(device.handle_), &value));
  return value;
}

Result<unsigned int> Library::power_management_limit_milliwatts(Device device) const {
  unsigned int value = 0;
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetPowerManagementLimit",
                            api_->power_management_limit, raw(device.handle_), &value));
  return value;
}

Result<unsigned int> Library::power_management_default_limit_milliwatts(Device device) const {
  unsigned int value = 0;
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetPowerManagementDefaultLimit",
                            api_->power_management_default_limit, raw(device.handle_), &value));
  return value;
}

Result<PowerLimitConstraints> Library::power_limit_constraints(Device device) const {
  PowerLimitConstraints limits;
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetPowerManagementLimitConstraints",
                            api_->power_limit_constraints, raw(device.handle_),
                            &limits.min_milliwatts, &limits.max_milliwatts));
  return limits;
}

Result<unsigned int> Library::clock_mhz(Device device, Clock clock) const {
  unsigned int value = 0;
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetClockInfo", api_->clock_info, raw(device.handle_),
                            static_cast<nvmlClockType_t>(clock), &value));
  return value;
}

Result<unsigned int> Library::max_clock_mhz(Device device, Clock clock) const {
  unsigned int value = 0;
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetMaxClockInfo", api_->max_clock_info,
                            raw(device.handle_), static_cast<nvmlClockType_t>(clock), &value));
  return value;
}

Result<Utilization> Library::utilization(Device device) const {
  nvmlUtilization_t rates{};
  ACCO_RETURN_IF_ERROR(
      call(*api_, "nvmlDeviceGetUtilizationRates", api_->utilization, raw(device.handle_), &rates));
  return Utilization{rates.gpu, rates.memory};
}

Result<unsigned int> Library::pcie_throughput_kb_per_second(Device device,
                                                            PcieDirection direction) const {
  unsigned int value = 0;
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetPcieThroughput", api_->pcie_throughput,
                            raw(device.handle_), static_cast<nvmlPcieUtilCounter_t>(direction),
                            &value));
  return value;
}

Result<unsigned int> Library::pcie_replay_counter(Device device) const {
  unsigned int value = 0;
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetPcieReplayCounter", api_->pcie_replay_counter,
                            raw(device.handle_), &value));
  return value;
}

Result<std::uint64_t> Library::clocks_event_reasons(Device device) const {
  unsigned long long reasons = 0;
  if (api_->clocks_event_reasons != nullptr) {
    ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetCurrentClocksEventReasons",
                              api_->clocks_event_reasons, raw(device.handle_), &reasons));
  } else {
    ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetCurrentClocksThrottleReasons",
                              api_->clocks_throttle_reasons, raw(device.handle_), &reasons));
  }
  return static_cast<std::uint64_t>(reasons);
}

Result<std::vector<FieldValue>> Library::field_values(
    Device device, const std::vector<FieldRequest>& requests) const {
  std::vector<nvmlFieldValue_t> fields(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    fields[i].fieldId = requests[i].field_id;
    fields[i].scopeId = requests[i].scope_id;
  }
  std::vector<FieldValue> values;
  if (requests.empty()) {
    return values;
  }
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlDeviceGetFieldValues", api_->field_values,
                            raw(device.handle_), static_cast<int>(fields.size()), fields.data()));
  values.reserve(fields.size());
  for (const nvmlFieldValue_t& field : fields) {
    values.push_back(
        FieldValue{field.fieldId, field.scopeId, field.timestamp, field_value(field, *api_)});
  }
  return values;
}

Status Library::set_power_management_limit_milliwatts(Device device,
                                                      unsigned int milliwatts) const {
  return call(*api_, "nvmlDeviceSetPowerManagementLimit", api_->set_power_management_limit,
              raw(device.handle_), milliwatts);
}

Status Library::set_gpu_locked_clocks_mhz(Device device, unsigned int min_mhz,
                                          unsigned int max_mhz) const {
  return call(*api_, "nvmlDeviceSetGpuLockedClocks", api_->set_gpu_locked_clocks,
              raw(device.handle_), min_mhz, max_mhz);
}

Status Library::reset_gpu_locked_clocks(Device device) const {
  return call(*api_, "nvmlDeviceResetGpuLockedClocks", api_->reset_gpu_locked_clocks,
              raw(device.handle_));
}

Result<EventSet> Library::create_event_set() const {
  nvmlEventSet_t set = nullptr;
  ACCO_RETURN_IF_ERROR(call(*api_, "nvmlEventSetCreate", api_->event_set_create, &set));
  return EventSet(set);
}

Status Library::register_xid_events(Device device, EventSet set) const {
  return call(*api_, "nvmlDeviceRegisterEvents", api_->register_events, raw(device.handle_),
              static_cast<unsigned long long>(nvmlEventTypeXidCriticalError),
              static_cast<nvmlEventSet_t>(set.handle_));
}

Result<std::optional<XidEvent>> Library::next_xid_event(EventSet set) const {
  if (api_->event_set_wait == nullptr) {
    return tl::unexpected(detail::missing_entry_point("nvmlEventSetWait_v2"));
  }
  nvmlEventData_t data{};
  const std::lock_guard lock(nvml_mutex());
  const nvmlReturn_t rc = api_->event_set_wait(static_cast<nvmlEventSet_t>(set.handle_), &data, 0U);
  // TIMEOUT after a zero wait is "nothing pending", not a failure.
  if (rc == NVML_ERROR_TIMEOUT) {
    return std::nullopt;
  }
  if (rc != NVML_SUCCESS) {
    return tl::unexpected(detail::nvml_error("nvmlEventSetWait_v2", rc, api_->error_string(rc)));
  }
  return XidEvent{Device(data.device), static_cast<std::uint64_t>(data.eventData)};
}

void Library::free_event_set(EventSet set) const {
  (void)call(*api_, "nvmlEventSetFree", api_->event_set_free,
             static_cast<nvmlEventSet_t>(set.handle_));
}

bool is_gpu_lost(const Error& error) {
  return error.code == Errc::kDeviceError &&
         error.message.find(detail::kGpuLostText) != std::string::npos;
}

}  // namespace acco::nvml
// NOLINTEND(cppcoreguidelines-pro-bounds-array-to-pointer-decay)
