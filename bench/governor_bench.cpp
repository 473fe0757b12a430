// Governor benchmark, on simulated devices whose speed follows their clocks (a ThermalRig at a
// time scale, 60x by default: an hour of simulated load in a minute of wall time), each case
// side by side in one run:
//  (a) thermal: 4 devices, one with poor cooling (heatsink-to-air resistance x4: a failed fan), a
//  sustained
//      tiled Cholesky stream (the factorisation repeated). No governor (the firmware's own
//      throttling only) against the thermal governor with headroom-aware placement: the hot
//      device's peak temperature against its slowdown threshold, the time the firmware held its
//      clocks down, throughput and energy per task.
//  (b) energy: a stream of independent tile kernels at 30 % and at 100 % of the devices'
//      capacity. Default limits against the energy mode: energy per task and time to finish.
// Prints tables and writes JSON ("acco.governor-bench/1"). Not a test: nothing here asserts.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "acco/core/result.hpp"
#include "acco/core/stats.hpp"
#include "acco/device/host_backend.hpp"
#include "acco/monitor/thermal_run.hpp"
#include "acco/power/controller.hpp"
#include "acco/power/governor_run.hpp"
#include "acco/power/thermal_rig.hpp"
#include "acco/sched/runtime.hpp"
#include "acco/sched/workload.hpp"

