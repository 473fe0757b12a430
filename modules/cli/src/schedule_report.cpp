#include "schedule_report.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "acco/core/units.hpp"
#include "acco/sched/record.hpp"

#include "text_report.hpp"

namespace acco::cli {
namespace {

using Json = nlohmann::ordered_json;

bool critical_path_bound(const sched::Bounds& b) {
  return b.critical_path >= b.area;
}

std::string link_text(const ScheduleDevices& d, std::size_t i) {
  if (!d.link.empty()) {
    return d.link;
  }
  const double rate = d.devices[i]->info().link_bytes_per_second;
  return rate > 0 ? units::format_rate(rate) : "unknown";
}

Json workload_json(const ScheduleOptions& s, const sched::Workload& w) {
  const auto& spec = s.workload;
  Json j = {{"name", w.name}, {"tasks", w.tasks.size()}};
  if (spec.kind == sched::WorkloadKind::kCholesky || spec.kind == sched::WorkloadKind::kLu) {
    j["tiles"] = spec.tiles;
  }
  j["kernels"] = spec.kernels;
  j["time_scale"] = spec.time_scale;
  j["seed"] = spec.seed;
  if (spec.kind == sched::WorkloadKind::kIndependent) {
    j["skew"] = spec.skew;
  }
  if (spec.kind == sched::WorkloadKind::kRandom) {
    j["alpha"] = spec.alpha;
    j["out_degree"] = spec.out_degree;
    j["ccr"] = spec.ccr;
    j["beta"] = spec.beta;
  }
  return j;
}

Json devices_json(const ScheduleDevices& d) {
  Json out = Json::array();
  for (std::size_t i = 0; i < d.devices.size(); ++i) {
    const auto& info = d.devices[i]->info();
    out.push_back(
        {{"device", i},
         {"name", info.name},
         {"kind", d.models[i].kind},
         {"speed", d.models[i].speed},
         {"link", link_text(d, i)},
         {"link_bytes_per_second",
          info.link_bytes_per_second > 0 ? Json(info.link_bytes_per_second) : Json(nullptr)}});
  }
  return out;
}

Json run_json(const sched::WorkloadOutcome& r) {
  Json busy = Json::array();
  for (const auto& d : r.devices) {
    busy.push_back(
        {{"device", d.device}, {"kind", d.kind}, {"busy_ratio", d.busy_ratio}, {"tasks", d.tasks}});
  }
  const auto node = [](sched::NodeId n) {
    return n == sched::kHostNode ? std::string("host") : fmt::format("dev{}", n - 1);
  };
  Json links = Json::array();
  for (const sched::LinkRecord& l : r.record.links) {
    links.push_back({{"from", node(l.from)},
                     {"to", node(l.to)},
                     {"bytes", l.bytes},
                     {"transfers", l.transfers}});
  }
  return {{"policy", r.policy},
          {"makespan_seconds", r.makespan_seconds},
          {"bound_seconds", r.bounds.best()},
          {"bound_kind", critical_path_bound(r.bounds) ? "critical_path" : "area"},
          {"critical_path_seconds", r.bounds.critical_path},
          {"area_seconds", r.bounds.area},
          {"efficiency", r.efficiency},
          {"tasks", r.tasks},
          {"failed_tasks", r.failed},
          {"bytes_transferred", r.bytes_transferred},
          {"busy", busy},
          {"links", links}};
}

std::string header_text(const ScheduleOptions& s, const sched::Workload& w,
                        const ScheduleDevices& d) {
  const auto& spec = s.workload;
  std::string shape;
  if (spec.kind == sched::WorkloadKind::kCholesky || spec.kind == sched::WorkloadKind::kLu) {
    shape = fmt::format("{}x{} tiles, {} kernels, ", spec.tiles, spec.tiles, spec.kernels);
  } else if (spec.kind != sched::WorkloadKind::kChain) {
    shape = fmt::format("seed {}, ", spec.seed);
  }
  std::vector<std::string> devices;
  for (std::size_t i = 0; i < d.devices.size(); ++i) {
    devices.push_back(fmt::format("dev{} {} x{:g}", i, d.models[i].kind, d.models[i].speed));
  }
  return fmt::format("acco schedule: {}, {} tasks ({}time scale {:g}); {} devices: {}; link {}{}\n",
                     w.name, w.tasks.size(), shape, spec.time_scale, d.devices.size(),
                     fmt::join(devices, ", "), d.link.empty() ? "as found" : d.link,
                     s.sorted_decision ? "; sorted decision" : "");
}

}  // namespace

namespace {

// Per run on the thermal rig: throughput and energy over every run of the workload (calibration
// included: the devices heat up through all of them), and per device what the firmware did.
struct ThermalSummary {
  double tasks_per_second = 0;
  double joules = 0;
  double joules_per_task = 0;
};
ThermalSummary summarize(const monitor::ThermalOutcome& t) {
  ThermalSummary s;
  for (const auto& d : t.devices) {
    s.joules += d.energy_joules;
  }
  // Simulated time: the rig's clock, which the energy is integrated on.
  s.tasks_per_second =
      t.simulated_seconds > 0 ? static_cast<double>(t.tasks_run) / t.simulated_seconds : 0;
  s.joules_per_task = t.tasks_run > 0 ? s.joules / static_cast<double>(t.tasks_run) : 0;
  return s;
}

Json thermal_json(const monitor::ThermalOutcome& t) {
  const ThermalSummary sum = summarize(t);
  Json devices = Json::array();
  for (std::size_t i = 0; i < t.devices.size(); ++i) {
    const auto& d = t.devices[i];
    devices.push_back({{"device", i},
                       {"energy_joules", d.energy_joules},
                       {"max_temperature_celsius", d.max_temperature_celsius},
                       {"sw_thermal_seconds", d.sw_thermal_seconds},
                       {"hw_thermal_seconds", d.hw_thermal_seconds},
                       {"busy_seconds", d.busy_seconds},
                       {"lost", d.lost}});
  }
  Json j = {{"policy", t.outcome.policy},
            {"simulated_seconds", t.simulated_seconds},
            {"wall_seconds", t.wall_seconds},
            {"tasks_run", t.tasks_run},
            {"tasks_per_simulated_second", sum.tasks_per_second},
            {"energy_joules", sum.joules},
            {"energy_per_task_joules", sum.joules_per_task},
            {"devices", devices}};
  if (t.governor) {
    Json actions = Json::object();
    for (const auto& [kind, n] : t.governor->actions_total) {
      actions[kind] = n;
    }
    j["governor"] = {{"mode", t.governor->mode}, {"actions_total", actions}};
  }
  return j;
}

std::string thermal_text(const std::vector<monitor::ThermalOutcome>& thermal) {
  std::vector<std::vector<std::string>> rows = {{"run", "sim time", "tasks/s", "energy/task",
                                                 "hottest", "sw thermal", "hw thermal", "actions"}};
  for (const auto& t : thermal) {
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
  return "\nthermal (simulated time, every run of the workload; sw/hw thermal: time the firmware "
         "held the clocks down, all devices):\n" +
         aligned_table(rows);
}

}  // namespace

std::string schedule_json(const ScheduleOptions& s, const sched::Workload& w,
                          const ScheduleDevices& d, const std::vector<sched::WorkloadOutcome>& runs,
                          const std::vector<monitor::ThermalOutcome>& thermal) {
  Json j = {{"schema", "acco.schedule/1"},
            {"workload", workload_json(s, w)},
            {"devices", devices_json(d)},
            {"sorted_decision", s.sorted_decision}};
  const Json first = run_json(runs.front());
  for (const auto& [key, value] : first.items()) {
    j[key] = value;
  }
  Json all = Json::array();
  for (const auto& r : runs) {
    all.push_back(run_json(r));
  }
  j["runs"] = all;
  if (!thermal.empty()) {
    Json list = Json::array();
    for (const auto& t : thermal) {
      list.push_back(thermal_json(t));
    }
    j["thermal"] = {{"time_scale", s.thermal ? s.thermal->time_scale : 0.0}, {"runs", list}};
  }
  return j.dump(2) + "\n";
}

std::string schedule_text(const ScheduleOptions& s, const sched::Workload& w,
                          const ScheduleDevices& d, const std::vector<sched::WorkloadOutcome>& runs,
                          const std::vector<monitor::ThermalOutcome>& thermal) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {"policy", "makespan", "bound", "efficiency", "tasks", "moved"};
  for (std::size_t i = 0; i < d.devices.size(); ++i) {
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
  std::string out = header_text(s, w, d) + aligned_table(rows);
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
