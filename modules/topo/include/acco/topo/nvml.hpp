// What NVML says about the GPUs (PCI address, memory, P-state, MIG, PCIe link, NVLinks, P2P
// status), read through libnvidia-ml loaded at run time, and the report's JSON form for
// snapshots. A machine without NVML is normal: the report says so and why, it is not an error.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "acco/core/result.hpp"
#include "acco/topo/machine.hpp"

namespace acco::topo {

// The name the NVIDIA driver installs; dlopen searches the loader path for it.
inline constexpr const char* kNvmlLibrary = "libnvidia-ml.so.1";

// Loads `library` (a file name searched on the loader path, or a path) with dlopen, initialises
// NVML, queries every GPU, shuts NVML down and unloads it again.
// - A missing library, a missing required symbol, or a failing nvmlInit_v2 or device count gives
//   available=false and a one-line reason: "nvmlInit_v2: Driver Not Loaded (9)".
// - A query a GPU or an older driver does not support leaves that field empty (std::nullopt,
//   0, or no entry in nvlinks/p2p); it never fails the report. A GPU whose handle or PCI info
//   cannot be read keeps its index and nothing else.
// PCI addresses are normalised to sysfs form, "0000:41:00.0". Never throws. Thread-safe: calls
// into NVML from this function are serialised by one process-wide mutex.
[[nodiscard]] NvmlReport query_nvml(const std::string& library);

// The report as JSON; optional fields that are empty are written as null.
[[nodiscard]] nlohmann::json to_json(const NvmlReport& report);

// Reads what to_json wrote (to_json then this gives an equal report). Fields that are absent or
// null take NvmlReport's defaults, except the required `available`. A field of the wrong type or
// out of range gives kInvalidArgument naming it: "nvml.gpus[2].pstate: expected an integer".
[[nodiscard]] Result<NvmlReport> nvml_report_from_json(const nlohmann::json& json);

}  // namespace acco::topo