namespace {

using acco::Result;
using Json = nlohmann::ordered_json;
constexpr const char* kSchema = "acco.governor-bench/1";

struct Options {
  double scale = 60;
  int tiles = 12;
  double cost_scale = 20;      // Cholesky kernel times x this (ms-scale tasks on the host)
  int repeats = 4;             // factorisations in the thermal stream
  int runs = 3;                // thermal: each case run this often, alternating; the median is kept
  double hot_cooling = 4;      // a failed fan: the heatsink-to-air resistance x4
  double energy_minutes = 20;  // simulated minutes per energy case
  double kernel_ms = 4;        // energy stream: one kernel's wall time at full clock
  std::string only;            // "thermal" or "energy": that part alone
  // The thermal governor's thresholds in kelvin below T_max (the library's defaults otherwise).
  std::optional<double> target_below_max;
  std::optional<double> hot_below_max;
  std::optional<double> warm_below_max;
  std::string json;
};

std::vector<acco::sched::DeviceSpec> specs_of(const std::vector<acco::device::Device*>& devices) {
  std::vector<acco::sched::DeviceSpec> specs;
  for (auto* d : devices) {
    acco::sched::DeviceSpec s;
    s.device = d;
    s.kind = "gpu";
    specs.push_back(s);
  }
  return specs;
}

// --- (a) thermal ----------------------------------------------------------------------------

struct ThermalCase {
  std::string name;
  double simulated_seconds = 0;
  double tasks_per_second = 0;
  double joules_per_task = 0;
  double hot_max_celsius = 0;
  double hot_sw_thermal_seconds = 0;
  double hot_hw_thermal_seconds = 0;
  double slowdown_celsius = 0;
  std::uint64_t actions = 0;
};

Result<ThermalCase> thermal_case(const Options& o, bool governed) {
  acco::device::HostBackendOptions host;
  host.devices = 4;
  ACCO_ASSIGN_OR_RETURN(auto backend, acco::device::make_host_backend(host));
  acco::sched::WorkloadSpec spec;
  spec.tiles = o.tiles;
  spec.time_scale = o.cost_scale;
  const std::vector<acco::sched::DeviceModel> models(4, {"gpu", 1});
  ACCO_ASSIGN_OR_RETURN(auto workload, acco::sched::make_workload(spec, models));
  acco::monitor::ThermalRunOptions thermal;
  thermal.rig.time_scale = o.scale;
  thermal.rig.cooling_factors = {1, 1, 1, o.hot_cooling};
  if (governed) {
    acco::power::GovernorOptions g;
    g.target_below_max = o.target_below_max.value_or(g.target_below_max);
    g.hot_enter_below_max = o.hot_below_max.value_or(g.hot_enter_below_max);
    g.warm_enter_below_max = o.warm_below_max.value_or(g.warm_enter_below_max);
    thermal.governor = g;
  }
  acco::sched::WorkloadRunOptions run;
  run.calibration_runs = o.repeats - 1;
  ACCO_ASSIGN_OR_RETURN(auto out, acco::monitor::run_thermal_workload(
                                      workload, specs_of(backend->devices()), {}, run, thermal));
  ThermalCase c;
  c.name = governed ? "thermal governor + headroom placement" : "no governor (firmware only)";
  c.simulated_seconds = out.simulated_seconds;
  double joules = 0;
  for (const auto& d : out.devices) {
    joules += d.energy_joules;
  }
  c.tasks_per_second = static_cast<double>(out.tasks_run) / out.simulated_seconds;
  c.joules_per_task = joules / static_cast<double>(out.tasks_run);
  const auto& hot = out.devices.back();
  c.hot_max_celsius = hot.max_temperature_celsius;
  c.hot_sw_thermal_seconds = hot.sw_thermal_seconds;
  c.hot_hw_thermal_seconds = hot.hw_thermal_seconds;
  c.slowdown_celsius = acco::power::SimulatedModel{}.slowdown_celsius;
  if (out.governor) {
    for (const auto& [kind, n] : out.governor->actions_total) {
      c.actions += kind == "log" ? 0 : n;
    }
  }
  return c;
}

// --- (b) energy -----------------------------------------------------------------------------

struct EnergyCase {
  std::string name;
  double load = 0;
  double seconds = 0;  // simulated, first submit to last completion
  double joules_per_task = 0;
  std::size_t tasks = 0;
  std::vector<double> chosen_caps;
};

// A stream of independent kernels through the runtime, paced to `load` of the devices' capacity
// (1: everything submitted at once), on a rig with the governor in `mode` (nullopt: defaults).
Result<EnergyCase> energy_case(const Options& o, double load,
                               const std::optional<std::string>& mode) {
  constexpr int kDevices = 4;
  acco::device::HostBackendOptions host;
  host.devices = kDevices;
  ACCO_ASSIGN_OR_RETURN(auto backend, acco::device::make_host_backend(host));
  acco::power::ThermalRigOptions rig_options;
  rig_options.devices = kDevices;
  rig_options.time_scale = o.scale;
  ACCO_ASSIGN_OR_RETURN(auto rig, acco::power::ThermalRig::create(rig_options));
  auto actuator = rig->actuator();
  std::optional<acco::power::GovernorRun> governing;
  if (mode) {
    acco::power::GovernorOptions g;
    ACCO_RETURN_IF_ERROR(acco::power::parse_governor_mode(*mode, g));
    acco::power::ControllerOptions c;
    c.allow_control = true;
    governing.emplace(acco::power::Governor(g), acco::power::Controller(actuator.get(), c),
                      [](const acco::power::Action& a) {
                        if (std::getenv("ACCO_BENCH_DEBUG") != nullptr && a.device == "0") {
                          fmt::print(stderr, "{:.0f} {} {} {}\n", a.time_seconds,
                                     acco::power::to_string(a.kind), a.value, a.reason);
                        }
                      });
  }
  rig->start_ticks(1, [&](const std::vector<acco::power::DeviceSample>& s, double now) {
    if (governing) {
      (void)governing->tick(s, now);
    }
  });

  ACCO_ASSIGN_OR_RETURN(auto runtime,
                        acco::sched::Runtime::create(specs_of(backend->devices()), {}));
  const double kernel = o.kernel_ms / 1e3;
  auto codelet = std::make_shared<acco::sched::Codelet>();
  codelet->type = "tile";
  codelet->implementations.emplace_back("gpu", [&rig, kernel](acco::sched::TaskContext& ctx) {
    if (!rig->run_kernel(ctx.device(), kernel)) {
      throw acco::sched::DeviceFailure("simulated device lost");
    }
  });
  const double wall = o.energy_minutes * 60 / o.scale;
  const auto tasks = static_cast<std::size_t>(wall * kDevices * load / kernel);
  const double gap = kernel / (kDevices * load);
  std::vector<double> energy0;
  for (const auto& t : rig->totals()) {
    energy0.push_back(t.energy_joules);
  }
  const double t0 = rig->simulated_seconds();
  const auto begin = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < tasks; ++i) {
    if (load < 1) {
      std::this_thread::sleep_until(
          begin + std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::duration<double>(gap * static_cast<double>(i))));
    }
    acco::sched::Task t;
    t.codelet = codelet;
    ACCO_RETURN_IF_ERROR(runtime->submit(std::move(t)).transform([](auto) {}));
  }
  ACCO_RETURN_IF_ERROR(runtime->wait_all());
  (void)rig->read();  // advance to the end
  EnergyCase c;
  c.name = mode ? "energy mode" : "default limits";
  c.load = load;
  c.seconds = rig->simulated_seconds() - t0;
  double joules = 0;
  const auto totals = rig->totals();
  for (std::size_t d = 0; d < totals.size(); ++d) {
    joules += totals[d].energy_joules - energy0[d];
  }
  c.tasks = tasks;
  c.joules_per_task = joules / static_cast<double>(tasks);
  rig->stop_ticks();
  if (governing) {
    for (const auto& d : governing->status().devices) {
      c.chosen_caps.push_back(d.energy_cap_watts.value_or(0));
    }
  }
  return c;
}

}  // namespace

