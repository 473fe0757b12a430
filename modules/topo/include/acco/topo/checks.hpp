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
  Severity lowest = Severity::kInfo;   // the least severe finding the rule reports
  Severity highest = Severity::kInfo;  // the most severe
};

// Every rule acco can report, in documentation order. The same table drives check(), so every
// rule listed here is run and every finding's rule is listed here, with a severity in its range;
// the one exception, tune-profile-missing, is listed here and raised by `acco doctor`, which reads
// the saved tune profile that topo does not know.
[[nodiscard]] const std::vector<RuleInfo>& rules();
// The rule with this id; nullptr when there is none.
[[nodiscard]] const RuleInfo* find_rule(std::string_view id);

// The warning and critical findings of one rule, for the doctor's "start with" list.
struct RuleSummary {
  std::string rule;
  Severity severity = Severity::kWarning;  // the most severe of its findings
  std::vector<std::size_t> findings;       // indices into the findings given, in their order
  std::vector<std::string> devices;        // every device they name, each once, in order
  bool operator==(const RuleSummary&) const = default;
};

// One entry per rule with a warning or critical finding (info is not a problem to fix), ranked by
// impact: critical before warning, then the rule whose findings name more devices, then more
// findings, then by rule id.
[[nodiscard]] std::vector<RuleSummary> fix_first(const std::vector<Finding>& findings);

// Runs every rule's check. Sorted by severity (critical first), then rule id, then devices;
// findings equal in all three keep the order their check reported them in.
// `machine` must be annotated (annotate_links).
[[nodiscard]] std::vector<Finding> check(const Machine& machine);

}  // namespace acco::topo
