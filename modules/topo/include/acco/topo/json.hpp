// The JSON form of the machine model and findings, as `acco probe --json` prints them (schema in
// docs/json-schemas.md). Keys keep a stable, documented order. Bandwidths are bytes per second;
// unknown values are null.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "acco/topo/checks.hpp"
#include "acco/topo/machine.hpp"

namespace acco::topo {

inline constexpr const char* kProbeSchema = "acco.probe/1";

[[nodiscard]] nlohmann::ordered_json to_json(const PciDevice& device, const Machine& machine);
[[nodiscard]] nlohmann::ordered_json to_json(const Finding& finding);
// Every GPU/accelerator/NIC/NVMe pair: path class and bottleneck.
[[nodiscard]] nlohmann::ordered_json paths_json(const Machine& machine);
// {"schema", "machine", "devices", "paths", "findings"}.
[[nodiscard]] nlohmann::ordered_json probe_json(const Machine& machine,
                                                const std::vector<Finding>& findings);

// The devices shown in path matrices: GPUs, accelerators, NICs, NVMe, in address order.
[[nodiscard]] std::vector<const PciDevice*> endpoints(const Machine& machine);

}  // namespace acco::topo
