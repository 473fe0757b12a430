#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "acco/core/units.hpp"
#include "acco/monitor/thermal_experiment.hpp"
#include "acco/report/table.hpp"
#include "acco/sched/experiment_report.hpp"

namespace acco::monitor {

report::Document thermal_experiment_report(const ThermalExperiment& experiment) {
  report::Document doc = sched::experiment_report(experiment.experiment);
  std::vector<std::vector<std::string>> rows = {{"run", "sim time", "tasks/s", "energy/task",
                                                 "hottest", "sw thermal", "hw thermal", "actions"}};
  for (const auto& t : experiment.runs) {
    const ThermalSummary sum = summarize(t);
    double hottest = 0;
    double sw = 0;
    double hw = 0;
    for (const auto& d : t.devices) {
      hottest = std::max(hottest, d.max_temperature_celsius);
      sw += d.sw_thermal_seconds;
      hw += d.hw_thermal_seconds;
    }
    std::uint64_t actions = 0;
    if (t.governor) {
      for (const auto& [kind, n] : t.governor->actions_total) {
        actions += kind == "log" ? 0 : n;
      }
    }
    rows.push_back({t.outcome.policy, units::format_seconds(t.simulated_seconds),
                    fmt::format("{:.2f}", sum.tasks_per_second),
                    fmt::format("{:.1f} J", sum.joules_per_task), fmt::format("{:.1f} C", hottest),
                    units::format_seconds(sw), units::format_seconds(hw),
                    t.governor ? std::to_string(actions) : "-"});
  }
  if (!experiment.runs.empty()) {
    doc.add(report::Heading{
        "thermal (simulated time, every run of the workload; sw/hw thermal: time the firmware "
        "held the clocks down, all devices):"});
    doc.add(report::plain_table(rows));
  }
  return doc;
}

}  // namespace acco::monitor
