#include "machine_flags.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "acco/doctor/live_machine.hpp"
#include "acco/topo/machine_source.hpp"

namespace acco::cli {

void add_machine_flags(CLI::App& sub, SharedFlags& shared, MachineFlags& flags, bool snapshot) {
  add_setting_flag(sub, shared, "sysroot",
                   "read DIR/sys and DIR/proc instead of /sys and /proc (env ACCO_SYSROOT)", "DIR");
  sub.add_option("--from", flags.from, "replay a snapshot written by --snapshot instead of probing")
      ->type_name("FILE");
  sub.add_option(
         "--hwloc-xml", flags.hwloc_xml,
         "assess an hwloc XML export (lstopo --of xml) instead of probing: CPU, NUMA and PCI "
         "facts as far as the export holds them")
      ->type_name("FILE");
  sub.add_option("--nccl-topo", flags.nccl_topo,
                 "assess an NCCL topology file (NCCL_TOPO_DUMP_FILE's dump, a cloud VM's "
                 "NCCL_TOPO_FILE) instead of probing: NUMA, PCI tree, links, NVLinks, NICs")
      ->type_name("FILE");
  if (snapshot) {
    sub.add_option("--snapshot", flags.snapshot,
                   "record everything read (sysfs, procfs, NVML) into FILE for --from")
        ->type_name("FILE");
  }
  sub.add_option("--data-dir", flags.data_dir,
                 "also assess the file system and drive holding PATH (inside the sysroot or "
                 "snapshot when one is given)")
      ->type_name("PATH");
  add_setting_flag(sub, shared, "nvml", "query NVML: auto, on, off (env ACCO_NVML)", "MODE");
  add_setting_flag(sub, shared, "nvml-library", "NVML library to load (env ACCO_NVML_LIBRARY)",
                   "LIB");
  add_setting_flag(sub, shared, "pci-ids",
                   "name devices from this PCI ID database instead of the sysroot's pci.ids "
                   "(env ACCO_PCI_IDS)",
                   "FILE");
  offer_values(
      sub.add_option("--fail-on", flags.fail_on,
                     "exit 1 when a finding of this severity or worse exists: warning, critical")
          ->type_name("SEVERITY"),
      {topo::to_string(topo::Severity::kWarning), topo::to_string(topo::Severity::kCritical)});
  add_json_flag(sub, shared, "print JSON (schema acco.probe/1) instead of text");
  add_config_flag(sub, shared);
}

Result<MachineOptions> machine_options(const MachineFlags& flags, const core::Settings& settings) {
  MachineOptions m;
  if (!flags.fail_on.empty()) {
    topo::Severity s{};
    if (!topo::parse_severity(flags.fail_on, s) || s == topo::Severity::kInfo) {
      return usage(fmt::format("--fail-on: '{}' is not one of warning, critical", flags.fail_on));
    }
    m.fail_on = s;
  }
  ACCO_ASSIGN_OR_RETURN(
      m.data_dir, as_usage(topo::check_machine_source(
                      {.from = flags.from,
                       .hwloc_xml = flags.hwloc_xml,
                       .nccl_topo = flags.nccl_topo,
                       .snapshot = flags.snapshot,
                       .data_dir = flags.data_dir,
                       .sysroot = settings.get("sysroot"),
                       .sysroot_given = settings.find("sysroot")->set_by == core::SetBy::kFlag})));
  m.from = flags.from;
  m.hwloc_xml = flags.hwloc_xml;
  m.nccl_topo = flags.nccl_topo;
  m.snapshot = flags.snapshot;
  return m;
}

topo::ProbeRequest probe_request(const MachineOptions& machine, const core::Settings& settings) {
  topo::ProbeRequest r;
  r.sysroot = settings.get("sysroot");
  r.from_snapshot = machine.from;
  r.hwloc_xml = machine.hwloc_xml;
  r.nccl_topo = machine.nccl_topo;
  r.data_dir = machine.data_dir;
  doctor::try_direct_io(r);
  r.write_snapshot = machine.snapshot;  // a failed write is kCannotWrite, not a failed probe
  r.pci_ids = settings.get("pci-ids");
  r.nvml_library = settings.get("nvml-library");
  r.nvml_library_explicit = settings.find("nvml-library")->set_by != core::SetBy::kDefault;
  const auto nvml = settings.get("nvml");
  r.nvml = nvml == "on"    ? topo::NvmlMode::kOn
           : nvml == "off" ? topo::NvmlMode::kOff
                           : topo::NvmlMode::kAuto;
  return r;
}

int findings_exit(const MachineOptions& machine, const std::vector<topo::Finding>& findings) {
  if (!machine.fail_on) {
    return kExitOk;
  }
  const bool hit = std::any_of(findings.begin(), findings.end(), [&](const topo::Finding& f) {
    return f.severity >= *machine.fail_on;
  });
  return hit ? kExitFindings : kExitOk;
}

}  // namespace acco::cli
