// A stand-in libnvidia-ml.so.1 so the NVML path is tested on machines without a GPU.
// nvmlInit_v2 reads the JSON file named by ACCO_FAKE_NVML_CONFIG; every other call answers from it:
//   {"init_error": 9,                      (optional: nvmlInit_v2 fails with this code)
//    "driver_version": "580.95.05",
//    "gpus": [{"pci": "00000000:18:00.0", "name": "...", "uuid": "GPU-...",
//              "memory_total_bytes": 85520809984, "pstate": 0, "persistence": true,
//              "mig": false, "mig_instances": 0,
//              "mig_pending": true,            (the pending mode differs from the current:
//                                               a change waiting for a GPU reset)
//              "mig_devices": [{"slot": 0, "name": "NVIDIA H100 80GB HBM3 MIG 3g.40gb",
//                               "uuid": "MIG-...", "memory_total_bytes": 42949672960,
//                               "gpu_instance": 2, "compute_instance": 0}],
//                                              (MIG instances with handles of their own, at
//                                               their slots; without it the parent's handle
//                                               stands in for each of mig_instances)
//              "pcie": {"current_gen": 5, "current_width": 16, "max_gen": 5, "max_width": 16},
//              "nvlinks": [{"active": true, "remote_pci": "00000000:05:00.0", "version": 5,
//                           "tx_kib": 1024, "rx_kib": 2048, "speed_mbps": 26562}],
//              "p2p": {"*": ["OK", "OK"], "00000000:2a:00.0": ["CNS", "CNS"]},
//              "telemetry": {                  (all optional; an absent value answers
//                                               NOT_SUPPORTED, 0xFFFFFFFF and 150 % are fine)
//                "temperature": 45,            (C, nvmlDeviceGetTemperature)
//                "thresholds": {"shutdown": 92, "slowdown": 89, "mem_max": 95, "gpu_max": 87},
//                "margin": 42,                 (C, nvmlDeviceGetMarginTemperature)
//                "power_mw": 350000, "energy_mj": 123456789,
//                "power_limits_mw": {"enforced": 700000, "requested": 650000,
//                                    "default": 700000, "min": 200000, "max": 700000},
//                "clocks_mhz": {"sm": 1980, "memory": 2619, "sm_max": 1980, "memory_max": 2619},
//                "utilization": {"gpu": 87, "memory": 40},   (percent)
//                "memory_used_bytes": 1073741824,
//                "pcie_kb_per_second": {"tx": 1000, "rx": 2000},
//                "pcie_replays": 3, "clocks_event_reasons": 4,
//                "fields": {"74": 1500000000, "82": 50}},   (nvmlDeviceGetFieldValues by id,
//                                               unsigned long long; per-link 138, 139 and 164
//                                               come from the nvlinks entries; others answer
//                                               NOT_SUPPORTED in the entry)
//              "unsupported": ["pstate"],       (queries answering NOT_SUPPORTED: name, uuid,
//                                                memory, pstate, persistence, mig, pcie, nvlink,
//                                                p2p, temperature, thresholds, margin, power,
//                                                energy, power_limits, clocks, utilization,
//                                                pcie_throughput, replays, clocks_event_reasons,
//                                                fields, events, and the controls
//                                                set_power_limit and locked_clocks)
//              "errors": {"power": 4},          (queries answering this NVML code instead;
//                                                {"set_power_limit": 4} is a non-root caller)
//              "flaky": {"power": 3},           (every 3rd call of the query answers
//                                                NVML_ERROR_UNKNOWN, the others succeed: a
//                                                sensor that fails and recovers)
//              "lost_after_reads": 2,           (after this many answered
//                                                nvmlDeviceGetTemperature calls, every call
//                                                about the GPU answers GPU_IS_LOST)
//              "xids": [79],                    (XID events pending from init, delivered one
//                                                per nvmlEventSetWait_v2 once registered)
//              "lost": false}]}                 (true: its handle answers GPU_IS_LOST)
// P2P statuses are [read, write] by peer address as written in "pci"; "*" covers other peers.
// Controls: nvmlDeviceSetPowerManagementLimit answers INVALID_ARGUMENT outside
// power_limits_mw [min, max] (NOT_SUPPORTED when either is absent) and otherwise sets what
// "requested" and "enforced" answer. nvmlDeviceSetGpuLockedClocks answers INVALID_ARGUMENT when
// min > max or max > clocks_mhz.sm_max (NOT_SUPPORTED when sm_max is absent); while clocks are
// locked the SM clock reads min(clocks_mhz.sm, locked max). nvmlDeviceResetGpuLockedClocks
// unlocks them.
// Persistence: a driver keeps these settings after the process that made them exits. When
// ACCO_FAKE_NVML_STATE names a file, nvmlInit_v2 loads it if it exists, overriding the config for
// the GPUs it names, and every successful set or reset rewrites it (a temporary file, renamed):
//   {"gpus": {"GPU-...": {"power_limit_mw": 150000,      (requested and enforced; absent: the
//                                                        config's)
//                         "locked_clocks_mhz": {"min": 900, "max": 1200}}}}   (absent: unlocked)
// Init and shutdown are reference counted as in the real library. Test-only export:
// acco_fake_nvml_device_calls(index) counts the calls about GPU `index` since init.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "nvml_api.hpp"
#include "p2p_status_names.hpp"

