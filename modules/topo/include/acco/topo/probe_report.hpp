// The probe's and the doctor's text as report blocks: the machine header, the devices table, the
// GPUs NVML reads, storage, the nvidia-smi-style path matrix, the findings by severity, and the
// doctor's "start with" summary. The CLI renders them with report::render_text.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "acco/report/document.hpp"
#include "acco/topo/checks.hpp"
#include "acco/topo/machine.hpp"

namespace acco::topo {

// `machine_lines`: lines about the machine the probe does not read (the live machine's CUDA
// driver), printed after the header's NVML line.
[[nodiscard]] report::Document probe_report(const Machine& machine,
                                            const std::vector<Finding>& findings,
                                            const std::string& machine_lines = "");

// Rules named in the doctor's "start with" list (text and JSON).
inline constexpr std::size_t kFixFirst = 3;

// The doctor's closing summary: counts, and the first kFixFirst rules of fix_first, each with
// its devices and its first finding's message and fix. Appended to `document`.
void add_doctor_summary(report::Document& document, const std::vector<Finding>& findings);

}  // namespace acco::topo
