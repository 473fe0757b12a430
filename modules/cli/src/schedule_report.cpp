#include "schedule_report.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "acco/core/units.hpp"
#include "acco/monitor/thermal_experiment.hpp"
#include "acco/report/table.hpp"
#include "acco/sched/record.hpp"

namespace acco::cli {
namespace {

bool critical_path_bound(const sched::Bounds& b) {
  return b.critical_path >= b.area;
}

std::string header_text(const sched::Experiment& e) {
  const auto& spec = e.spec;
  std::string shape;
  if (spec.kind == sched::WorkloadKind::kCholesky || spec.kind == sched::WorkloadKind::kLu) {
    shape = fmt::format("{}x{} tiles, {} kernels, ", spec.tiles, spec.tiles, spec.kernels);
  } else if (spec.kind != sched::WorkloadKind::kChain) {
    shape = fmt::format("seed {}, ", spec.seed);
  }
  std::vector<std::string> devices;
  for (std::size_t i = 0; i < e.devices.size(); ++i) {
    const sched::DeviceModel& m = e.devices[i].model;
    devices.push_back(fmt::format("dev{} {} x{:g}", i, m.kind, m.speed));
  }
  return fmt::format("acco schedule: {}, {} tasks ({}time scale {:g}); {} devices: {}; link {}{}\n",
                     e.workload, e.tasks, shape, spec.time_scale, e.devices.size(),
                     fmt::join(devices, ", "), e.link.empty() ? "as found" : e.link,
                     e.sorted_decision ? "; sorted decision" : "");
}

std::string thermal_text(const std::vector<monitor::ThermalOutcome>& thermal) {
  std::vector<std::vector<std::string>> rows = {{"run", "sim time", "tasks/s", "energy/task",
                                                 "hottest", "sw thermal", "hw thermal", "actions"}};
  for (const auto& t : thermal) {
    const monitor::ThermalSummary sum = monitor::summarize(t);
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
  return "\nthermal (simulated time, every run of the workload; sw/hw thermal: time the firmware "
         "held the clocks down, all devices):\n" +
         report::render_table(report::plain_table(rows));
}

}  // namespace

std::string schedule_text(const sched::Experiment& e,
                          const std::vector<monitor::ThermalOutcome>& thermal) {
  const std::vector<sched::WorkloadOutcome>& runs = e.runs;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {"policy", "makespan", "bound", "efficiency", "tasks", "moved"};
  for (std::size_t i = 0; i < e.devices.size(); ++i) {
    head.push_back(fmt::format("dev{} busy", i));
  }
  rows.push_back(head);
  for (const auto& r : runs) {
    std::vector<std::string> row = {
        r.policy,
        units::format_seconds(r.makespan_seconds),
        fmt::format("{} ({})", units::format_seconds(r.bounds.best()),
                    critical_path_bound(r.bounds) ? "cp" : "area"),
        units::format_percent(r.efficiency),
        r.failed > 0 ? fmt::format("{} ({} failed)", r.tasks, r.failed) : std::to_string(r.tasks),
        units::format_bytes(r.bytes_transferred)};
    for (const auto& dev : r.devices) {
      row.push_back(units::format_percent(dev.busy_ratio));
    }
    rows.push_back(std::move(row));
  }
  std::string out = header_text(e) + report::render_table(report::plain_table(rows));
  if (runs.size() > 1) {
    const auto best = std::min_element(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
      return a.makespan_seconds < b.makespan_seconds;
    });
    const auto eager =
        std::find_if(runs.begin(), runs.end(), [](const auto& r) { return r.policy == "eager"; });
    if (eager != runs.end() && eager != best && best->makespan_seconds > 0) {
      out += fmt::format("best: {}, {:.2f}x faster than eager ({} vs {})\n", best->policy,
                         eager->makespan_seconds / best->makespan_seconds,
                         units::format_seconds(best->makespan_seconds),
                         units::format_seconds(eager->makespan_seconds));
    } else {
      out += fmt::format("best: {} ({})\n", best->policy,
                         units::format_seconds(best->makespan_seconds));
    }
  }
  if (!thermal.empty()) {
    out += thermal_text(thermal);
  }
  return out;
}

std::string failure_note(const sched::WorkloadOutcome& r) {
  for (const auto& t : r.record.tasks) {
    if (t.status == sched::TaskStatus::kFailed) {
      return fmt::format("acco: {}: {} of {} tasks failed; first: {}: {}\n", r.policy, r.failed,
                         r.tasks, t.name, t.error);
    }
  }
  return fmt::format("acco: {}: {} of {} tasks failed\n", r.policy, r.failed, r.tasks);
}

}  // namespace acco::cli
