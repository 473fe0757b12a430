// A stand-in libnvidia-ml.so.1 so the NVML path is tested on machines without a GPU.
// nvmlInit_v2 reads the JSON file named by ACCO_FAKE_NVML_CONFIG; every other call answers from it:
//   {"init_error": 9,                      (optional: nvmlInit_v2 fails with this code)
//    "driver_version": "580.95.05",
//    "gpus": [{"pci": "00000000:18:00.0", "name": "...", "uuid": "GPU-...",
//              "memory_total_bytes": 85520809984, "pstate": 0, "persistence": true,
//              "mig": false, "mig_instances": 0,
//              "pcie": {"current_gen": 5, "current_width": 16, "max_gen": 5, "max_width": 16},
//              "nvlinks": [{"active": true, "remote_pci": "00000000:05:00.0", "version": 5}],
//              "p2p": {"*": ["OK", "OK"], "00000000:2a:00.0": ["CNS", "CNS"]},
//              "unsupported": ["pstate"],       (queries answering NOT_SUPPORTED: name, uuid,
//                                                memory, pstate, persistence, mig, pcie, nvlink,
//                                                p2p)
//              "lost": false}]}                 (true: its handle answers GPU_IS_LOST)
// P2P statuses are [read, write] by peer address as written in "pci"; "*" covers other peers.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "nvml_api.hpp"

// Completes NVML's opaque handle type: a handle points at its GPU's configuration.
struct nvmlDevice_st {
  struct Link {
    bool active = false;
    std::string remote_pci;    // empty: the remote query answers NOT_SUPPORTED
    unsigned int version = 0;  // 0: the version query answers NOT_SUPPORTED
  };

  std::string pci;
  std::string name;
  std::string uuid;
  unsigned long long memory_total_bytes = 0;
  unsigned int pstate = 0;
  bool persistence = false;
  bool mig = false;
  unsigned int mig_instances = 0;
  unsigned int pcie_current_gen = 0;
  unsigned int pcie_current_width = 0;
  unsigned int pcie_max_gen = 0;
  unsigned int pcie_max_width = 0;
  std::vector<Link> nvlinks;
  std::map<std::string, std::pair<nvmlGpuP2PStatus_t, nvmlGpuP2PStatus_t>> p2p;
  std::set<std::string> unsupported;
  bool lost = false;
};

namespace {

using nlohmann::json;

// What an A100 or H100 reports as its MIG device slots.
constexpr unsigned int kMigSlots = 7;

struct State {
  bool initialised = false;
  std::string driver_version;
  std::vector<nvmlDevice_st> gpus;
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
  const json pcie = config.value("pcie", json::object());
  gpu.pcie_current_gen = pcie.value("current_gen", 0U);
  gpu.pcie_current_width = pcie.value("current_width", 0U);
  gpu.pcie_max_gen = pcie.value("max_gen", 0U);
  gpu.pcie_max_width = pcie.value("max_width", 0U);
  for (const json& link : config.value("nvlinks", json::array())) {
    gpu.nvlinks.push_back(nvmlDevice_st::Link{
        link.at("active").get<bool>(), link.value("remote_pci", ""), link.value("version", 0U)});
  }
  const json p2p = config.value("p2p", json::object());
  for (const auto& [peer, statuses] : p2p.items()) {
    gpu.p2p[peer] = {p2p_status(statuses.at(0).get<std::string>()),
                     p2p_status(statuses.at(1).get<std::string>())};
  }
  gpu.unsupported = config.value("unsupported", std::set<std::string>{});
  gpu.lost = config.value("lost", false);
  return gpu;
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
  fresh.initialised = true;
  state() = std::move(fresh);
  return NVML_SUCCESS;
}

// Whether a call about `device` may answer, and if not, what it answers.
nvmlReturn_t check(nvmlDevice_t device, const char* query) {
  const State& s = state();
  if (!s.initialised) {
    return NVML_ERROR_UNINITIALIZED;
  }
  const bool ours = std::any_of(s.gpus.begin(), s.gpus.end(),
                                [device](const nvmlDevice_st& gpu) { return &gpu == device; });
  if (!ours) {
    return NVML_ERROR_INVALID_ARGUMENT;
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

}  // namespace

extern "C" {

nvmlReturn_t nvmlInit_v2(void) {
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
  state() = State{};
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
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
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
  *memory = nvmlMemory_t{device->memory_total_bytes, device->memory_total_bytes, 0};
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
  *pendingMode = *currentMode;
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
  if (index >= device->mig_instances) {
    return NVML_ERROR_NOT_FOUND;
  }
  *migDevice = device;
  return NVML_SUCCESS;
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

}  // extern "C"
