#include <string>

#include <fmt/format.h>

#include "acco/core/file.hpp"
#include "acco/sched/record.hpp"
#include "acco/sim/study.hpp"

namespace acco::sim {

Status check_study_files(const StudyFiles& files) {
  if (!files.trace.empty()) {
    ACCO_RETURN_IF_ERROR(core::check_output_directory(files.trace), "--trace");
  }
  if (!files.html.empty()) {
    ACCO_RETURN_IF_ERROR(core::check_output_directory(files.html), "--html");
  }
  return {};
}

Result<std::string> write_study_files(const SimReport& report, const StudyFiles& files) {
  std::string notes;
  if (!files.trace.empty() && !report.runs.empty()) {
    const auto& first = report.runs.front();
    ACCO_ASSIGN_OR_RETURN(
        notes, sched::write_chrome_trace(run_record(first), first.policy, files.trace), "--trace");
  }
  if (!files.html.empty()) {
    ACCO_RETURN_IF_ERROR(core::write_output_file(files.html, to_html(report)), "--html");
    notes += fmt::format("acco: HTML report written to {}\n", files.html);
  }
  return notes;
}

}  // namespace acco::sim