// Completes NVML's opaque handle type: a handle points at its GPU's configuration.
struct nvmlDevice_st {
  struct Link {
    bool active = false;
    std::string remote_pci;    // empty: the remote query answers NOT_SUPPORTED
    unsigned int version = 0;  // 0: the version query answers NOT_SUPPORTED
    std::map<unsigned int, unsigned long long> fields;  // 138, 139, 164 by id
  };

  std::string pci;
  std::string name;
  std::string uuid;
  unsigned long long memory_total_bytes = 0;
  unsigned int pstate = 0;
  bool persistence = false;
  bool mig = false;
  bool mig_pending = false;
  unsigned int mig_instances = 0;
  // MIG instances by slot, with handles of their own (shared so a GPU's copy keeps them).
  std::map<unsigned int, std::shared_ptr<nvmlDevice_st>> mig_devices;
  int gpu_instance = -1;  // a MIG instance's ids; -1 on a GPU
  int compute_instance = -1;
  unsigned int pcie_current_gen = 0;
  unsigned int pcie_current_width = 0;
  unsigned int pcie_max_gen = 0;
  unsigned int pcie_max_width = 0;
  std::vector<Link> nvlinks;
  std::map<std::string, std::pair<nvmlGpuP2PStatus_t, nvmlGpuP2PStatus_t>> p2p;
  std::set<std::string> unsupported;
  std::map<std::string, nvmlReturn_t> errors;
  std::map<std::string, std::pair<long long, long long>> flaky;  // query -> period, calls
  bool lost = false;
  nlohmann::json telemetry;
  long long lost_after_reads = -1;  // -1: never
  long long temperature_reads = 0;
  unsigned long long calls = 0;
  std::vector<unsigned long long> xids;  // pending, oldest first
  // nvmlDeviceSetGpuLockedClocks's [min, max] MHz, while clocks are locked.
  std::optional<std::pair<unsigned int, unsigned int>> locked_clocks_mhz;
};

// An event set: the GPUs registered for XID events.
struct nvmlEventSet_st {
  std::vector<nvmlDevice_t> devices;
};

namespace {

using nlohmann::json;

// What an A100 or H100 reports as its MIG device slots.
constexpr unsigned int kMigSlots = 7;

struct State {
  bool initialised = false;
  int references = 0;
  std::string driver_version;
  std::vector<nvmlDevice_st> gpus;
  std::string state_path;  // ACCO_FAKE_NVML_STATE at init; empty: settings die with the process
};

State& state() {
  static State instance;
  return instance;
}

nvmlGpuP2PStatus_t p2p_status(const std::string& name) {
  const auto& names = acco::topo::detail::kP2pStatusNames;
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) {
    throw std::invalid_argument("unknown P2P status '" + name + "'");
  }
  return static_cast<nvmlGpuP2PStatus_t>(it - names.begin());
}

