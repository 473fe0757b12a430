// NVML (libnvidia-ml, loaded at run time) as a C++ facade with plain types: one Library per
// session, opened and initialised once and shut down when the last owner lets go, and one method
// per NVML call acco makes. This is the only door to NVML; nothing here names an NVML type.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "acco/core/result.hpp"

namespace acco::nvml {

// A GPU (or MIG instance) handle, valid while the Library that gave it is alive.
class Device {
 public:
  Device() = default;
  bool operator==(const Device&) const = default;

 private:
  friend class Library;
  explicit Device(void* handle) : handle_(handle) {}
  void* handle_ = nullptr;
};

// An NVML event set, valid until free_event_set() or the Library's end.
class EventSet {
 public:
  EventSet() = default;
  bool operator==(const EventSet&) const = default;

 private:
  friend class Library;
  explicit EventSet(void* handle) : handle_(handle) {}
  void* handle_ = nullptr;
};

// One nvmlEventTypeXidCriticalError event.
struct XidEvent {
  Device device;
  std::uint64_t xid = 0;
};

enum class PcieLink {
  kCurrentGen,
  kCurrentWidth,
  kMaxGen,
  kMaxWidth
};
enum class P2pCaps {
  kRead,
  kWrite
};
// nvmlTemperatureThresholds_t's values.
enum class TemperatureThreshold {
  kShutdown = 0,
  kSlowdown = 1,
  kMemoryMax = 2,
  kGpuMax = 3
};
// nvmlClockType_t's values.
enum class Clock {
  kSm = 1,
  kMemory = 2
};
// nvmlPcieUtilCounter_t's values: TX is device to host.
enum class PcieDirection {
  kTx = 0,
  kRx = 1
};

struct MemoryInfo {
  std::uint64_t total_bytes = 0;
  std::uint64_t free_bytes = 0;
  std::uint64_t used_bytes = 0;
};

struct Utilization {
  unsigned int gpu_percent = 0;
  unsigned int memory_percent = 0;
};

struct PowerLimitConstraints {
  unsigned int min_milliwatts = 0;
  unsigned int max_milliwatts = 0;
};

// One nvmlDeviceGetFieldValues entry: the caller names field_id (nvml.h's NVML_FI_*) and
// scope_id (the NVLink for per-link fields, else 0).
struct FieldRequest {
  unsigned int field_id = 0;
  unsigned int scope_id = 0;
};
struct FieldValue {
  unsigned int field_id = 0;
  unsigned int scope_id = 0;
  std::int64_t timestamp_micros = 0;
  // The value as an unsigned integer (a double is rounded); the field's own error otherwise,
  // mapped as every other call's (kUnsupported for NOT_SUPPORTED).
  Result<std::uint64_t> value = 0;
};

// MIG mode now and after the next GPU reset (they differ while a change waits for one).
struct MigMode {
  bool current = false;
  bool pending = false;
};

// Errors of every call, by NVML return code:
// - NOT_SUPPORTED, or an optional entry point this driver lacks: kUnsupported.
// - GPU_IS_LOST: kDeviceError with "GPU is lost" in the message (is_gpu_lost() says so).
// - INVALID_ARGUMENT: kInvalidArgument (a link or MIG slot past the device's last); NOT_FOUND:
//   kNotFound.
// - UNINITIALIZED, NO_PERMISSION, DRIVER_NOT_LOADED, LIBRARY_NOT_FOUND, FUNCTION_NOT_FOUND,
//   LIB_RM_VERSION_MISMATCH: kUnavailable; anything else kDeviceError.
// Messages read "nvmlDeviceGetPowerUsage: Not Supported (3)" (the call, nvmlErrorString, code).
//
// Thread-safety: every call into NVML, from any Library, runs under one process-wide mutex
// (NVML has had races between init, shutdown and queries).
class Library {
 public:
  // Loads `library` (a file name searched on the loader path, or a path) with dlopen, resolves
  // the entry points and calls nvmlInit_v2. Errors, all kUnavailable: an empty name ("no NVML
  // library named"), dlopen's own message, "<library>: missing symbol nvmlInit_v2" for a
  // required entry point, and "nvmlInit_v2: Driver Not Loaded (9)" when init fails.
  [[nodiscard]] static Result<std::shared_ptr<Library>> open(const std::string& library);

  // Calls nvmlShutdown and unloads the library; devices it gave become invalid.
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  Library(Library&&) = delete;
  Library& operator=(Library&&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }

  [[nodiscard]] Result<std::string> driver_version() const;
  [[nodiscard]] Result<unsigned int> device_count() const;
  [[nodiscard]] Result<Device> device(unsigned int index) const;

  // Identity. The bus id is in sysfs form, "0000:41:00.0" (lower case, a 4-digit domain unless
  // the domain needs more, as Intel VMD's do).
  [[nodiscard]] Result<std::string> pci_bus_id(Device device) const;
  [[nodiscard]] Result<std::string> name(Device device) const;
  [[nodiscard]] Result<std::string> uuid(Device device) const;

