#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "acco/cli/app.hpp"
#include "acco/core/units.hpp"
#include "acco/dev/host_backend.hpp"
#include "acco/topo/nvml.hpp"
#include "acco/topo/probe.hpp"

namespace acco::cli {
namespace {

core::Settings default_settings() {
  core::Settings s;
  s.define("sysroot", "/", "directory whose sys/ and proc/ replace the live /sys and /proc");
  s.define("nvml", "auto", "query NVML: auto (for the live root or a named library), on, off");
  s.define("nvml-library", topo::kNvmlLibrary, "NVML library to dlopen (name or path)");
  return s;
}

// `acco schedule` flags that need more than CLI11's conversion: lists, names, sizes.
struct ScheduleText {
  std::string devices = "host:4";
  std::string kinds;
  std::string speeds;
  std::string memory;
  std::string tile_bytes;
  std::string task_bytes;
  std::string policy = "dmda";
};

void add_schedule_flags(CLI::App* cmd, ScheduleOptions& s, ScheduleText& text) {
  auto& w = s.workload;
  cmd->add_option("--workload", w.name,
                  "cholesky (default), lu, independent, chain, random (layered random DAG)")
      ->type_name("NAME");
  cmd->add_option("--tiles", w.tiles, "cholesky, lu: t x t tiles (default 8)")->type_name("N");
  cmd->add_option("--tasks", w.tasks, "independent, chain, random: number of tasks (default 1000)")
      ->type_name("N");
  cmd->add_option("--seed", w.seed, "independent, random: random seed (default 1)")->type_name("N");
  cmd->add_option("--skew", w.skew, "independent: costs log-uniform in [1, X] x base (default 4)")
      ->type_name("X");
  cmd->add_option("--ccr", w.ccr, "random: communication-to-computation ratio (default 1)")
      ->type_name("X");
  cmd->add_option("--alpha", w.alpha, "random: DAG shape, wider for larger X (default 1)")
      ->type_name("X");
  cmd->add_option("--out-degree", w.out_degree, "random: most predecessors per task (default 3)")
      ->type_name("N");
  cmd->add_option("--beta", w.beta, "random: cost heterogeneity between devices, [0, 2) (0.5)")
      ->type_name("X");
  cmd->add_option("--kernels", w.kernels,
                  "cholesky, lu: kernel times sirocco (default), mirage, "
                  "uniform")
      ->type_name("NAME");
  cmd->add_option("--time-scale", w.time_scale, "multiply every task's cost by X (default 1)")
      ->type_name("X");
  cmd->add_option("--devices", text.devices, "host:N emulated devices (default host:4), or cuda")
      ->type_name("SPEC");
  cmd->add_option("--kinds", text.kinds,
                  "per device, or one for all: cpu or gpu timing column (default gpu)")
      ->type_name("LIST");
  cmd->add_option("--speeds", text.speeds, "per device, or one for all: speed factor (default 1)")
      ->type_name("LIST");
  cmd->add_option("--link", s.link, "host devices: emulated link (default pcie3x16)")
      ->type_name("SPEC");
  cmd->add_option("--tile-bytes", text.tile_bytes,
                  "cholesky, lu: bytes per tile (default b x b floats of the kernel table)")
      ->type_name("SIZE");
  cmd->add_option("--task-bytes", text.task_bytes,
                  "independent, chain: bytes of each task's data (default 1MiB)")
      ->type_name("SIZE");
  cmd->add_option("--memory", text.memory, "per-device memory budget (default the device's)")
      ->type_name("SIZE");
  cmd->add_option("--policy", text.policy,
                  "dmda (default), eager, round-robin, least-loaded, ws, heft; a list, or all")
      ->type_name("NAMES");
  cmd->add_flag("--sorted-decision", s.sorted_decision,
                "dmda, ws: a device is free once its queued tasks of higher or equal priority have "
                "run (StarPU's dmdasd), not its whole queue");
  cmd->add_option("--calibrate", s.calibrate,
                  "unmeasured runs before the measured one, per policy (default 1)")
      ->type_name("N");
  cmd->add_option("--models", s.models, "load performance models from FILE and save them after")
      ->type_name("FILE");
  cmd->add_option("--trace", s.trace, "write the first policy's run as a Chrome trace to FILE")
      ->type_name("FILE");
}

Status bad_value(std::string_view flag, const std::string& value, std::string_view expected) {
  return fail(Errc::kInvalidArgument, fmt::format("{}: '{}' is not {}", flag, value, expected));
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
  if (!n || *n < 1 || *n > 64) {
    return bad_value("--devices", text, kExpected);
  }
  s.devices = static_cast<int>(*n);
  return {};
}

// A per-device list must have one entry, or one per device when the count is known.
Status check_list_length(std::string_view flag, std::size_t entries, const ScheduleOptions& s) {
  if (!s.cuda && entries != 1 && entries != static_cast<std::size_t>(s.devices)) {
    return fail(Errc::kInvalidArgument,
                fmt::format("{}: {} values for {} devices (give one per device, or one for all)",
                            flag, entries, s.devices));
  }
  return {};
}

Status parse_schedule(const ScheduleText& text, const CLI::App& cmd, ScheduleOptions& s) {
  auto& w = s.workload;
  if (auto d = parse_devices(text.devices, s); !d) {
    return d;
  }
  if (w.name != "cholesky" && w.name != "lu" && w.name != "independent" && w.name != "chain" &&
      w.name != "random") {
    return bad_value("--workload", w.name, "one of cholesky, lu, independent, chain, random");
  }
  if (w.tiles < 1 || w.tiles > 100) {
    return bad_value("--tiles", std::to_string(w.tiles), "between 1 and 100");
  }
  if (w.tasks < 1 || w.tasks > 1000000) {
    return bad_value("--tasks", std::to_string(w.tasks), "between 1 and 1000000");
  }
  const auto finite = [](double x) { return std::isfinite(x); };
  if (!(w.skew >= 1) || !finite(w.skew)) {
    return bad_value("--skew", fmt::format("{}", w.skew), "a finite number >= 1");
  }
  if (!(w.ccr >= 0) || !finite(w.ccr)) {
    return bad_value("--ccr", fmt::format("{}", w.ccr), "a finite number >= 0");
  }
  if (!(w.alpha > 0) || !finite(w.alpha)) {
    return bad_value("--alpha", fmt::format("{}", w.alpha), "a finite number > 0");
  }
  if (w.out_degree < 1) {
    return bad_value("--out-degree", std::to_string(w.out_degree), "at least 1");
  }
  if (!(w.beta >= 0 && w.beta < 2)) {
    return bad_value("--beta", fmt::format("{}", w.beta), "in [0, 2)");
  }
  if (!(w.time_scale > 0) || !finite(w.time_scale)) {
    return bad_value("--time-scale", fmt::format("{}", w.time_scale), "a finite number > 0");
  }
  if (!sched::kernel_table(w.kernels)) {
    return bad_value("--kernels", w.kernels, "one of sirocco, mirage, uniform");
  }
  if (!text.kinds.empty()) {
    if (s.cuda) {
      return fail(Errc::kInvalidArgument, "--kinds: not with --devices cuda (every GPU is gpu)");
    }
    for (const auto& part : units::split(text.kinds, ',')) {
      const std::string k(units::trim(part));
      if (k != "cpu" && k != "gpu") {
        return bad_value("--kinds", k, "cpu or gpu");
      }
      s.kinds.push_back(k);
    }
    if (auto n = check_list_length("--kinds", s.kinds.size(), s); !n) {
      return n;
    }
  }
  if (!text.speeds.empty()) {
    for (const auto& v : units::split(text.speeds, ',')) {
      auto speed = units::parse_double(v);
      if (!speed || !(*speed > 0) || !finite(*speed)) {
        return bad_value("--speeds", v, "a finite number > 0");
      }
      s.speeds.push_back(*speed);
    }
    if (auto n = check_list_length("--speeds", s.speeds.size(), s); !n) {
      return n;
    }
  }
  if (s.cuda && cmd.count("--link") > 0) {
    return fail(Errc::kInvalidArgument, "--link: only for host devices (a GPU has its own link)");
  }
  if (auto link = dev::parse_link(s.link); !link) {
    return fail(Errc::kInvalidArgument, "--link: " + link.error().message);
  }
  for (auto [flag, value, field] :
       {std::tuple{"--tile-bytes", &text.tile_bytes, &s.workload.tile_bytes},
        std::tuple{"--task-bytes", &text.task_bytes, &s.workload.task_bytes}}) {
    if (value->empty()) {
      continue;
    }
    auto bytes = units::parse_bytes(*value);
    if (!bytes || *bytes == 0 || *bytes > (std::uint64_t{1} << 40)) {
      return bad_value(flag, *value, "a size from 1 B to 1 TiB, such as 64KiB or 4MiB");
    }
    *field = static_cast<std::size_t>(*bytes);
  }
  if (!text.memory.empty()) {
    auto bytes = units::parse_bytes(text.memory);
    if (!bytes || *bytes == 0) {
      return bad_value("--memory", text.memory, "a size such as 512MiB or 2GiB");
    }
    s.memory_bytes = *bytes;
  }
  s.policies.clear();
  if (text.policy == "all") {
    s.policies = sched::all_policies();
  } else {
    for (const auto& part : units::split(text.policy, ',')) {
      const std::string name(units::trim(part));
      auto kind = sched::policy_from_string(name);
      if (!kind) {
        return bad_value("--policy", name,
                         "one of eager, round-robin, least-loaded, dmda, ws, heft, or all");
      }
      if (std::find(s.policies.begin(), s.policies.end(), *kind) != s.policies.end()) {
        return fail(Errc::kInvalidArgument, fmt::format("--policy: '{}' named twice", name));
      }
      s.policies.push_back(*kind);
    }
  }
  if (s.calibrate < 0 || s.calibrate > 100) {
    return bad_value("--calibrate", std::to_string(s.calibrate), "between 0 and 100");
  }
  return {};
}

}  // namespace

Result<Options> parse_args(const std::vector<std::string>& args, const Getenv& getenv) {
  Options o;
  o.settings = default_settings();

  CLI::App app{"acco: find, measure and remove the bottlenecks between hosts and accelerators",
               "acco"};
  app.set_version_flag("--version", std::string(ACCO_VERSION));
  app.require_subcommand(0, 1);
  std::string config;
  std::map<std::string, std::string> flags;
  std::string fail_on;
  bool json = false;

  const auto add_machine_flags = [&](CLI::App* cmd, bool snapshot) {
    cmd->add_option("--sysroot", flags["sysroot"],
                    "read DIR/sys and DIR/proc instead of /sys and /proc (env ACCO_SYSROOT)")
        ->type_name("DIR");
    cmd->add_option("--from", o.from, "replay a snapshot written by --snapshot instead of probing")
        ->type_name("FILE");
    if (snapshot) {
      cmd->add_option("--snapshot", o.snapshot,
                      "record everything read (sysfs, procfs, NVML) into FILE for --from")
          ->type_name("FILE");
    }
    cmd->add_option("--nvml", flags["nvml"], "query NVML: auto, on, off (env ACCO_NVML)")
        ->type_name("MODE");
    cmd->add_option("--nvml-library", flags["nvml-library"],
                    "NVML library to load (env ACCO_NVML_LIBRARY)")
        ->type_name("LIB");
    cmd->add_option("--fail-on", fail_on,
                    "exit 1 when a finding of this severity or worse exists: warning, critical")
        ->type_name("SEVERITY");
    cmd->add_flag("--json", json, "print JSON (schema acco.probe/1) instead of text");
    cmd->add_option("--config", config, "JSON file of settings (env ACCO_CONFIG)")
        ->type_name("FILE");
  };
  auto* probe =
      app.add_subcommand("probe", "discover the machine's links and report what is wrong");
  add_machine_flags(probe, true);
  auto* doctor =
      app.add_subcommand("doctor", "assess this machine and say what to fix first (the main job)");
  add_machine_flags(doctor, false);
  doctor->add_flag("--no-bench", o.bench.skip, "skip the quick measurement of the data paths");
  auto* bench = app.add_subcommand(
      "bench", "measure host<->device, device<->device and host bandwidth against the link peak");
  bench
      ->add_option("--backend", o.bench.backend,
                   "auto (CUDA when a GPU is usable, else host), host, cuda")
      ->type_name("NAME");
  bench->add_option("--devices", o.bench.devices, "host backend: number of emulated devices")
      ->type_name("N");
  bench
      ->add_option("--link", o.bench.link,
                   "host backend: emulated link, e.g. pcie4x16, pcie5x16, 25GB/s,2us, unlimited")
      ->type_name("SPEC");
  bench->add_option("--cases", o.bench.cases, "only cases matching these patterns (h2d_*,sweep_*)")
      ->delimiter(',')
      ->type_name("PATTERNS");
  bench->add_option("--bytes", o.bench.bytes, "buffer size of bandwidth cases (default 256MiB)")
      ->type_name("SIZE");
  bench->add_option("--reps", o.bench.reps, "timed samples per case (default 5)")->type_name("N");
  bench->add_flag("--quick", o.bench.quick, "small buffers and few repetitions (a quick look)");
  bench->add_flag("--list", o.bench.list, "list the cases and exit");
  bench->add_flag("--json", json, "print JSON (schema acco.bench/1)");
  bench->add_option("--html", o.bench.html, "write a self-contained HTML report with plots")
      ->type_name("FILE");
  bench->add_flag("--compare", o.bench.compare,
                  "compare with the last run on this machine and flag regressions");
  bench
      ->add_option("--history", o.bench.history,
                   "history database (default $XDG_STATE_HOME/acco/history.sqlite)")
      ->type_name("FILE");
  bench->add_flag("--no-history", o.bench.no_history, "do not read or write the history");
  bench->add_option("--sysroot", flags["sysroot"], "topology from DIR/sys (for link peaks)")
      ->type_name("DIR");
  bench->add_option("--config", config, "JSON file of settings (env ACCO_CONFIG)")
      ->type_name("FILE");
  auto* schedule = app.add_subcommand(
      "schedule", "run a named task graph on several devices under scheduling policies");
  ScheduleText schedule_text;
  add_schedule_flags(schedule, o.schedule, schedule_text);
  schedule->add_flag("--json", json, "print JSON (schema acco.schedule/1)");
  auto* config_cmd = app.add_subcommand("config", "print every setting, its value and who set it");
  config_cmd->add_option("--config", config, "JSON file of settings (env ACCO_CONFIG)")
      ->type_name("FILE");
  config_cmd->add_flag("--json", json, "print JSON");
  auto* rules_cmd = app.add_subcommand("rules", "list the rules checks can report");
  rules_cmd->add_flag("--json", json, "print JSON");

  std::vector<std::string> argv_storage = {"acco"};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<const char*> argv;
  for (const auto& a : argv_storage) {
    argv.push_back(a.c_str());
  }
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp&) {
    o.command = Command::kHelp;
    o.help_text = app.help();
    for (const auto* sub : app.get_subcommands()) {
      o.help_text = sub->help();
    }
    return o;
  } catch (const CLI::CallForVersion&) {
    o.command = Command::kVersion;
    return o;
  } catch (const CLI::ParseError& e) {
    return fail(Errc::kInvalidArgument, e.what());
  }

