// What to fix first: a machine's problems grouped by rule and ranked by impact, so one rule that
// hits several devices is one entry instead of filling the list.
#include <algorithm>
#include <map>

#include "acco/topo/checks.hpp"

namespace acco::topo {

std::vector<RuleSummary> fix_first(const std::vector<Finding>& findings) {
  std::vector<RuleSummary> out;
  std::map<std::string, std::size_t> index;  // rule -> its entry in out
  for (std::size_t i = 0; i < findings.size(); ++i) {
    const Finding& f = findings[i];
    if (f.severity == Severity::kInfo) {
      continue;
    }
    const auto [it, added] = index.try_emplace(f.rule, out.size());
    if (added) {
      out.push_back({f.rule, f.severity, {}, {}});
    }
    RuleSummary& s = out[it->second];
    s.severity = std::max(s.severity, f.severity);
    s.findings.push_back(i);
    for (const auto& d : f.devices) {
      if (std::find(s.devices.begin(), s.devices.end(), d) == s.devices.end()) {
        s.devices.push_back(d);
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const RuleSummary& a, const RuleSummary& b) {
    if (a.severity != b.severity) {
      return a.severity > b.severity;
    }
    if (a.devices.size() != b.devices.size()) {
      return a.devices.size() > b.devices.size();
    }
    if (a.findings.size() != b.findings.size()) {
      return a.findings.size() > b.findings.size();
    }
    return a.rule < b.rule;
  });
  return out;
}

}  // namespace acco::topo
