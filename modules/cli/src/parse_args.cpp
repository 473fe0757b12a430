#include <map>

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "acco/cli/app.hpp"
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
