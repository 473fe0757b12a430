// The flags `acco probe` and `acco doctor` share (where the machine comes from, NVML, --fail-on,
// --json), their checks, and what both do with them: the probe request and the findings' exit.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "acco/core/result.hpp"
#include "acco/core/settings.hpp"
#include "acco/device/cuda_backend.hpp"
#include "acco/topo/checks.hpp"
#include "acco/topo/probe.hpp"

#include "command_spec.hpp"

namespace acco::cli {

struct MachineFlags {
  std::string from;       // --from FILE
  std::string hwloc_xml;  // --hwloc-xml FILE
  std::string nccl_topo;  // --nccl-topo FILE
  std::string snapshot;   // --snapshot FILE (probe only)
  std::string fail_on;    // --fail-on SEVERITY
  std::string data_dir;   // --data-dir PATH
};

// Checked and typed.
struct MachineOptions {
  std::string from;
  std::string hwloc_xml;
  std::string nccl_topo;
  std::string snapshot;
  std::optional<topo::Severity> fail_on;
  // Absolute: canonical on the live machine, lexically normal inside a sysroot or snapshot.
  std::string data_dir;
};

void add_machine_flags(CLI::App& sub, SharedFlags& shared, MachineFlags& flags, bool snapshot);
[[nodiscard]] Result<MachineOptions> machine_options(const MachineFlags& flags,
                                                     const core::Settings& settings);

// The probe of `machine`; on the live machine with --data-dir, also tries O_DIRECT and io_uring
// in the data directory (writes and removes a small scratch file there) and passes the result.
[[nodiscard]] topo::ProbeRequest probe_request(const MachineOptions& machine,
                                               const core::Settings& settings);
// kExitFindings when a finding is at or above --fail-on, else kExitOk.
[[nodiscard]] int findings_exit(const MachineOptions& machine,
                                const std::vector<topo::Finding>& findings);

}  // namespace acco::cli
