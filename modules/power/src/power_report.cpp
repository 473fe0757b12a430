#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "acco/core/units.hpp"
#include "acco/power/report.hpp"
#include "acco/report/table.hpp"

namespace acco::power {
namespace {

std::string watts_cell(const std::optional<double>& w) {
  return w ? fmt::format("{:.0f} W", *w) : "-";
}

report::Table device_table(const std::vector<std::vector<std::string>>& rows) {
  return report::plain_table(rows, report::TableStyle::layout(2, 1));
}

}  // namespace

report::Document status_report(const PowerStatus& status) {
  report::Document doc;
  doc.add(report::Preformatted{fmt::format("acco power status: {} device(s) (NVML {})",
                                           status.samples.size(), status.nvml)});
  if (!status.samples.empty()) {
    std::vector<std::vector<std::string>> rows = {{"DEVICE", "MODEL", "STATE", "TEMP", "POWER",
                                                   "LIMIT", "DEFAULT", "MIN", "MAX", "THROTTLE"}};
    for (const DeviceSample& s : status.samples) {
      std::string throttle;
      for (const std::string& name : clock_event_reasons(s)) {
        throttle += (throttle.empty() ? "" : ",") + name;
      }
      rows.push_back(
          {s.device, s.model, status_state(s),
           s.temperature_gpu_celsius ? fmt::format("{:.0f} C", *s.temperature_gpu_celsius) : "-",
           watts_cell(s.power_watts), watts_cell(s.power_limit_enforced_watts),
           watts_cell(s.power_limit_default_watts), watts_cell(s.power_limit_min_watts),
           watts_cell(s.power_limit_max_watts), throttle.empty() ? "-" : throttle});
    }
    doc.add(device_table(rows));
  }
  if (status.unrestored) {
    for (const SavedDevice& d : *status.unrestored) {
      doc.add(report::Note{fmt::format(
          "{} was set to {:.0f} W by a governor that did not restore it (original {:.0f} W); "
          "the next acco power run --allow-control restores it",
          d.uuid, d.set_limit_watts, d.original_limit_watts)});
    }
  }
  return doc;
}

report::Document governor_report(const GovernorReport& report) {
  std::size_t applied = 0;
  for (const Action& a : report.actions) {
    applied += a.applied ? 1 : 0;
  }
  const GovernorStatus& status = report.status;
  std::vector<std::vector<std::string>> rows = {{"DEVICE", "STATE", "LIMIT", "WEIGHT", "NOTE"}};
  for (const GovernorDevice& d : status.devices) {
    const auto off = status.hands_off.find(d.uuid);
    rows.push_back({d.device, to_string(d.state),
                    d.limit_watts ? watts_cell(d.limit_watts) : "as found",
                    fmt::format("{:.2f}", d.weight),
                    d.lost                          ? "lost"
                    : off != status.hands_off.end() ? "left alone: " + off->second
                    : d.energy_cap_watts ? fmt::format("energy cap {:.0f} W", *d.energy_cap_watts)
                                         : ""});
  }
  report::Document doc;
  doc.add(report::Preformatted{
      fmt::format("acco power run: {} round(s) over {} (stopped by {}); {} action(s), {} applied{}",
                  report.rounds, units::format_seconds(report.duration_seconds), report.stopped_by,
                  report.actions.size(), applied,
                  status.allow_control ? "" : " (dry-run: give --allow-control to apply)")});
  doc.add(device_table(rows));
  return doc;
}

}  // namespace acco::power