nvmlDevice_st parse_gpu(const json& config) {
  nvmlDevice_st gpu;
  gpu.pci = config.at("pci").get<std::string>();
  gpu.name = config.value("name", "");
  gpu.uuid = config.value("uuid", "");
  gpu.memory_total_bytes = config.value("memory_total_bytes", 0ULL);
  gpu.pstate = config.value("pstate", 0U);
  gpu.persistence = config.value("persistence", false);
  gpu.mig = config.value("mig", false);
  gpu.mig_instances = config.value("mig_instances", 0U);
  gpu.mig_pending = config.value("mig_pending", false);
  for (const json& mig : config.value("mig_devices", json::array())) {
    auto instance = std::make_shared<nvmlDevice_st>();
    instance->pci = gpu.pci;
    instance->name = mig.value("name", "");
    instance->uuid = mig.value("uuid", "");
    instance->memory_total_bytes = mig.value("memory_total_bytes", 0ULL);
    instance->gpu_instance = mig.value("gpu_instance", -1);
    instance->compute_instance = mig.value("compute_instance", -1);
    instance->telemetry = json::object();
    gpu.mig_devices[mig.at("slot").get<unsigned int>()] = std::move(instance);
  }
  if (!gpu.mig_devices.empty()) {
    gpu.mig_instances = static_cast<unsigned int>(gpu.mig_devices.size());
  }
  const json pcie = config.value("pcie", json::object());
  gpu.pcie_current_gen = pcie.value("current_gen", 0U);
  gpu.pcie_current_width = pcie.value("current_width", 0U);
  gpu.pcie_max_gen = pcie.value("max_gen", 0U);
  gpu.pcie_max_width = pcie.value("max_width", 0U);
  for (const json& link : config.value("nvlinks", json::array())) {
    nvmlDevice_st::Link entry{
        link.at("active").get<bool>(), link.value("remote_pci", ""), link.value("version", 0U), {}};
    for (const auto& [id, key] : {std::pair{NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, "tx_kib"},
                                  std::pair{NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, "rx_kib"},
                                  std::pair{NVML_FI_DEV_NVLINK_GET_SPEED, "speed_mbps"}}) {
      if (link.contains(key)) {
        entry.fields[static_cast<unsigned int>(id)] = link.at(key).get<unsigned long long>();
      }
    }
    gpu.nvlinks.push_back(std::move(entry));
  }
  const json p2p = config.value("p2p", json::object());
  for (const auto& [peer, statuses] : p2p.items()) {
    gpu.p2p[peer] = {p2p_status(statuses.at(0).get<std::string>()),
                     p2p_status(statuses.at(1).get<std::string>())};
  }
  gpu.unsupported = config.value("unsupported", std::set<std::string>{});
  gpu.lost = config.value("lost", false);
  const json errors = config.value("errors", json::object());
  for (const auto& [query, code] : errors.items()) {
    gpu.errors[query] = static_cast<nvmlReturn_t>(code.get<int>());
  }
  const json flaky = config.value("flaky", json::object());
  for (const auto& [query, period] : flaky.items()) {
    gpu.flaky[query] = {std::max(1LL, period.get<long long>()), 0};
  }
  gpu.telemetry = config.value("telemetry", json::object());
  gpu.lost_after_reads = config.value("lost_after_reads", -1LL);
  gpu.xids = config.value("xids", std::vector<unsigned long long>{});
  return gpu;
}

constexpr const char* kRequestedLimit = "/power_limits_mw/requested";
constexpr const char* kEnforcedLimit = "/power_limits_mw/enforced";

// Applies the settings saved in `saved` to the GPUs they name.
void apply_settings(const json& saved, std::vector<nvmlDevice_st>& gpus) {
  const json by_uuid = saved.value("gpus", json::object());
  for (nvmlDevice_st& gpu : gpus) {
    if (gpu.uuid.empty() || !by_uuid.contains(gpu.uuid)) {
      continue;
    }
    const json& settings = by_uuid.at(gpu.uuid);
    if (settings.contains("power_limit_mw")) {
      const auto limit = settings.at("power_limit_mw").get<unsigned int>();
      gpu.telemetry[json::json_pointer(kRequestedLimit)] = limit;
      gpu.telemetry[json::json_pointer(kEnforcedLimit)] = limit;
    }
    gpu.locked_clocks_mhz.reset();
    if (settings.contains("locked_clocks_mhz")) {
      const json& clocks = settings.at("locked_clocks_mhz");
      gpu.locked_clocks_mhz = {clocks.at("min").get<unsigned int>(),
                               clocks.at("max").get<unsigned int>()};
    }
  }
}

