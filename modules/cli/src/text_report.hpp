// Human-readable probe and doctor reports: devices table, nvidia-smi-style path matrix and
// findings sorted by severity; the aligned tables the other text reports share.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "acco/topo/checks.hpp"
#include "acco/topo/machine.hpp"

namespace acco::cli {

// Rows of cells as columns two spaces apart, each line indented by two; the first row is the
// header. Trailing spaces are trimmed.
[[nodiscard]] std::string aligned_table(const std::vector<std::vector<std::string>>& rows);

// `machine_lines`: lines about the machine the probe does not read (the live machine's CUDA
// driver), printed after the header's NVML line.
[[nodiscard]] std::string probe_text(const topo::Machine& machine,
                                     const std::vector<topo::Finding>& findings,
                                     const std::string& machine_lines = "");
// Rules named in the doctor's "start with" list (text and JSON).
inline constexpr std::size_t kFixFirst = 3;

// The doctor's closing summary: counts, and the first kFixFirst rules of topo::fix_first, each
// with its devices and its first finding's message and fix.
[[nodiscard]] std::string doctor_summary_text(const std::vector<topo::Finding>& findings);

}  // namespace acco::cli