int run(int argc, char** argv) {
  Options o;
  CLI::App app{"acco governor benchmark (simulated devices)"};
  app.add_option("--scale", o.scale, "simulated seconds per wall second (default 60)");
  app.add_option("--tiles", o.tiles, "thermal: Cholesky tiles per side (default 12)");
  app.add_option("--repeats", o.repeats, "thermal: factorisations in the stream (default 4)");
  app.add_option("--hot-cooling", o.hot_cooling,
                 "thermal: the hot device's cooling factor (default 4)");
  app.add_option("--energy-minutes", o.energy_minutes,
                 "energy: simulated minutes per case (default 20)");
  app.add_option("--runs", o.runs, "thermal: runs per case, the median kept (default 3)");
  app.add_option("--target-below-max", o.target_below_max,
                 "thermal: the PI target, kelvin below T_max (library default 7)");
  app.add_option("--hot-below-max", o.hot_below_max,
                 "thermal: the hot threshold, kelvin below T_max (library default 4)");
  app.add_option("--warm-below-max", o.warm_below_max,
                 "thermal: the warm threshold, kelvin below T_max (library default 10)");
  app.add_option("--only", o.only, "thermal or energy: run that part alone");
  app.add_option("--json", o.json, "write results here");
  CLI11_PARSE(app, argc, argv);

  Json thermal = Json::array();
  std::vector<ThermalCase> tc;
  // Each case o.runs times, alternating so both see the same machine load; the run nearest the
  // median throughput (core::stats: for an even count, one of the two middle runs) stands for
  // its case.
  std::vector<std::vector<ThermalCase>> all(2);
  for (int run = 0; run < o.runs && o.only != "energy"; ++run) {
    for (const bool governed : {false, true}) {
      auto c = thermal_case(o, governed);
      if (!c) {
        fmt::print(stderr, "governor bench: thermal: {}\n", c.error().message);
        return 1;
      }
      all[governed ? 1 : 0].push_back(*c);
    }
  }
  std::vector<std::vector<double>> rates(2);
  for (auto& runs : all) {
    if (runs.empty()) {
      continue;
    }
    // Sorted, so the runs are listed slowest first.
    std::sort(runs.begin(), runs.end(), [](const ThermalCase& a, const ThermalCase& b) {
      return a.tasks_per_second < b.tasks_per_second;
    });
    std::vector<double> throughputs;
    throughputs.reserve(runs.size());
    for (const auto& c : runs) {
      throughputs.push_back(c.tasks_per_second);
    }
    const double median = acco::core::stats::median(throughputs);
    const auto distance = [&](const ThermalCase& c) {
      return std::abs(c.tasks_per_second - median);
    };
    tc.push_back(*std::min_element(
        runs.begin(), runs.end(),
        [&](const ThermalCase& a, const ThermalCase& b) { return distance(a) < distance(b); }));
  }
  for (std::size_t k = 0; k < all.size(); ++k) {
    for (const auto& c : all[k]) {
      rates[k].push_back(c.tasks_per_second);
    }
  }
  fmt::print(
      "(a) thermal: 4 devices, device 3 cooled {}x worse, Cholesky {}x{} x{} on a {:g}x "
      "clock (the median run of each case)\n",
      o.hot_cooling, o.tiles, o.tiles, o.repeats, o.scale);
  fmt::print("  {:<40} {:>9} {:>8} {:>11} {:>9} {:>10} {:>10} {:>8}\n", "case", "sim time",
             "tasks/s", "energy/task", "hot max", "hot sw", "hot hw", "actions");
  for (const auto& c : tc) {
    fmt::print("  {:<40} {:>8.0f}s {:>8.3f} {:>9.1f} J {:>7.1f} C {:>9.1f}s {:>9.1f}s {:>8}\n",
               c.name, c.simulated_seconds, c.tasks_per_second, c.joules_per_task,
               c.hot_max_celsius, c.hot_sw_thermal_seconds, c.hot_hw_thermal_seconds, c.actions);
    thermal.push_back({{"case", c.name},
                       {"simulated_seconds", c.simulated_seconds},
                       {"tasks_per_second", c.tasks_per_second},
                       {"energy_per_task_joules", c.joules_per_task},
                       {"hot_max_temperature_celsius", c.hot_max_celsius},
                       {"hot_sw_thermal_seconds", c.hot_sw_thermal_seconds},
                       {"hot_hw_thermal_seconds", c.hot_hw_thermal_seconds},
                       {"slowdown_celsius", c.slowdown_celsius},
                       {"actions", c.actions}});
  }
  const double throughput_ratio =
      tc.size() == 2 ? tc[1].tasks_per_second / tc[0].tasks_per_second : 0;
  if (tc.size() == 2) {
    fmt::print(
        "  median of {} runs each; governed/ungoverned throughput {:.3f} (runs: {:.3f} vs "
        "{:.3f}); hot device below its {:.0f} C slowdown threshold under the governor: {}\n\n",
        o.runs, throughput_ratio, fmt::join(rates[1], " "), fmt::join(rates[0], " "),
        tc[1].slowdown_celsius, tc[1].hot_max_celsius < tc[1].slowdown_celsius ? "yes" : "no");
  }

  Json energy = Json::array();
  fmt::print("(b) energy: independent {:.0f} ms kernels on 4 devices, {:.0f} simulated minutes\n",
             o.kernel_ms, o.energy_minutes);
  fmt::print("  {:<16} {:>5} {:>10} {:>12} {:>10} {:>10}  {}\n", "case", "load", "time",
             "energy/task", "d energy", "d time", "caps chosen");
  for (const double load : {0.3, 1.0}) {
    if (o.only == "thermal") {
      break;
    }
    std::vector<EnergyCase> ec;
    for (const auto& mode : {std::optional<std::string>{}, std::optional<std::string>{"energy"}}) {
      auto c = energy_case(o, load, mode);
      if (!c) {
        fmt::print(stderr, "governor bench: energy: {}\n", c.error().message);
        return 1;
      }
      ec.push_back(*c);
    }
    for (const auto& c : ec) {
      const double de = c.joules_per_task / ec[0].joules_per_task - 1;
      const double dt = c.seconds / ec[0].seconds - 1;
      std::string caps;
      for (const double w : c.chosen_caps) {
        caps += fmt::format("{}{:.0f} W", caps.empty() ? "" : ", ", w);
      }
      fmt::print("  {:<16} {:>4.0f}% {:>9.1f}s {:>10.1f} J {:>+9.1f}% {:>+9.1f}%  {}\n", c.name,
                 c.load * 100, c.seconds, c.joules_per_task, de * 100, dt * 100,
                 caps.empty() ? "-" : caps);
      energy.push_back({{"case", c.name},
                        {"load", c.load},
                        {"simulated_seconds", c.seconds},
                        {"tasks", c.tasks},
                        {"energy_per_task_joules", c.joules_per_task},
                        {"energy_change", de},
                        {"time_change", dt},
                        {"chosen_caps_watts", c.chosen_caps}});
    }
  }
  if (!o.json.empty()) {
    const Json j = {
        {"schema", kSchema},
        {"scale", o.scale},
        {"thermal", thermal},
        {"thermal_throughput_ratio", throughput_ratio},
        {"thermal_runs_tasks_per_second", {{"ungoverned", rates[0]}, {"governed", rates[1]}}},
        {"energy", energy}};
    std::ofstream(o.json) << j.dump(2) << "\n";
  }
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "governor bench: {}\n", e.what());
    return 1;
  }
}