// Applies the settings a previous process left in `path`, when the file exists.
void load_settings(const std::string& path, std::vector<nvmlDevice_st>& gpus) {
  std::ifstream in(path);
  if (!in) {
    return;
  }
  try {
    apply_settings(json::parse(in), gpus);
  } catch (const json::exception& e) {
    throw std::runtime_error("ACCO_FAKE_NVML_STATE " + path + ": " + e.what());
  }
}

// Writes every GPU's settings to state().state_path, when one is named: a temporary file renamed
// over the old one, so a reader never sees half a file.
nvmlReturn_t save_settings() {
  const State& s = state();
  if (s.state_path.empty()) {
    return NVML_SUCCESS;
  }
  json by_uuid = json::object();
  for (const nvmlDevice_st& gpu : s.gpus) {
    if (gpu.uuid.empty()) {
      continue;
    }
    json settings = json::object();
    if (const json::json_pointer limit(kRequestedLimit); gpu.telemetry.contains(limit)) {
      settings["power_limit_mw"] = gpu.telemetry.at(limit);
    }
    if (gpu.locked_clocks_mhz.has_value()) {
      settings["locked_clocks_mhz"] = {{"min", gpu.locked_clocks_mhz->first},
                                       {"max", gpu.locked_clocks_mhz->second}};
    }
    by_uuid[gpu.uuid] = settings;
  }
  const std::string temporary = s.state_path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << json{{"gpus", by_uuid}}.dump(2) << '\n';
    if (!out.flush()) {
      std::fputs(("fake NVML: cannot write " + temporary + "\n").c_str(), stderr);
      return NVML_ERROR_UNKNOWN;
    }
  }
  if (std::rename(temporary.c_str(), s.state_path.c_str()) != 0) {
    std::fputs(("fake NVML: cannot rename " + temporary + " to " + s.state_path + "\n").c_str(),
               stderr);
    return NVML_ERROR_UNKNOWN;
  }
  return NVML_SUCCESS;
}

// Loads the configuration into state(); returns nvmlInit_v2's answer.
nvmlReturn_t load(const char* path) {
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error(std::string("cannot open ") + path);
  }
  const json config = json::parse(in);
  if (config.contains("init_error")) {
    return static_cast<nvmlReturn_t>(config.at("init_error").get<int>());
  }
  State fresh;
  fresh.driver_version = config.value("driver_version", "");
  for (const json& gpu : config.value("gpus", json::array())) {
    fresh.gpus.push_back(parse_gpu(gpu));
  }
  if (const char* settings = std::getenv("ACCO_FAKE_NVML_STATE"); settings != nullptr) {
    fresh.state_path = settings;
    load_settings(fresh.state_path, fresh.gpus);
  }
  fresh.initialised = true;
  fresh.references = 1;
  state() = std::move(fresh);
  return NVML_SUCCESS;
}

// Whether a call about `device` may answer, and if not, what it answers.
nvmlReturn_t check(nvmlDevice_t device, const char* query) {
  const State& s = state();
  if (!s.initialised) {
    return NVML_ERROR_UNINITIALIZED;
  }
  const bool ours = std::any_of(s.gpus.begin(), s.gpus.end(), [device](const nvmlDevice_st& gpu) {
    return &gpu == device ||
           std::any_of(gpu.mig_devices.begin(), gpu.mig_devices.end(),
                       [device](const auto& slot) { return slot.second.get() == device; });
  });
  if (!ours) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  ++device->calls;
  if (device->lost) {
    return NVML_ERROR_GPU_IS_LOST;
  }
  if (const auto it = device->errors.find(query); it != device->errors.end()) {
    return it->second;
  }
  if (const auto it = device->flaky.find(query); it != device->flaky.end()) {
    auto& [period, calls] = it->second;
    if (++calls % period == 0) {
      return NVML_ERROR_UNKNOWN;
    }
  }
  return device->unsupported.count(query) != 0 ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS;
}

