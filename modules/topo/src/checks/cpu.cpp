// CPU and NUMA facts read twice, by acco's sysfs reader and by libhwloc.
#include <fmt/format.h>

#include "rule_checks.hpp"

namespace acco::topo::detail {

void check_hwloc_disagrees(const Machine& m, std::vector<Finding>& out) {
  if (m.cpu.disagreements.empty()) {
    return;
  }
  Finding f;
  f.severity = Severity::kInfo;
  for (const auto& d : m.cpu.disagreements) {
    f.evidence.push_back({"hwloc", d});
  }
  f.message = fmt::format(
      "acco's sysfs reader and {} read this machine differently in {} place(s); a node's "
      "package follows hwloc where both name the same packages (else the kernel's), a device's "
      "NUMA node follows hwloc only where sysfs gives none, and each difference is listed with "
      "its reason",
      m.cpu.source, m.cpu.disagreements.size());
  f.recommendation =
      "Compare with `lstopo-no-graphics` (hwloc-nox). Nodes hwloc merges, packages it drops "
      "(CPUs whose package_cpus conflict) or CPUs it leaves out come from firmware tables (ACPI "
      "SRAT/SLIT/MADT) the kernel reports as it found them: update the BIOS. A PCI function hwloc "
      "does not list sits in a 32-bit PCI domain (Intel VMD; Debian's "
      "hwloc is built without them) or has no /sys/bus/pci/devices entry (hwloc reads only that "
      "list): acco's report includes it";
  out.push_back(std::move(f));
}

}  // namespace acco::topo::detail
