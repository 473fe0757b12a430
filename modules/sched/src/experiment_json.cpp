// acco.schedule/1 (docs/schemas/schedule.schema.json).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/core/result.hpp"
#include "acco/sched/experiment.hpp"
#include "acco/sched/record.hpp"

namespace acco::sched {
namespace {

using Json = nlohmann::ordered_json;

Json workload_json(const Experiment& e) {
  const auto& spec = e.spec;
  Json j = {{"name", e.workload}, {"tasks", e.tasks}};
  if (spec.kind == WorkloadKind::kCholesky || spec.kind == WorkloadKind::kLu) {
    j["tiles"] = spec.tiles;
  }
  j["kernels"] = spec.kernels;
  j["time_scale"] = spec.time_scale;
  j["seed"] = spec.seed;
  if (spec.kind == WorkloadKind::kIndependent) {
    j["skew"] = spec.skew;
  }
  if (spec.kind == WorkloadKind::kRandom) {
    j["alpha"] = spec.alpha;
    j["out_degree"] = spec.out_degree;
    j["ccr"] = spec.ccr;
    j["beta"] = spec.beta;
  }
  return j;
}

Json devices_json(const Experiment& e) {
  Json out = Json::array();
  for (std::size_t i = 0; i < e.devices.size(); ++i) {
    const ExperimentDevice& d = e.devices[i];
    out.push_back({{"device", i},
                   {"name", d.name},
                   {"kind", d.model.kind},
                   {"speed", d.model.speed},
                   {"link", d.link},
                   {"link_bytes_per_second",
                    d.link_bytes_per_second > 0 ? Json(d.link_bytes_per_second) : Json(nullptr)}});
  }
  return out;
}

Json run_json(const WorkloadOutcome& r) {
  Json busy = Json::array();
  for (const auto& d : r.devices) {
    busy.push_back(
        {{"device", d.device}, {"kind", d.kind}, {"busy_ratio", d.busy_ratio}, {"tasks", d.tasks}});
  }
  const auto node = [](NodeId n) {
    return n == kHostNode ? std::string("host") : fmt::format("dev{}", n - 1);
  };
  Json links = Json::array();
  for (const LinkRecord& l : r.record.links) {
    links.push_back({{"from", node(l.from)},
                     {"to", node(l.to)},
                     {"bytes", l.bytes},
                     {"transfers", l.transfers}});
  }
  const bool critical_path_bound = r.bounds.critical_path >= r.bounds.area;
  return {{"policy", r.policy},
          {"makespan_seconds", r.makespan_seconds},
          {"bound_seconds", r.bounds.best()},
          {"bound_kind", critical_path_bound ? "critical_path" : "area"},
          {"critical_path_seconds", r.bounds.critical_path},
          {"area_seconds", r.bounds.area},
          {"efficiency", r.efficiency},
          {"tasks", r.tasks},
          {"failed_tasks", r.failed},
          {"bytes_transferred", r.bytes_transferred},
          {"busy", busy},
          {"links", links}};
}

}  // namespace

nlohmann::ordered_json to_json(const Experiment& e) {
  ACCO_CHECK(!e.runs.empty());
  Json j = {{"schema", kScheduleSchema},
            {"workload", workload_json(e)},
            {"devices", devices_json(e)},
            {"sorted_decision", e.sorted_decision}};
  const Json first = run_json(e.runs.front());
  for (const auto& [key, value] : first.items()) {
    j[key] = value;
  }
  Json all = Json::array();
  for (const auto& r : e.runs) {
    all.push_back(run_json(r));
  }
  j["runs"] = all;
  return j;
}

}  // namespace acco::sched