nvmlReturn_t copy(const std::string& text, char* out, unsigned int length) {
  if (out == nullptr || text.size() + 1 > length) {
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  std::memcpy(out, text.c_str(), text.size() + 1);
  return NVML_SUCCESS;
}

void fill_pci(const std::string& bus_id, nvmlPciInfo_t* pci) {
  *pci = nvmlPciInfo_t{};
  std::snprintf(pci->busId, sizeof pci->busId, "%s", bus_id.c_str());
}

nvmlReturn_t answer(unsigned int value, unsigned int* out) {
  *out = value;
  return NVML_SUCCESS;
}

// A telemetry value at `path` ("/thresholds/shutdown"), or NOT_SUPPORTED when it is absent.
template <typename T>
nvmlReturn_t telemetry(nvmlDevice_t device, const char* query, const char* path, T* out) {
  if (const nvmlReturn_t rc = check(device, query); rc != NVML_SUCCESS) {
    return rc;
  }
  const json::json_pointer pointer(path);
  if (!device->telemetry.contains(pointer)) {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  *out = device->telemetry.at(pointer).get<T>();
  return NVML_SUCCESS;
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlInit_v2(void) {
  if (state().initialised) {
    ++state().references;
    return NVML_SUCCESS;
  }
  const char* path = std::getenv("ACCO_FAKE_NVML_CONFIG");
  if (path == nullptr) {
    std::fprintf(stderr, "fake NVML: ACCO_FAKE_NVML_CONFIG is not set\n");
    return NVML_ERROR_UNKNOWN;
  }
  try {
    return load(path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake NVML: %s: %s\n", path, e.what());
    return NVML_ERROR_UNKNOWN;
  }
}

nvmlReturn_t nvmlShutdown(void) {
  if (!state().initialised) {
    return NVML_ERROR_UNINITIALIZED;
  }
  if (--state().references == 0) {
    state() = State{};
  }
  return NVML_SUCCESS;
}

// The strings the real library returns.
const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND:
      return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT:
      return "Timeout";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "Driver/library version mismatch";
    default:
      return "Unknown Error";
  }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  if (!state().initialised) {
    return NVML_ERROR_UNINITIALIZED;
  }
  return copy(state().driver_version, version, length);
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* deviceCount) {
  if (!state().initialised) {
    return NVML_ERROR_UNINITIALIZED;
  }
  return answer(static_cast<unsigned int>(state().gpus.size()), deviceCount);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  State& s = state();
  if (!s.initialised) {
    return NVML_ERROR_UNINITIALIZED;
  }
  if (index >= s.gpus.size()) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  ++s.gpus[index].calls;
  if (s.gpus[index].lost) {
    return NVML_ERROR_GPU_IS_LOST;
  }
  *device = &s.gpus[index];
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  if (const nvmlReturn_t rc = check(device, "pci"); rc != NVML_SUCCESS) {
    return rc;
  }
  fill_pci(device->pci, pci);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  const nvmlReturn_t rc = check(device, "name");
  return rc != NVML_SUCCESS ? rc : copy(device->name, name, length);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  const nvmlReturn_t rc = check(device, "uuid");
  return rc != NVML_SUCCESS ? rc : copy(device->uuid, uuid, length);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  if (const nvmlReturn_t rc = check(device, "memory"); rc != NVML_SUCCESS) {
    return rc;
  }
  const unsigned long long used = device->telemetry.value("memory_used_bytes", 0ULL);
  *memory = nvmlMemory_t{device->memory_total_bytes, device->memory_total_bytes - used, used};
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlPstates_t* pState) {
  if (const nvmlReturn_t rc = check(device, "pstate"); rc != NVML_SUCCESS) {
    return rc;
  }
  *pState = static_cast<nvmlPstates_t>(device->pstate);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t* mode) {
  if (const nvmlReturn_t rc = check(device, "persistence"); rc != NVML_SUCCESS) {
    return rc;
  }
  *mode = device->persistence ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* currentMode,
                                  unsigned int* pendingMode) {
  if (const nvmlReturn_t rc = check(device, "mig"); rc != NVML_SUCCESS) {
    return rc;
  }
  *currentMode = device->mig ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
  *pendingMode =
      device->mig != device->mig_pending ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int* count) {
  const nvmlReturn_t rc = check(device, "mig");
  return rc != NVML_SUCCESS ? rc : answer(kMigSlots, count);
}

// The fake has no MIG handles of its own; the parent's stands in for each instance.
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                 nvmlDevice_t* migDevice) {
  if (const nvmlReturn_t rc = check(device, "mig"); rc != NVML_SUCCESS) {
    return rc;
  }
  if (!device->mig_devices.empty()) {
    const auto it = device->mig_devices.find(index);
    if (it == device->mig_devices.end()) {
      return index < kMigSlots ? NVML_ERROR_NOT_FOUND : NVML_ERROR_INVALID_ARGUMENT;
    }
    *migDevice = it->second.get();
    return NVML_SUCCESS;
  }
  if (index >= device->mig_instances) {
    return NVML_ERROR_NOT_FOUND;
  }
  *migDevice = device;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int* id) {
  if (const nvmlReturn_t rc = check(device, "mig"); rc != NVML_SUCCESS) {
    return rc;
  }
  return device->gpu_instance < 0 ? NVML_ERROR_NOT_SUPPORTED
                                  : answer(static_cast<unsigned int>(device->gpu_instance), id);
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int* id) {
  if (const nvmlReturn_t rc = check(device, "mig"); rc != NVML_SUCCESS) {
    return rc;
  }
  return device->compute_instance < 0
             ? NVML_ERROR_NOT_SUPPORTED
             : answer(static_cast<unsigned int>(device->compute_instance), id);
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int* currLinkGen) {
  const nvmlReturn_t rc = check(device, "pcie");
  return rc != NVML_SUCCESS ? rc : answer(device->pcie_current_gen, currLinkGen);
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int* currLinkWidth) {
  const nvmlReturn_t rc = check(device, "pcie");
  return rc != NVML_SUCCESS ? rc : answer(device->pcie_current_width, currLinkWidth);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int* maxLinkGen) {
  const nvmlReturn_t rc = check(device, "pcie");
  return rc != NVML_SUCCESS ? rc : answer(device->pcie_max_gen, maxLinkGen);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int* maxLinkWidth) {
  const nvmlReturn_t rc = check(device, "pcie");
  return rc != NVML_SUCCESS ? rc : answer(device->pcie_max_width, maxLinkWidth);
}

// Like the real library: NOT_SUPPORTED on a GPU without NVLink, INVALID_ARGUMENT past its last.
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
                                      nvmlEnableState_t* isActive) {
  if (const nvmlReturn_t rc = check(device, "nvlink"); rc != NVML_SUCCESS) {
    return rc;
  }
  if (device->nvlinks.empty()) {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  if (link >= device->nvlinks.size()) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  *isActive = device->nvlinks[link].active ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link,
                                                 nvmlPciInfo_t* pci) {
  if (const nvmlReturn_t rc = check(device, "nvlink"); rc != NVML_SUCCESS) {
    return rc;
  }
  if (link >= device->nvlinks.size() || device->nvlinks[link].remote_pci.empty()) {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  fill_pci(device->nvlinks[link].remote_pci, pci);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t device, unsigned int link,
                                        unsigned int* version) {
  if (const nvmlReturn_t rc = check(device, "nvlink"); rc != NVML_SUCCESS) {
    return rc;
  }
  if (link >= device->nvlinks.size() || device->nvlinks[link].version == 0) {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  return answer(device->nvlinks[link].version, version);
}

nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2,
                                    nvmlGpuP2PCapsIndex_t p2pIndex, nvmlGpuP2PStatus_t* p2pStatus) {
  if (const nvmlReturn_t rc = check(device1, "p2p"); rc != NVML_SUCCESS) {
    return rc;
  }
  if (const nvmlReturn_t rc = check(device2, "p2p"); rc != NVML_SUCCESS) {
    return rc;
  }
  auto it = device1->p2p.find(device2->pci);
  if (it == device1->p2p.end()) {
    it = device1->p2p.find("*");
  }
  if (it == device1->p2p.end()) {
    *p2pStatus = NVML_P2P_STATUS_NOT_SUPPORTED;
  } else {
    *p2pStatus = p2pIndex == NVML_P2P_CAPS_INDEX_READ ? it->second.first : it->second.second;
  }
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
                                      unsigned int* temp) {
  if (const nvmlReturn_t rc = check(device, "temperature"); rc != NVML_SUCCESS) {
    return rc;
  }
  if (sensorType != NVML_TEMPERATURE_GPU) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (device->lost_after_reads >= 0 && device->temperature_reads >= device->lost_after_reads) {
    device->lost = true;
    return NVML_ERROR_GPU_IS_LOST;
  }
  const nvmlReturn_t rc = telemetry(device, "temperature", "/temperature", temp);
  ++device->temperature_reads;
  return rc;
}

nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t device,
                                               nvmlTemperatureThresholds_t thresholdType,
                                               unsigned int* temp) {
  switch (thresholdType) {
    case NVML_TEMPERATURE_THRESHOLD_SHUTDOWN:
      return telemetry(device, "thresholds", "/thresholds/shutdown", temp);
    case NVML_TEMPERATURE_THRESHOLD_SLOWDOWN:
      return telemetry(device, "thresholds", "/thresholds/slowdown", temp);
    case NVML_TEMPERATURE_THRESHOLD_MEM_MAX:
      return telemetry(device, "thresholds", "/thresholds/mem_max", temp);
    case NVML_TEMPERATURE_THRESHOLD_GPU_MAX:
      return telemetry(device, "thresholds", "/thresholds/gpu_max", temp);
  }
  return NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvmlDeviceGetMarginTemperature(nvmlDevice_t device,
                                            nvmlMarginTemperature_t* marginTempInfo) {
  if (marginTempInfo->version != nvmlMarginTemperature_v1) {
    return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  }
  return telemetry(device, "margin", "/margin", &marginTempInfo->marginTemperature);
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power) {
  return telemetry(device, "power", "/power_mw", power);
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* energy) {
  return telemetry(device, "energy", "/energy_mj", energy);
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* limit) {
  return telemetry(device, "power_limits", "/power_limits_mw/enforced", limit);
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int* limit) {
  return telemetry(device, "power_limits", "/power_limits_mw/requested", limit);
}

nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device,
                                                      unsigned int* defaultLimit) {
  return telemetry(device, "power_limits", "/power_limits_mw/default", defaultLimit);
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device,
                                                          unsigned int* minLimit,
                                                          unsigned int* maxLimit) {
  if (const nvmlReturn_t rc = telemetry(device, "power_limits", "/power_limits_mw/min", minLimit);
      rc != NVML_SUCCESS) {
    return rc;
  }
  return telemetry(device, "power_limits", "/power_limits_mw/max", maxLimit);
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                    unsigned int* clock) {
  if (type == NVML_CLOCK_SM) {
    const nvmlReturn_t rc = telemetry(device, "clocks", "/clocks_mhz/sm", clock);
    if (rc == NVML_SUCCESS && device->locked_clocks_mhz.has_value()) {
      *clock = std::min(*clock, device->locked_clocks_mhz->second);
    }
    return rc;
  }
  if (type == NVML_CLOCK_MEM) {
    return telemetry(device, "clocks", "/clocks_mhz/memory", clock);
  }
  return NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                       unsigned int* clock) {
  if (type == NVML_CLOCK_SM) {
    return telemetry(device, "clocks", "/clocks_mhz/sm_max", clock);
  }
  if (type == NVML_CLOCK_MEM) {
    return telemetry(device, "clocks", "/clocks_mhz/memory_max", clock);
  }
  return NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
  if (const nvmlReturn_t rc =
          telemetry(device, "utilization", "/utilization/gpu", &utilization->gpu);
      rc != NVML_SUCCESS) {
    return rc;
  }
  return telemetry(device, "utilization", "/utilization/memory", &utilization->memory);
}

nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, nvmlPcieUtilCounter_t counter,
                                         unsigned int* value) {
  return counter == NVML_PCIE_UTIL_TX_BYTES
             ? telemetry(device, "pcie_throughput", "/pcie_kb_per_second/tx", value)
             : telemetry(device, "pcie_throughput", "/pcie_kb_per_second/rx", value);
}

nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t device, unsigned int* value) {
  return telemetry(device, "replays", "/pcie_replays", value);
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                    unsigned long long* clocksEventReasons) {
  return telemetry(device, "clocks_event_reasons", "/clocks_event_reasons", clocksEventReasons);
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                       unsigned long long* clocksThrottleReasons) {
  return telemetry(device, "clocks_event_reasons", "/clocks_event_reasons", clocksThrottleReasons);
}

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount,
                                      nvmlFieldValue_t* values) {
  if (const nvmlReturn_t rc = check(device, "fields"); rc != NVML_SUCCESS) {
    return rc;
  }
  const json fields = device->telemetry.value("fields", json::object());
  for (int i = 0; i < valuesCount; ++i) {
    nvmlFieldValue_t& field = values[i];
    field.timestamp = 1700000000000000LL;
    field.latencyUsec = 0;
    field.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
    field.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    const bool per_link = field.fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX ||
                          field.fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX ||
                          field.fieldId == NVML_FI_DEV_NVLINK_GET_SPEED;
    if (per_link) {
      if (field.scopeId < device->nvlinks.size()) {
        const auto& link_fields = device->nvlinks[field.scopeId].fields;
        if (const auto it = link_fields.find(field.fieldId); it != link_fields.end()) {
          field.value.ullVal = it->second;
          field.nvmlReturn = NVML_SUCCESS;
        }
      }
    } else if (const std::string id = std::to_string(field.fieldId); fields.contains(id)) {
      field.value.ullVal = fields.at(id).get<unsigned long long>();
      field.nvmlReturn = NVML_SUCCESS;
    }
  }
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceSetPowerManagementLimit(nvmlDevice_t device, unsigned int limit) {
  if (const nvmlReturn_t rc = check(device, "set_power_limit"); rc != NVML_SUCCESS) {
    return rc;
  }
  const json::json_pointer min("/power_limits_mw/min");
  const json::json_pointer max("/power_limits_mw/max");
  if (!device->telemetry.contains(min) || !device->telemetry.contains(max)) {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  if (limit < device->telemetry.at(min).get<unsigned int>() ||
      limit > device->telemetry.at(max).get<unsigned int>()) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  device->telemetry[json::json_pointer(kRequestedLimit)] = limit;
  device->telemetry[json::json_pointer(kEnforcedLimit)] = limit;
  return save_settings();
}

nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t device, unsigned int minGpuClockMHz,
                                          unsigned int maxGpuClockMHz) {
  if (const nvmlReturn_t rc = check(device, "locked_clocks"); rc != NVML_SUCCESS) {
    return rc;
  }
  const json::json_pointer sm_max("/clocks_mhz/sm_max");
  if (!device->telemetry.contains(sm_max)) {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  if (minGpuClockMHz > maxGpuClockMHz ||
      maxGpuClockMHz > device->telemetry.at(sm_max).get<unsigned int>()) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  device->locked_clocks_mhz = {minGpuClockMHz, maxGpuClockMHz};
  return save_settings();
}

nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t device) {
  if (const nvmlReturn_t rc = check(device, "locked_clocks"); rc != NVML_SUCCESS) {
    return rc;
  }
  device->locked_clocks_mhz.reset();
  return save_settings();
}

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  if (!state().initialised) {
    return NVML_ERROR_UNINITIALIZED;
  }
  *set = new nvmlEventSet_st{};  // NOLINT(cppcoreguidelines-owning-memory): NVML's C ownership
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long eventTypes,
                                      nvmlEventSet_t set) {
  if (const nvmlReturn_t rc = check(device, "events"); rc != NVML_SUCCESS) {
    return rc;
  }
  if ((eventTypes & static_cast<unsigned long long>(nvmlEventTypeXidCriticalError)) == 0) {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  set->devices.push_back(device);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data,
                                 unsigned int /*timeoutms*/) {
  for (nvmlDevice_t device : set->devices) {
    if (!device->xids.empty()) {
      *data =
          nvmlEventData_t{device, static_cast<unsigned long long>(nvmlEventTypeXidCriticalError),
                          device->xids.front(), 0, 0};
      device->xids.erase(device->xids.begin());
      return NVML_SUCCESS;
    }
  }
  return NVML_ERROR_TIMEOUT;
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  delete set;  // NOLINT(cppcoreguidelines-owning-memory)
  return NVML_SUCCESS;
}

// Test-only: how many calls named GPU `index` since nvmlInit_v2 (0 for an unknown index).
unsigned long long acco_fake_nvml_device_calls(unsigned int index) {
  const State& s = state();
  return index < s.gpus.size() ? s.gpus[index].calls : 0;
}

}  // extern "C"
