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

std::string schedule_json(const ScheduleOptions& s, const sched::Workload& w,
                          const ScheduleDevices& d,
                          const std::vector<sched::WorkloadOutcome>& runs) {
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
  return j.dump(2) + "\n";
}

std::string schedule_text(const ScheduleOptions& s, const sched::Workload& w,
                          const ScheduleDevices& d,
                          const std::vector<sched::WorkloadOutcome>& runs) {
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
