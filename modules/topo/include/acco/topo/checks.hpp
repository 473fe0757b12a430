// Checks turn a machine into findings: what is wrong with its links and how to fix it. Each
// finding names a stable rule id, the devices, the evidence that was read and an exact fix.
// Checks are pure functions of the Machine, so they run in tests without hardware.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "acco/topo/machine.hpp"

namespace acco::topo {

enum class Severity {
  kInfo,
  kWarning,
  kCritical
};
[[nodiscard]] const char* to_string(Severity severity);
// "info", "warning", "critical"; nullopt-like false on anything else.
[[nodiscard]] bool parse_severity(std::string_view text, Severity& out);

struct Finding {
  std::string rule;  // stable id, e.g. "pcie-link-downtrained"
  Severity severity = Severity::kInfo;
  std::vector<std::string> devices;  // PCI addresses (or IB device names) concerned
  std::vector<Evidence> evidence;
  std::string message;
  std::string recommendation;
  bool operator==(const Finding&) const = default;
};

struct RuleInfo {
  std::string id;
  std::string title;
};

// Every rule acco knows, in documentation order.
[[nodiscard]] const std::vector<RuleInfo>& rules();

// Runs every check. Sorted by severity (critical first), then rule id, then first device.
// `machine` must be annotated (annotate_links).
[[nodiscard]] std::vector<Finding> check(const Machine& machine);

}  // namespace acco::topo
