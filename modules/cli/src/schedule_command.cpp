#include "schedule_command.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "acco/core/file.hpp"
#include "acco/core/units.hpp"
#include "acco/device/cuda_backend.hpp"
#include "acco/monitor/server.hpp"
#include "acco/monitor/thermal_experiment.hpp"
#include "acco/report/document.hpp"
#include "acco/sched/experiment.hpp"
#include "acco/sched/experiment_report.hpp"
#include "acco/sched/perf_model.hpp"
#include "acco/sched/policy.hpp"
#include "acco/sched/record.hpp"
#include "acco/sched/workload.hpp"
#include "acco/sched/workload_run.hpp"
#include "acco/tune/tune_profile.hpp"

#include "bench_command.hpp"
#include "command_spec.hpp"
#include "commands.hpp"
#include "monitor_flags.hpp"
#include "process.hpp"
#include "schedule_distributed.hpp"

namespace acco::cli {
namespace {

// Command-line limits: what a run from the shell is meant for (the library's own limits, in
// sched::make_workload, guard against overflow and are wider).
constexpr int kMaxTiles = 100;
constexpr int kMaxTasks = 1'000'000;
constexpr int kMaxHostDevices = 64;
constexpr int kMaxCalibrate = 100;
constexpr double kMaxFactor = 1e6;  // --skew, --ccr, --alpha, --time-scale (and its inverse)
constexpr double kMinSpeed = 1e-3;  // --speeds
constexpr double kMaxSpeed = 1e3;

// `acco schedule` flags as CLI11 reads them: numbers typed, lists, names and sizes as text.
struct ScheduleFlags {
  sched::WorkloadSpec workload;
  std::string workload_name = "cholesky";
  std::string devices = "host:4";
  std::string kinds;
  std::string speeds;
  std::string link = "pcie3x16";
  std::string memory;
  std::string tile_bytes;
  std::string task_bytes;
  std::string policy = "dmda";
  bool sorted_decision = false;
  int calibrate = 1;
  std::string models;
  std::string trace;
  std::string serve;
  std::string serve_interval = "200ms";
  bool simulate_thermal = false;
  double thermal_scale = 60;
  std::string cooling = "1";
  std::string governor = "off,thermal";
  ProfileFlags profile;
  DistributedFlags distributed;
  const CLI::Option* link_option = nullptr;  // was --link given?
};

void add_schedule_flags(CLI::App& cmd, SharedFlags& shared, ScheduleFlags& f) {
  auto& w = f.workload;
  std::vector<std::string> workloads;
  for (const auto kind :
       {sched::WorkloadKind::kCholesky, sched::WorkloadKind::kLu, sched::WorkloadKind::kIndependent,
        sched::WorkloadKind::kChain, sched::WorkloadKind::kRandom}) {
    workloads.emplace_back(sched::to_string(kind));
  }
  offer_values(cmd.add_option("--workload", f.workload_name,
                              "cholesky (default), lu, independent, chain, random (layered random "
                              "DAG)")
                   ->type_name("NAME"),
               workloads);
  cmd.add_option("--tiles", w.tiles, "cholesky, lu: t x t tiles (default 8)")->type_name("N");
  cmd.add_option("--tasks", w.tasks, "independent, chain, random: number of tasks (default 1000)")
      ->type_name("N");
  cmd.add_option("--seed", w.seed, "independent, random: random seed (default 1)")->type_name("N");
  cmd.add_option("--skew", w.skew, "independent: costs log-uniform in [1, X] x base (default 4)")
      ->type_name("X");
  cmd.add_option("--ccr", w.ccr, "random: communication-to-computation ratio (default 1)")
      ->type_name("X");
  cmd.add_option("--alpha", w.alpha, "random: DAG shape, wider for larger X (default 1)")
      ->type_name("X");
  cmd.add_option("--out-degree", w.out_degree, "random: most predecessors per task (default 3)")
      ->type_name("N");
  cmd.add_option("--beta", w.beta, "random: cost heterogeneity between devices, [0, 2) (0.5)")
      ->type_name("X");
  offer_values(cmd.add_option("--kernels", w.kernels,
                              "cholesky, lu: kernel times sirocco (default), mirage, uniform")
                   ->type_name("NAME"),
               {"sirocco", "mirage", "uniform"});
  cmd.add_option("--time-scale", w.time_scale, "multiply every task's cost by X (default 1)")
      ->type_name("X");
  cmd.add_option("--devices", f.devices, "host:N emulated devices (default host:4), or cuda")
      ->type_name("SPEC");
  offer_values(cmd.add_option("--kinds", f.kinds,
                              "per device, or one for all: cpu or gpu timing column (default gpu)")
                   ->type_name("LIST"),
               {"cpu", "gpu"});
  cmd.add_option("--speeds", f.speeds, "per device, or one for all: speed factor (default 1)")
      ->type_name("LIST");
  f.link_option = cmd.add_option("--link", f.link, "host devices: emulated link (default pcie3x16)")
                      ->type_name("SPEC");
  add_profile_flags(cmd, f.profile);
  add_distributed_flags(cmd, f.distributed);
  cmd.add_option("--tile-bytes", f.tile_bytes,
                 "cholesky, lu: bytes per tile (default b x b floats of the kernel table)")
      ->type_name("SIZE");
  cmd.add_option("--task-bytes", f.task_bytes,
                 "independent, chain: bytes of each task's data (default 1MiB)")
      ->type_name("SIZE");
  cmd.add_option("--memory", f.memory, "per-device memory budget (default the device's)")
      ->type_name("SIZE");
  std::vector<std::string> policies;
  for (const sched::PolicyKind kind : sched::all_policies()) {
    policies.emplace_back(sched::to_string(kind));
  }
  policies.emplace_back("all");
  offer_values(cmd.add_option("--policy", f.policy,
                              "dmda (default), eager, round-robin, least-loaded, ws, heft; a "
                              "list, or all")
                   ->type_name("NAMES"),
               policies);
  cmd.add_flag("--sorted-decision", f.sorted_decision,
               "dmda, ws: a device is free once its queued tasks of higher or equal priority have "
               "run (StarPU's dmdasd), not its whole queue");
  cmd.add_option("--calibrate", f.calibrate,
                 "unmeasured runs before the measured one, per policy (default 1)")
      ->type_name("N");
  cmd.add_option("--models", f.models, "load performance models from FILE and save them after")
      ->type_name("FILE");
  cmd.add_option("--trace", f.trace, "write the first policy's run as a Chrome trace to FILE")
      ->type_name("FILE");
  CLI::Option* serve =
      cmd.add_option("--serve", f.serve,
                     "while the runs last, serve /metrics and the API (the runtime's queues and "
                     "tasks, the transfer engines' bytes) on this address")
          ->type_name("HOST:PORT");
  cmd.add_option("--serve-interval", f.serve_interval, "--serve: sampling period (default 200ms)")
      ->type_name("DURATION")
      ->needs(serve);
  CLI::Option* thermal =
      cmd.add_flag("--simulate-thermal", f.simulate_thermal,
                   "run every kernel on simulated accelerators whose clocks follow a thermal and "
                   "power model (firmware throttling included), once per --governor setting");
  cmd.add_option("--thermal-scale", f.thermal_scale,
                 "--simulate-thermal: simulated seconds per wall second (default 60)")
      ->type_name("X")
      ->needs(thermal);
  cmd.add_option("--cooling", f.cooling,
                 "--simulate-thermal: heatsink-to-air resistance factor per device, or one for "
                 "all (default 1; 2 is a device with poor cooling)")
      ->type_name("LIST")
      ->needs(thermal);
  offer_values(cmd.add_option("--governor", f.governor,
                              "--simulate-thermal: governor settings to compare: off (firmware "
                              "only), thermal, energy, cap:W (default off,thermal)")
                   ->type_name("LIST")
                   ->needs(thermal),
               {"off", "thermal", "energy"});
  add_json_flag(cmd, shared, "print JSON (schema acco.schedule/1)");
}

// --simulate-thermal and its options.
Status parse_thermal(const ScheduleFlags& f, ScheduleOptions& s) {
  if (!f.simulate_thermal) {
    return {};
  }
  if (s.cuda) {
    return usage("--simulate-thermal runs simulated devices: it cannot go with --devices cuda");
  }
  ScheduleOptions::Thermal t;
  if (!(f.thermal_scale >= 1 && f.thermal_scale <= 10000)) {
    return bad_value("--thermal-scale", fmt::format("{}", f.thermal_scale),
                     "a factor from 1 to 10000");
  }
  t.time_scale = f.thermal_scale;
  for (const std::string& item : units::split(f.cooling, ',')) {
    double factor = 0;
    try {
      std::size_t used = 0;
      factor = std::stod(item, &used);
      factor = used == item.size() ? factor : -1;
    } catch (const std::exception&) {
      factor = -1;
    }
    if (!(factor >= 0.1 && factor <= 100)) {
      return bad_value("--cooling", f.cooling,
                       "factors from 0.1 to 100, one per device or one for all");
    }
    t.cooling.push_back(factor);
  }
  if (t.cooling.size() != 1 && t.cooling.size() != static_cast<std::size_t>(s.devices)) {
    return usage(
        fmt::format("--cooling: {} values for {} devices (give one per device, or one "
                    "for all)",
                    t.cooling.size(), s.devices));
  }
  for (const std::string& item : units::split(f.governor, ',')) {
    const bool again = std::any_of(t.governors.begin(), t.governors.end(),
                                   [&](const auto& g) { return g.first == item; });
    if (again) {
      return usage(fmt::format("--governor: '{}' is given twice (each setting runs once)", item));
    }
    if (item == "off") {
      t.governors.emplace_back(item, std::nullopt);
      continue;
    }
    power::GovernorOptions g;
    if (Status parsed = power::parse_governor_mode(item, g); !parsed) {
      return usage("--governor: " + parsed.error().message + " or off");
    }
    t.governors.emplace_back(item, g);
  }
  if (t.governors.empty()) {
    return bad_value("--governor", f.governor, "a list of off, thermal, energy, cap:W");
  }
  s.thermal = t;
  return {};
}

// --serve and --serve-interval.
Status parse_serve(const ScheduleFlags& f, ScheduleOptions& s) {
  ACCO_ASSIGN_OR_RETURN(const auto interval,
                        sampling_interval("--serve-interval", f.serve_interval, 10));
  if (f.serve.empty()) {
    return {};
  }
  monitor::RuntimeServerOptions serve;
  ACCO_ASSIGN_OR_RETURN(serve.server, listen_address("--serve", f.serve));
  serve.interval = interval;
  s.serve = serve;
  return {};
}

// "host:N", "host" (4 devices) or "cuda".
Status parse_devices(const std::string& text, ScheduleOptions& s) {
  constexpr std::string_view kExpected = "host:N (N from 1 to 64) or cuda";
  if (text == "cuda") {
    s.cuda = true;
    return {};
  }
  if (text == "host") {
    return {};
  }
  if (text.rfind("host:", 0) != 0) {
    return bad_value("--devices", text, kExpected);
  }
  auto n = units::parse_int(std::string_view(text).substr(5));
  if (!n || *n < 1 || *n > kMaxHostDevices) {
    return bad_value("--devices", text, kExpected);
  }
  s.devices = static_cast<int>(*n);
  return {};
}

// A per-device list has one entry, or one per device. With cuda the count is known only once the
// GPUs are found, so the run checks it then (expand_per_device).
Status check_list_length(std::string_view flag, std::size_t entries, const ScheduleOptions& s) {
  if (!s.cuda && entries != 1 && entries != static_cast<std::size_t>(s.devices)) {
    return usage(fmt::format("{}: {} values for {} devices (give one per device, or one for all)",
                             flag, entries, s.devices));
  }
  return {};
}

Status check_workload(const std::string& name, sched::WorkloadSpec& w) {
  const auto kind = sched::parse_workload_kind(name);
  if (!kind) {
    return bad_value("--workload", name, "one of cholesky, lu, independent, chain, random");
  }
  w.kind = *kind;
  if (w.tiles < 1 || w.tiles > kMaxTiles) {
    return bad_value("--tiles", std::to_string(w.tiles), "between 1 and 100");
  }
  if (w.tasks < 1 || w.tasks > kMaxTasks) {
    return bad_value("--tasks", std::to_string(w.tasks), "between 1 and 1000000");
  }
  // Bounds far beyond any useful value, so the emulated times stay finite.
  if (!(w.skew >= 1 && w.skew <= kMaxFactor)) {
    return bad_value("--skew", fmt::format("{}", w.skew), "a number from 1 to 1e6");
  }
  if (!(w.ccr >= 0 && w.ccr <= kMaxFactor)) {
    return bad_value("--ccr", fmt::format("{}", w.ccr), "a number from 0 to 1e6");
  }
  if (!(w.alpha > 0 && w.alpha <= kMaxFactor)) {
    return bad_value("--alpha", fmt::format("{}", w.alpha), "a number above 0, at most 1e6");
  }
  if (w.out_degree < 1) {
    return bad_value("--out-degree", std::to_string(w.out_degree), "at least 1");
  }
  if (!(w.beta >= 0 && w.beta < 2)) {
    return bad_value("--beta", fmt::format("{}", w.beta), "in [0, 2)");
  }
  if (!(w.time_scale >= 1 / kMaxFactor && w.time_scale <= kMaxFactor)) {
    return bad_value("--time-scale", fmt::format("{}", w.time_scale), "a number from 1e-6 to 1e6");
  }
  if (!sched::kernel_table(w.kernels)) {
    return bad_value("--kernels", w.kernels, "one of sirocco, mirage, uniform");
  }
  return {};
}

Status parse_kinds_and_speeds(const ScheduleFlags& f, ScheduleOptions& s) {
  if (!f.kinds.empty()) {
    if (s.cuda) {
      return usage("--kinds: not with --devices cuda (every GPU is gpu)");
    }
    for (const auto& part : units::split(f.kinds, ',')) {
      const std::string k(units::trim(part));
      if (k != "cpu" && k != "gpu") {
        return bad_value("--kinds", k, "cpu or gpu");
      }
      s.kinds.push_back(k);
    }
    ACCO_RETURN_IF_ERROR(check_list_length("--kinds", s.kinds.size(), s));
  }
  if (!f.speeds.empty()) {
    for (const auto& v : units::split(f.speeds, ',')) {
      auto speed = units::parse_double(v);
      if (!speed || !(*speed >= kMinSpeed && *speed <= kMaxSpeed)) {
        return bad_value("--speeds", v, "a number from 0.001 to 1000");
      }
      s.speeds.push_back(*speed);
    }
    ACCO_RETURN_IF_ERROR(check_list_length("--speeds", s.speeds.size(), s));
  }
  return {};
}

Status parse_sizes(const ScheduleFlags& f, ScheduleOptions& s) {
  for (auto [flag, value, field] :
       {std::tuple{"--tile-bytes", &f.tile_bytes, &s.workload.tile_bytes},
        std::tuple{"--task-bytes", &f.task_bytes, &s.workload.task_bytes}}) {
    if (value->empty()) {
      continue;
    }
    auto bytes = units::parse_bytes(*value);
    if (!bytes || *bytes == 0 || *bytes > (std::uint64_t{1} << 40)) {
      return bad_value(flag, *value, "a size from 1 B to 1 TiB, such as 64KiB or 4MiB");
    }
    *field = static_cast<std::size_t>(*bytes);
  }
  if (!f.memory.empty()) {
    auto bytes = units::parse_bytes(f.memory);
    if (!bytes || *bytes == 0) {
      return bad_value("--memory", f.memory, "a size such as 512MiB or 2GiB");
    }
    s.memory_bytes = *bytes;
  }
  return {};
}

Result<std::vector<sched::PolicyKind>> parse_policies(const std::string& text) {
  if (text == "all") {
    return sched::all_policies();
  }
  std::vector<sched::PolicyKind> policies;
  for (const auto& part : units::split(text, ',')) {
    const std::string name(units::trim(part));
    auto kind = sched::policy_from_string(name);
    if (!kind) {
      return bad_value("--policy", name,
                       "one of eager, round-robin, least-loaded, dmda, ws, heft, or all");
    }
    if (std::find(policies.begin(), policies.end(), *kind) != policies.end()) {
      return usage(fmt::format("--policy: '{}' named twice", name));
    }
    policies.push_back(*kind);
  }
  return policies;
}

Result<ScheduleOptions> schedule_options(const ScheduleFlags& f) {
  ScheduleOptions s;
  s.workload = f.workload;
  ACCO_RETURN_IF_ERROR(parse_devices(f.devices, s));
  ACCO_RETURN_IF_ERROR(check_workload(f.workload_name, s.workload));
  ACCO_RETURN_IF_ERROR(parse_kinds_and_speeds(f, s));
  if (s.cuda && f.link_option->count() > 0) {
    return usage("--link: only for host devices (a GPU has its own link)");
  }
  auto link = device::parse_link(f.link);
  if (!link) {
    return tl::unexpected(as_usage(std::move(link.error()).with_context("--link")));
  }
  s.link = std::move(*link);
  ACCO_RETURN_IF_ERROR(parse_sizes(f, s));
  ACCO_ASSIGN_OR_RETURN(s.policies, parse_policies(f.policy));
  if (f.calibrate < 0 || f.calibrate > kMaxCalibrate) {
    return bad_value("--calibrate", std::to_string(f.calibrate), "between 0 and 100");
  }
  s.calibrate = f.calibrate;
  s.sorted_decision = f.sorted_decision;
  s.models = f.models;
  s.trace = f.trace;
  ACCO_RETURN_IF_ERROR(parse_serve(f, s));
  ACCO_RETURN_IF_ERROR(parse_thermal(f, s));
  ACCO_RETURN_IF_ERROR(check_profile_flags(f.profile));
  s.profile = f.profile;
  ACCO_ASSIGN_OR_RETURN(s.distributed, parse_distributed(f.distributed));
  if (s.distributed) {
    s.distributed->spec = s.workload;
    s.distributed->local_policy = s.policies.front();
    s.distributed->sorted_decision = s.sorted_decision;
    s.distributed->calibration_runs = s.calibrate;
    for (const auto& [given, flag] :
         {std::pair{s.serve.has_value(), "--serve"},
          std::pair{s.thermal.has_value(), "--simulate-thermal"},
          std::pair{!s.trace.empty(), "--trace"}, std::pair{!s.models.empty(), "--models"},
          std::pair{s.policies.size() > 1, "several --policy"}}) {
      if (given) {
        return usage(fmt::format("--distributed: {} is for one-node runs", flag));
      }
    }
  }
  return s;
}

// One entry for every device, or one per device.
template <typename T>
Result<std::vector<T>> expand_per_device(std::string_view flag, const std::vector<T>& given,
                                         T fallback, std::size_t devices) {
  if (given.empty()) {
    return std::vector<T>(devices, fallback);
  }
  if (given.size() == 1) {
    return std::vector<T>(devices, given.front());
  }
  if (given.size() != devices) {
    return usage(fmt::format("{}: {} values for {} devices (give one per device, or one for all)",
                             flag, given.size(), devices));
  }
  return given;
}

// Host devices with the emulated link and speed factors, or every GPU. kUnavailable or
// kUnsupported when CUDA cannot be used; kUsage for lists of the wrong length.
Result<sched::ExperimentDevices> open_devices(const ScheduleOptions& s) {
  sched::ExperimentDevices out;
  out.memory_budget_bytes = s.memory_bytes;
  std::vector<double> speeds;
  if (s.cuda) {
    ACCO_ASSIGN_OR_RETURN(out.backend, device::make_cuda_backend(), "--devices cuda");
    if (out.backend->devices().empty()) {
      return fail(Errc::kUnavailable, "--devices cuda: the CUDA backend found no GPU");
    }
    ACCO_ASSIGN_OR_RETURN(
        speeds, expand_per_device("--speeds", s.speeds, 1.0, out.backend->devices().size()));
  } else {
    ACCO_ASSIGN_OR_RETURN(
        speeds, expand_per_device("--speeds", s.speeds, 1.0, static_cast<std::size_t>(s.devices)));
    device::HostBackendOptions host;
    host.devices = s.devices;
    host.link = s.link;
    host.speed_factors = speeds;
    if (s.memory_bytes > 0) {
      host.memory_bytes_per_device = s.memory_bytes;
    }
    auto backend = device::make_host_backend(host);
    if (!backend) {
      return tl::unexpected(as_usage(std::move(backend.error()).with_context("host devices")));
    }
    out.backend = std::move(*backend);
    out.link = s.link.name;
  }
  out.devices = out.backend->devices();
  ACCO_ASSIGN_OR_RETURN(
      auto kinds, expand_per_device("--kinds", s.kinds, std::string("gpu"), out.devices.size()));
  for (std::size_t d = 0; d < out.devices.size(); ++d) {
    out.models.push_back({kinds[d], speeds[d]});
  }
  return out;
}

// The directory must exist before minutes of runs; the write itself is atomic and may still fail.
Status check_output_dir(std::string_view flag, const std::string& path) {
  auto dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) {
    dir = ".";
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return fail(Errc::kCannotWrite, fmt::format("{}: cannot write {}: directory {} does not exist",
                                                flag, path, dir.string()));
  }
  return {};
}

// Checks what the runs need before starting them: the budget against the largest task, the
// models file, the output directories.
Status check_before_runs(const ScheduleOptions& s, const sched::Workload& workload) {
  if (s.memory_bytes > 0) {
    const sched::LargestTask needed = sched::largest_task(workload);
    if (needed.bytes > s.memory_bytes) {
      return usage(fmt::format("--memory: {} cannot hold the {} a {} task touches",
                               units::format_bytes(s.memory_bytes),
                               units::format_bytes(needed.bytes), needed.type));
    }
  }
  if (!s.models.empty()) {
    ACCO_RETURN_IF_ERROR(sched::PerfModels::load(s.models), "--models");
    ACCO_RETURN_IF_ERROR(check_output_dir("--models", s.models));
  }
  if (!s.trace.empty()) {
    ACCO_RETURN_IF_ERROR(check_output_dir("--trace", s.trace));
  }
  return {};
}

sched::ExperimentOptions experiment_options(const ScheduleOptions& s,
                                            monitor::RuntimeServer* server) {
  sched::ExperimentOptions e;
  e.spec = s.workload;
  e.policies = s.policies;
  e.calibration_runs = s.calibrate;
  e.sorted_decision = s.sorted_decision;
  e.models = s.models;
  if (server != nullptr) {
    e.observe = [server](sched::Runtime* runtime) { server->observe(runtime); };
  }
  return e;
}

monitor::ThermalExperimentOptions thermal_options(const ScheduleOptions& s,
                                                  monitor::RuntimeServer* server) {
  monitor::ThermalExperimentOptions t;
  t.experiment = experiment_options(s, server);
  t.time_scale = s.thermal->time_scale;
  t.cooling = s.thermal->cooling;
  t.governors = s.thermal->governors;
  return t;
}

// Whether `dir` holds any saved profile: probing the topology for the fingerprint costs more
// than a run of a small workload, so it is skipped when nothing could match.
bool any_saved_profile(const std::string& dir) {
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (it->path().extension() == ".json") {
      return true;
    }
  }
  return false;
}