  if (probe->parsed()) {
    o.command = Command::kProbe;
  } else if (doctor->parsed()) {
    o.command = Command::kDoctor;
  } else if (bench->parsed()) {
    o.command = Command::kBench;
  } else if (schedule->parsed()) {
    o.command = Command::kSchedule;
  } else if (config_cmd->parsed()) {
    o.command = Command::kConfig;
  } else if (rules_cmd->parsed()) {
    o.command = Command::kRules;
  } else {
    o.command = Command::kHelp;
    o.help_text = app.help();
    return o;
  }
  o.format = json ? Format::kJson : Format::kText;

  if (config.empty()) {
    if (const char* env = getenv("ACCO_CONFIG"); env != nullptr) {
      config = env;
    }
  }
  if (!config.empty()) {
    ACCO_RETURN_IF_ERROR(o.settings.load_file(config), "--config");
  }
  o.settings.load_env(getenv);
  for (const auto& [key, value] : flags) {
    if (!value.empty()) {
      ACCO_RETURN_IF_ERROR(o.settings.set(key, value, core::SetBy::kFlag), "--" + key);
    }
  }
  const auto nvml = o.settings.get("nvml");
  if (nvml != "auto" && nvml != "on" && nvml != "off") {
    return fail(Errc::kInvalidArgument,
                fmt::format("--nvml: '{}' is not one of auto, on, off", nvml));
  }
  if (!fail_on.empty()) {
    topo::Severity s{};
    if (!topo::parse_severity(fail_on, s) || s == topo::Severity::kInfo) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("--fail-on: '{}' is not one of warning, critical", fail_on));
    }
    o.fail_on = s;
  }
  if (o.command == Command::kBench) {
    if (o.bench.devices < 1 || o.bench.devices > 64) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("--devices: {} is not between 1 and 64", o.bench.devices));
    }
    if (o.bench.reps < 1 || o.bench.reps > 1000) {
      return fail(Errc::kInvalidArgument,
                  fmt::format("--reps: {} is not between 1 and 1000", o.bench.reps));
    }
    if (o.bench.compare && o.bench.no_history) {
      return fail(Errc::kInvalidArgument, "--compare needs the history; drop --no-history");
    }
  }
  if (o.command == Command::kSchedule) {
    if (auto s = parse_schedule(schedule_text, *schedule, o.schedule); !s) {
      return tl::unexpected(s.error());
    }
  }
  if (!o.from.empty() && !o.snapshot.empty()) {
    return fail(Errc::kInvalidArgument,
                "--from and --snapshot cannot be combined (a replay reads no live files)");
  }
  if (!o.from.empty() && o.settings.find("sysroot")->set_by == core::SetBy::kFlag) {
    return fail(Errc::kInvalidArgument,
                "--from and --sysroot cannot be combined (the snapshot replaces the sysroot)");
  }
  return o;
}

}  // namespace acco::cli