  [[nodiscard]] Result<MemoryInfo> memory_info(Device device) const;
  // The raw P-state: 0 (busiest) to 15, 32 for unknown.
  [[nodiscard]] Result<int> performance_state(Device device) const;
  [[nodiscard]] Result<bool> persistence_mode(Device device) const;
  [[nodiscard]] Result<MigMode> mig_mode(Device device) const;
  [[nodiscard]] Result<bool> mig_enabled(Device device) const;  // the current mode
  [[nodiscard]] Result<unsigned int> max_mig_device_count(Device device) const;
  [[nodiscard]] Result<Device> mig_device(Device device, unsigned int slot) const;
  // A MIG device's (from mig_device) GPU and compute instance ids; optional entry points.
  [[nodiscard]] Result<unsigned int> gpu_instance_id(Device mig) const;
  [[nodiscard]] Result<unsigned int> compute_instance_id(Device mig) const;
  [[nodiscard]] Result<unsigned int> pcie_link(Device device, PcieLink which) const;
  [[nodiscard]] Result<bool> nvlink_active(Device device, unsigned int link) const;
  [[nodiscard]] Result<std::string> nvlink_remote_pci(Device device, unsigned int link) const;
  [[nodiscard]] Result<unsigned int> nvlink_version(Device device, unsigned int link) const;
  // nvmlGpuP2PStatus_t's value: 0 OK, 1 chipset not supported, ... 6 unknown.
  [[nodiscard]] Result<int> p2p_status(Device device, Device peer, P2pCaps caps) const;

  // Telemetry, in NVML's own units (named in each function).
  [[nodiscard]] Result<unsigned int> temperature_celsius(Device device) const;  // GPU sensor
  [[nodiscard]] Result<unsigned int> temperature_threshold_celsius(
      Device device, TemperatureThreshold which) const;
  [[nodiscard]] Result<int> margin_temperature_celsius(Device device) const;  // optional symbol
  [[nodiscard]] Result<unsigned int> power_usage_milliwatts(Device device) const;
  [[nodiscard]] Result<std::uint64_t> total_energy_millijoules(Device device) const;
  [[nodiscard]] Result<unsigned int> enforced_power_limit_milliwatts(Device device) const;
  [[nodiscard]] Result<unsigned int> power_management_limit_milliwatts(Device device) const;
  [[nodiscard]] Result<unsigned int> power_management_default_limit_milliwatts(Device device) const;
  [[nodiscard]] Result<PowerLimitConstraints> power_limit_constraints(Device device) const;
  [[nodiscard]] Result<unsigned int> clock_mhz(Device device, Clock clock) const;
  [[nodiscard]] Result<unsigned int> max_clock_mhz(Device device, Clock clock) const;
  [[nodiscard]] Result<Utilization> utilization(Device device) const;
  // NVML's "KB/s" over a 20 ms window.
  [[nodiscard]] Result<unsigned int> pcie_throughput_kb_per_second(Device device,
                                                                   PcieDirection direction) const;
  [[nodiscard]] Result<unsigned int> pcie_replay_counter(Device device) const;
  // nvmlDeviceGetCurrentClocksEventReasons, or the older ...ClocksThrottleReasons; the bits of
  // acco::power::clock_event.
  [[nodiscard]] Result<std::uint64_t> clocks_event_reasons(Device device) const;
  // One nvmlDeviceGetFieldValues call; fails only when the call itself fails, each entry carries
  // its own answer. Answers are in request order.
  [[nodiscard]] Result<std::vector<FieldValue>> field_values(
      Device device, const std::vector<FieldRequest>& requests) const;

  // Controls, optional entry points (kUnsupported when the driver lacks them). Most drivers
  // allow them to root only (NO_PERMISSION: kUnavailable otherwise); a value the device does
  // not accept is kInvalidArgument and changes nothing. A setting lasts until it is changed
  // again, the driver is reloaded or the machine reboots, not just for this session.
  // nvmlDeviceSetPowerManagementLimit: the requested limit, within power_limit_constraints().
  [[nodiscard]] Status set_power_management_limit_milliwatts(Device device,
                                                             unsigned int milliwatts) const;
  // nvmlDeviceSetGpuLockedClocks: holds the GPU (SM) clock within [min_mhz, max_mhz] (Volta
  // and later).
  [[nodiscard]] Status set_gpu_locked_clocks_mhz(Device device, unsigned int min_mhz,
                                                 unsigned int max_mhz) const;
  // nvmlDeviceResetGpuLockedClocks: lets the clock float again.
  [[nodiscard]] Status reset_gpu_locked_clocks(Device device) const;

  // XID events (nvmlEventSetCreate, nvmlDeviceRegisterEvents with
  // nvmlEventTypeXidCriticalError, nvmlEventSetWait_v2 with timeout 0, nvmlEventSetFree).
  [[nodiscard]] Result<EventSet> create_event_set() const;
  [[nodiscard]] Status register_xid_events(Device device, EventSet set) const;
  // The next pending event, or nullopt when none is pending (NVML's TIMEOUT); never waits.
  [[nodiscard]] Result<std::optional<XidEvent>> next_xid_event(EventSet set) const;
  void free_event_set(EventSet set) const;

  struct Api;  // the resolved entry points, defined in library.cpp

 private:
  Library(std::string path, void* handle, std::unique_ptr<Api> api);

  std::string path_;
  void* handle_ = nullptr;
  std::unique_ptr<Api> api_;
};

// Whether `error` came from NVML_ERROR_GPU_IS_LOST: the GPU fell off the bus or its driver
// state is gone; only a reset or reboot brings it back.
[[nodiscard]] bool is_gpu_lost(const Error& error);

}  // namespace acco::nvml