// acco tune's engine settings for each device: its h2d_pinned entry, as the runtime moves its
// host data from pinned buffers. `note` says which file was used.
Status load_transfer_profiles(const ProfileFlags& flags, const core::Settings& settings,
                              sched::ExperimentDevices& d, std::string& note) {
  d.transfer_profiles.assign(d.devices.size(), std::nullopt);
  if (flags.no_profile) {
    return {};
  }
  std::optional<topo::Machine> machine;
  if (flags.profile.empty()) {
    auto dir = tune::tune_directory();
    if (!dir || !any_saved_profile(*dir)) {
      return {};
    }
    machine = probe_machine(settings, note);
  }
  ACCO_ASSIGN_OR_RETURN(const auto engines,
                        engine_profiles_for(flags, machine ? &*machine : nullptr, note));
  for (std::size_t i = 0; i < d.devices.size(); ++i) {
    const auto& info = d.devices[i]->info();
    const auto it = engines.find((info.pci.empty() ? info.name : info.pci) + "/h2d_pinned");
    if (it != engines.end()) {
      d.transfer_profiles[i] = it->second;
    }
  }
  return {};
}

}  // namespace

Result<Output> ScheduleCommand::run(const Invocation& inv) const {
  const ScheduleOptions& s = options_;
  auto devices = open_devices(s);
  if (!devices) {
    return tl::unexpected(devices.error());
  }
  std::string profile_note;
  if (auto loaded = load_transfer_profiles(s.profile, inv.settings, *devices, profile_note);
      !loaded) {
    return error_output(loaded.error(), profile_note);
  }
  auto workload = sched::make_workload(s.workload, devices->models);
  if (!workload) {
    return tl::unexpected(as_usage(std::move(workload.error())));
  }
  if (auto ready = check_before_runs(s, *workload); !ready) {
    return tl::unexpected(ready.error());
  }
  if (s.distributed) {
    return run_distributed_schedule(s, inv, *devices, profile_note);
  }
  std::unique_ptr<monitor::RuntimeServer> server;
  if (s.serve) {
    monitor::RuntimeServerOptions serve = *s.serve;
    serve.metrics = {.version = ACCO_VERSION, .hostname = hostname()};
    auto started = monitor::RuntimeServer::start(serve);
    if (!started) {
      return tl::unexpected(std::move(started.error()).with_context("--serve"));
    }
    server = std::move(*started);
    if (inv.progress) {
      const std::string& host = serve.server.host;
      inv.progress(fmt::format(
          "acco schedule: serving on http://{}:{}/ (metrics at /metrics), sampling every {}, "
          "NVML {}",
          host.find(':') != std::string::npos ? "[" + host + "]" : host, server->port(),
          units::format_seconds(std::chrono::duration<double>(serve.interval).count()),
          server->nvml_note()));
    }
  }
  std::optional<sched::Experiment> plain;
  std::optional<monitor::ThermalExperiment> thermal;
  Status ran;
  if (s.thermal) {
    auto result = monitor::run_thermal_experiment(*workload, *devices,
                                                  thermal_options(s, server.get()), inv.progress);
    if (result) {
      thermal = std::move(*result);
    } else {
      ran = tl::unexpected(as_usage(std::move(result.error())));
    }
  } else {
    auto result = sched::run_experiment(*workload, *devices, experiment_options(s, server.get()),
                                        inv.progress);
    if (result) {
      plain = std::move(*result);
    } else if (result.error().code == Errc::kCannotWrite) {  // the models file, after a run
      ran = tl::unexpected(std::move(result.error()).with_context("--models"));
    } else {
      ran = tl::unexpected(as_usage(std::move(result.error())));
    }
  }
  server.reset();  // the runs are over: so is serving them
  if (!ran) {
    return tl::unexpected(ran.error());
  }
  const sched::Experiment& experiment = thermal ? thermal->experiment : *plain;

  Output out;
  out.err = profile_note;
  if (!s.trace.empty()) {
    const auto trace = sched::chrome_trace(experiment.runs.front().record).dump();
    if (auto written = core::write_file_atomic(s.trace, trace); !written) {
      return tl::unexpected(as_cannot_write(std::move(written.error()).with_context("--trace")));
    }
    out.err +=
        fmt::format("acco: trace of {} written to {}\n", experiment.runs.front().policy, s.trace);
  }
  if (inv.format == Format::kJson) {
    out.out = (thermal ? monitor::to_json(*thermal) : sched::to_json(experiment)).dump(2) + "\n";
  } else {
    out.out = report::render_text(thermal ? monitor::thermal_experiment_report(*thermal)
                                          : sched::experiment_report(experiment));
  }
  for (const auto& r : experiment.runs) {
    if (r.failed > 0) {
      out.err += fmt::format("acco: {}\n", sched::failure_summary(r));
      out.exit_code = kExitTasksFailed;
    }
  }
  return out;
}

CommandSpec schedule_command() {
  return command_with_flags<ScheduleFlags>(
      "schedule", "run a named task graph on several devices under scheduling policies",
      add_schedule_flags, [](const ScheduleFlags& flags, const core::Settings&) {
        return command_from<ScheduleCommand>(schedule_options(flags));
      });
}

}  // namespace acco::cli
