// The command line's shared part: every registered command's flags on one CLI11 app, then the
// settings precedence (default < --config file < ACCO_* environment < flag) and the output
// format, then the command's own checks. Each command's flags live in its own file.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "acco/cli/app.hpp"
#include "acco/topo/nvml.hpp"

#include "command_spec.hpp"

namespace acco::cli {
namespace {

core::Settings default_settings() {
  core::Settings s;
  s.define("sysroot", "/", "directory whose sys/ and proc/ replace the live /sys and /proc");
  s.define("nvml", "auto", "query NVML: auto (for the live root or a named library), on, off");
  s.define("nvml-library", topo::kNvmlLibrary, "NVML library to dlopen (name or path)");
  return s;
}

// Settings from --config (or ACCO_CONFIG), the environment and flags, in that order.
Status resolve_settings(core::Settings& settings, const SharedFlags& shared, const Getenv& getenv) {
  std::string config = shared.config;
  if (config.empty()) {
    if (const char* env = getenv("ACCO_CONFIG"); env != nullptr) {
      config = env;
    }
  }
  if (!config.empty()) {
    // A config file that cannot be read keeps its own code (66 missing, 65 malformed).
    ACCO_RETURN_IF_ERROR(settings.load_file(config), "--config");
  }
  settings.load_env(getenv);
  for (const auto& [key, value] : shared.setting) {
    if (!value.empty()) {
      if (auto set = settings.set(key, value, core::SetBy::kFlag); !set) {
        return tl::unexpected(as_usage(std::move(set.error()).with_context("--" + key)));
      }
    }
  }
  const auto nvml = settings.get("nvml");
  if (nvml != "auto" && nvml != "on" && nvml != "off") {
    return usage(fmt::format("--nvml: '{}' is not one of auto, on, off", nvml));
  }
  return {};
}

}  // namespace

Result<Options> parse_args(const std::vector<std::string>& args, const Getenv& getenv) {
  Options o;
  o.invocation.settings = default_settings();

  CLI::App app{"acco: find, measure and remove the bottlenecks between hosts and accelerators",
               "acco"};
  app.set_version_flag("--version", std::string(ACCO_VERSION));
  app.require_subcommand(0, 1);
  SharedFlags shared;
  std::vector<std::pair<CLI::App*, FinishParse>> declared;
  for (const CommandSpec& spec : commands()) {
    CLI::App* sub = app.add_subcommand(std::string(spec.name), std::string(spec.summary));
    declared.emplace_back(sub, spec.declare(*sub, shared));
  }

  std::vector<std::string> argv_storage = {"acco"};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<const char*> argv;
  for (const auto& a : argv_storage) {
    argv.push_back(a.c_str());
  }
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp&) {
    o.command = "help";
    o.help_text = app.help();
    for (const auto* sub : app.get_subcommands()) {
      o.help_text = sub->help();
    }
    return o;
  } catch (const CLI::CallForVersion&) {
    o.command = "version";
    return o;
  } catch (const CLI::ParseError& e) {
    return usage(e.what());
  }

  const FinishParse* finish = nullptr;
  for (const auto& [sub, finish_parse] : declared) {
    if (sub->parsed()) {
      o.command = sub->get_name();
      finish = &finish_parse;
    }
  }
  if (finish == nullptr) {
    o.command = "help";
    o.help_text = app.help();
    return o;
  }
  o.invocation.format = shared.json ? Format::kJson : Format::kText;
  ACCO_RETURN_IF_ERROR(resolve_settings(o.invocation.settings, shared, getenv));
  ACCO_ASSIGN_OR_RETURN(o.runner, (*finish)(o.invocation.settings));
  return o;
}

}  // namespace acco::cli
