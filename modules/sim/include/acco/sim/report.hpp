// What `acco sim` prints: the platform in a few lines, then one row per policy (makespan, the
// best lower bound, efficiency against it, mean device busy share, bytes moved, the bottleneck),
// the same as JSON (acco.sim/1), and as an HTML page with plots.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "acco/report/document.hpp"
#include "acco/sim/platform.hpp"
#include "acco/sim/simulate.hpp"

namespace acco::sim {

struct SimReport {
  Platform platform;
  std::string workload;  // "cholesky (tiles 8)"
  std::vector<SimResult> runs;
  std::vector<double> cooling{};  // per device, with the thermal model (SimOptions::cooling)
  double power_limit_watts = 0;   // every device's, with the thermal model; 0: its default
  std::string governor{};         // the governor's mode on the virtual clock; empty: none
  // With several seeds (--seeds N): the seeds the workload was drawn with, in order, and each
  // policy's makespan for each (in `runs`' order); `runs` holds the first seed's runs.
  std::vector<std::uint64_t> seeds{};
  std::vector<std::vector<double>> seed_makespans{};
};

[[nodiscard]] report::Document sim_document(const SimReport& report);
// {"schema":"acco.sim/1","platform":{...},"workload":...,"runs":[...]}
[[nodiscard]] nlohmann::json to_json(const SimReport& report);
// A self-contained page (`acco sim --html FILE`): the text report, then the first run drawn as
// inline SVG: its tasks on each device over time (a Gantt chart, with its task records, up to 64
// devices) and each link's busy share per kind of link (a heat map, with its link loads: a row
// per node, or per band of nodes past 64 nodes, each cell the band's busiest, and the spines).
[[nodiscard]] std::string to_html(const SimReport& report);

}  // namespace acco::sim
