#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "acco/report/json.hpp"
#include "acco/report/table.hpp"
#include "acco/sim/report.hpp"

namespace acco::sim {
namespace {

std::string seconds_text(double s) {
  if (s >= 1) {
    return fmt::format("{:.3f} s", s);
  }
  if (s >= 1e-3) {
    return fmt::format("{:.3f} ms", s * 1e3);
  }
  return fmt::format("{:.3f} us", s * 1e6);
}

std::string bytes_text(double b) {
  if (b >= 1e12) {
    return fmt::format("{:.2f} TB", b / 1e12);
  }
  if (b >= 1e9) {
    return fmt::format("{:.2f} GB", b / 1e9);
  }
  if (b >= 1e6) {
    return fmt::format("{:.2f} MB", b / 1e6);
  }
  return fmt::format("{:.0f} B", b);
}

double mean_busy(const SimResult& r) {
  if (r.devices.empty() || r.makespan <= 0) {
    return 0;
  }
  double busy = 0;
  for (const auto& d : r.devices) {
    busy += d.busy_seconds;
  }
  return busy / static_cast<double>(r.devices.size()) / r.makespan;
}

struct Spread {
  double mean = 0;
  double low = 0;
  double high = 0;
};

Spread spread(const std::vector<double>& values) {
  Spread s;
  if (values.empty()) {
    return s;
  }
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  s.low = *low;
  s.high = *high;
  for (const double v : values) {
    s.mean += v;
  }
  s.mean /= static_cast<double>(values.size());
  return s;
}

// With several seeds: each policy's makespan over them (mean, fastest, slowest, and the range
// against the mean), and the best by mean.
void add_seeds(const SimReport& rep, report::Document& doc) {
  if (rep.seeds.size() < 2 || rep.seed_makespans.size() != rep.runs.size()) {
    return;
  }
  doc.add(report::Heading{fmt::format("over {} seeds ({}-{}):", rep.seeds.size(), rep.seeds.front(),
                                      rep.seeds.back())});
  report::Table table;
  table.columns = {{"policy"},
                   {"mean", report::Align::kRight},
                   {"fastest", report::Align::kRight},
                   {"slowest", report::Align::kRight},
                   {"range", report::Align::kRight}};
  std::size_t best = 0;
  double best_mean = 0;
  for (std::size_t i = 0; i < rep.runs.size(); ++i) {
    const Spread s = spread(rep.seed_makespans[i]);
    table.rows.push_back(
        {rep.runs[i].policy, seconds_text(s.mean), seconds_text(s.low), seconds_text(s.high),
         fmt::format("{:.1f} %", s.mean > 0 ? 100 * (s.high - s.low) / s.mean : 0)});
    if (i == 0 || s.mean < best_mean) {
      best = i;
      best_mean = s.mean;
    }
  }
  doc.add(std::move(table));
  if (rep.runs.size() > 1) {
    doc.add(report::Note{fmt::format("best over the seeds: {} ({} mean)", rep.runs[best].policy,
                                     seconds_text(best_mean))});
  }
}

// "fat-tree:8, 8 ports a node at 50.0 GB/s each, 2.0 us a link" (with ", 4:1 to the spines"
// when the leaves are oversubscribed); on rails, the rails and the groups.
std::string fabric_text(const Platform& p) {
  const int ports = std::max(1, p.node.fabric_ports);
  const std::string taper = p.fabric.oversubscription > 1
                                ? fmt::format(", {}:1 to the spines", p.fabric.oversubscription)
                                : std::string();
  if (p.rails()) {
    return fmt::format(
        "{}, {} rail{} (a port each) at {:.1f} GB/s, {} node{} a group{}, {:.1f} us "
        "a link",
        to_string(p.fabric), ports, ports == 1 ? "" : "s", p.fabric.bytes_per_second / 1e9,
        p.fabric.k, p.fabric.k == 1 ? "" : "s", taper, p.fabric.latency * 1e6);
  }
  return fmt::format("{}, {} port{} a node at {:.1f} GB/s each{}, {:.1f} us a link",
                     to_string(p.fabric), ports, ports == 1 ? "" : "s",
                     p.fabric.bytes_per_second / 1e9, taper, p.fabric.latency * 1e6);
}

// What the governor did in a run, in a line: each device it took out of normal, in the order it
// did, with where it left the device (state, limit, weight, closed); the others in a count.
std::string governor_text(const SimResult& r) {
  struct Seen {
    std::string name;
    double left_normal = -1;  // the first action that left the device out of normal
    std::string state = "normal";
    double limit = 0;
    double weight = 1;
    bool closed = false;
    bool drained = false;
  };
  std::vector<Seen> seen;
  for (const auto& a : r.governor_actions) {
    auto it =
        std::find_if(seen.begin(), seen.end(), [&](const Seen& s) { return s.name == a.device; });
    if (it == seen.end()) {
      it = seen.insert(seen.end(), Seen{a.device});
    }
    it->state = a.state;
    if (a.state != "normal" && it->left_normal < 0) {
      it->left_normal = a.time_seconds;
    }
    if (a.action == "set_power_limit") {
      it->limit = a.value;
    } else if (a.action == "set_weight") {
      it->weight = a.value;
    } else if (a.action == "no_new_work") {
      it->closed = a.value != 0;
    } else if (a.action == "drain") {
      it->drained = a.value != 0;
    } else if (a.action == "restore") {
      it->limit = 0;
    }
  }
  std::string text =
      fmt::format("governor ({}): {}: {} action{}", r.governor, r.policy, r.governor_actions.size(),
                  r.governor_actions.size() == 1 ? "" : "s");
  std::size_t calm = 0;
  double low = 1;
  double high = 0;
  for (const auto& s : seen) {
    if (s.left_normal < 0) {
      ++calm;
      low = std::min(low, s.weight);
      high = std::max(high, s.weight);
      continue;
    }
    text += fmt::format("; {} {} from {}", s.name, s.state,
                        s.left_normal > 0 ? seconds_text(s.left_normal) : "the start");
    if (s.limit > 0) {
      text += fmt::format(", limit {:.0f} W", s.limit);
    }
    if (s.weight < 1) {
      text += fmt::format(", weight {:g}", s.weight);
    }
    text += s.drained ? ", drained" : s.closed ? ", no new work" : "";
  }
  if (calm > 0) {
    text += fmt::format("; {} {}device{} normal", calm, calm < seen.size() ? "other " : "",
                        calm == 1 ? "" : "s");
    if (low < 1) {
      text += low == high ? fmt::format(", weight {:g}", low)
                          : fmt::format(", weights {:g}-{:g}", low, high);
    }
  }
  return text;
}

// The devices that run hot, as each run saw them: how hot, and the clock they kept; then what
// the governor did in each run.
void add_thermal_notes(const SimReport& rep, report::Document& doc) {
  for (std::size_t d = 0; !rep.runs.empty() && d < rep.cooling.size(); ++d) {
    const auto& runs = rep.runs;
    if (rep.cooling[d] <= 1 || d >= runs.front().devices.size()) {
      continue;
    }
    std::string clocks;
    for (const auto& r : runs) {
      const auto& use = r.devices[d];
      clocks += use.tasks == 0
                    ? fmt::format("{}{} ran nothing, up to {:.0f} C", clocks.empty() ? "" : ", ",
                                  r.policy, use.peak_celsius)
                    : fmt::format("{}{} {:.0f} % at up to {:.0f} C", clocks.empty() ? "" : ", ",
                                  r.policy, 100 * use.clock_share, use.peak_celsius);
    }
    doc.add(report::Note{fmt::format("thermal: {} cools {:g} times worse; its clock while busy: {}",
                                     runs.front().devices[d].name, rep.cooling[d], clocks)});
  }
  for (const auto& r : rep.runs) {
    if (!r.governor.empty()) {
      doc.add(report::Note{governor_text(r)});
    }
  }
}

}  // namespace

report::Document sim_document(const SimReport& rep) {
  report::Document doc;
  const auto& p = rep.platform;
  doc.add(report::Heading{fmt::format("acco sim: {} node{} x {} devices ({}) on {}, {}", p.nodes,
                                      p.nodes == 1 ? "" : "s", p.node.devices.size(), p.node.origin,
                                      to_string(p.fabric), rep.workload)});
  std::vector<std::pair<std::string, std::string>> fields;
  const bool thermal = !rep.cooling.empty();
  std::vector<std::string> kinds;
  const std::vector<Link> node_links = p.node_links();
  for (const auto& l : node_links) {
    if (std::find(kinds.begin(), kinds.end(), l.kind) == kinds.end()) {
      kinds.push_back(l.kind);
    }
  }
  for (const auto& kind : kinds) {
    std::size_t count = 0;
    double low = 0;
    double high = 0;
    for (const auto& l : node_links) {
      if (l.kind == kind) {
        low = count == 0 ? l.bytes_per_second : std::min(low, l.bytes_per_second);
        high = std::max(high, l.bytes_per_second);
        ++count;
      }
    }
    fields.emplace_back(
        kind + " links",
        low == high ? fmt::format("{} per node, {:.1f} GB/s", count, low / 1e9)
                    : fmt::format("{} per node, {:.1f}-{:.1f} GB/s", count, low / 1e9, high / 1e9));
  }
  if (thermal) {
    fields.emplace_back(
        "devices", rep.power_limit_watts > 0
                       ? fmt::format("thermal model, capped at {:g} W each", rep.power_limit_watts)
                       : std::string("thermal model, at their default limit"));
    if (!rep.governor.empty()) {
      fields.back().second += fmt::format(", governor {} every second", rep.governor);
    }
  }
  if (p.nodes > 1) {
    fields.emplace_back("fabric", fabric_text(p));
  }
  doc.add(report::Fields{std::move(fields)});
  report::Table table;
  table.columns = {{"policy"},
                   {"makespan", report::Align::kRight},
                   {"bound", report::Align::kRight},
                   {"efficiency", report::Align::kRight},
                   {"busy", report::Align::kRight},
                   {"moved", report::Align::kRight}};
  if (thermal) {
    table.columns.push_back({"energy", report::Align::kRight});
  }
  table.columns.push_back({"bottleneck"});
  const SimResult* best = nullptr;
  for (const auto& r : rep.runs) {
    table.rows.push_back({r.policy, seconds_text(r.makespan), seconds_text(r.bound()),
                          fmt::format("{:.0f} %", 100 * r.efficiency()),
                          fmt::format("{:.0f} %", 100 * mean_busy(r)), bytes_text(r.bytes_moved)});
    if (thermal) {
      table.rows.back().push_back(r.energy_joules >= 1e6
                                      ? fmt::format("{:.2f} MJ", r.energy_joules / 1e6)
                                      : fmt::format("{:.2f} kJ", r.energy_joules / 1e3));
    }
    table.rows.back().push_back(r.bottleneck);
    if (best == nullptr || r.makespan < best->makespan) {
      best = &r;
    }
  }
  doc.add(std::move(table));
  if (rep.runs.size() > 1 && best != nullptr) {
    doc.add(report::Note{fmt::format(
        "best{}: {} ({})",
        rep.seeds.size() > 1 ? fmt::format(" with seed {}", rep.seeds.front()) : std::string(),
        best->policy, seconds_text(best->makespan))});
  }
  add_seeds(rep, doc);
  add_thermal_notes(rep, doc);
  for (const auto& note : p.node.notes) {
    doc.add(report::Note{"note: " + note});
  }
  return doc;
}

nlohmann::json to_json(const SimReport& rep) {
  const auto& p = rep.platform;
  nlohmann::ordered_json links = nlohmann::ordered_json::array();
  for (const auto& l : p.node_links()) {
    links.push_back({{"name", l.name},
                     {"kind", l.kind},
                     {"bytes_per_second", l.bytes_per_second},
                     {"latency_seconds", l.latency}});
  }
  nlohmann::ordered_json platform = {{"origin", p.node.origin},
                                     {"nodes", p.nodes},
                                     {"devices_per_node", p.node.devices.size()},
                                     {"devices", p.node.devices},
                                     {"links", links},
                                     {"fabric",
                                      {{"kind", to_string(p.fabric)},
                                       {"ports_per_node", std::max(1, p.node.fabric_ports)},
                                       {"bytes_per_second", p.fabric.bytes_per_second},
                                       {"latency_seconds", p.fabric.latency},
                                       {"oversubscription", p.fabric.oversubscription}}},
                                     {"notes", p.node.notes}};
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& r : rep.runs) {
    runs.push_back(to_json(r));
  }
  nlohmann::json fields = {
      {"platform", nlohmann::json(platform)}, {"workload", rep.workload}, {"runs", runs}};
  if (rep.seeds.size() > 1 && rep.seed_makespans.size() == rep.runs.size()) {
    nlohmann::json makespans = nlohmann::json::object();
    for (std::size_t i = 0; i < rep.runs.size(); ++i) {
      makespans[rep.runs[i].policy] = rep.seed_makespans[i];
    }
    fields["seeds"] = {{"seeds", rep.seeds}, {"makespan_seconds", makespans}};
  }
  return report::document("acco.sim/1", fields);
}

}  // namespace acco::sim
