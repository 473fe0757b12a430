// The command line's shared part: every registered command's flags on one CLI11 app, then the
// settings precedence (default < --config file < ACCO_* environment < flag) and the output
// format, then the command's own checks. Each command's flags live in its own file.
#include <algorithm>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>

#include "acco/cli/app.hpp"
#include "acco/power/governor_loop.hpp"
#include "acco/topo/nvml.hpp"

#include "command_spec.hpp"

namespace acco::cli {
namespace {

core::Settings default_settings() {
  core::Settings s;
  s.define("sysroot", "/", "directory whose sys/ and proc/ replace the live /sys and /proc");
  s.define("nvml", "auto", "query NVML: auto (for the live root or a named library), on, off");
  s.define("nvml-library", topo::kNvmlLibrary, "NVML library to dlopen (name or path)");
  s.define("pci-ids", "",
           "PCI ID database to name devices from (a file); empty: the sysroot's "
           "/usr/share/misc/pci.ids, else /usr/share/hwdata/pci.ids");
  s.define("listen", "127.0.0.1:9477", "address acco serve listens on (HOST:PORT)");
  s.define("store", "",
           "SQLite file where acco serve keeps every device field and the host's CPU and memory "
           "(raw points 1h, minute averages 7d); empty: none");
  s.define("history", "",
           "bench history database (acco bench, bench --collective, serve --bench-every); empty: "
           "$XDG_STATE_HOME/acco/history.sqlite, else ~/.local/state/acco/history.sqlite");
  s.define("tune-dir", "",
           "directory of acco tune's profiles, one per machine fingerprint (tune, bench, "
           "schedule, doctor, serve --bench-every); empty: $XDG_STATE_HOME/acco/tune, else "
           "~/.local/state/acco/tune");
  s.define("jobs-dir", "",
           "the job queue's directory: its table, token, daemon.json and logs (serve --jobs, "
           "submit, jobs, cancel, logs); empty: $XDG_STATE_HOME/acco/jobs, else "
           "~/.local/state/acco/jobs");
  s.define("state-file", power::kDefaultStateFile,
           "the governor's state file: each device's original limits while acco has changed them "
           "(power run, serve --governor, power status)");
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
  if (std::find(nvml_modes().begin(), nvml_modes().end(), nvml) == nvml_modes().end()) {
    return bad_setting(settings, "nvml", fmt::format("one of {}", fmt::join(nvml_modes(), ", ")));
  }
  return {};
}

// A sysroot that is not there is a missing input (66) for every command that reads the machine,
// not a warning (`config` shows the settings, whatever they name).
Status check_sysroot(const core::Settings& settings, const std::string& command) {
  const auto root = settings.get("sysroot");
  std::error_code ec;
  if (root == "/" || command == "config" || command == "rules" || command == "completion" ||
      command == "man" || std::filesystem::is_directory(root, ec)) {
    return {};
  }
  return fail(
      Errc::kNotFound,
      fmt::format("--sysroot '{}': {} (expected a copied /sys and /proc tree)", root,
                  std::filesystem::exists(root, ec) ? "not a directory" : "no such directory"));
}

// CLI11 says only "A subcommand is required" (`acco power bogus`): the command, the subcommands
// it has and the word given instead; empty when the error is another one.
std::string missing_subcommand(const CLI::App& app, const CLI::ParseError& e,
                               const std::vector<std::string>& args) {
  if (dynamic_cast<const CLI::RequiredError*>(&e) == nullptr ||
      !std::string_view(e.what()).starts_with("A subcommand")) {
    return {};
  }
  for (const CLI::App* sub : app.get_subcommands()) {
    std::vector<std::string> names;
    for (const CLI::App* own : sub->get_subcommands([](const CLI::App*) { return true; })) {
      names.push_back(own->get_name());
    }
    if (names.empty() || !sub->get_subcommands().empty()) {
      continue;  // no subcommands of its own, or one was given
    }
    // The word right after the command, where its subcommand goes.
    auto word = std::find(args.begin(), args.end(), sub->get_name());
    word = word == args.end() ? word : std::next(word);
    const bool given = word != args.end() && !word->starts_with("-");
    return fmt::format("{}: {}expected a subcommand: {}", sub->get_name(),
                       given ? fmt::format("'{}' is not one; ", *word) : std::string(),
                       fmt::join(names, ", "));
  }
  return {};
}

}  // namespace

Result<Options> parse_args(const std::vector<std::string>& args, const Getenv& getenv) {
  Options o;
  o.invocation.settings = default_settings();

  CLI::App app{fmt::format("acco: {}", kAccoDescription), "acco"};
  SharedFlags shared;
  const DeclaredCommands declared = declare_commands(app, shared);

  // An empty value would read as a flag not given (`--collective ""` ran the transfer suite).
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.empty() || (a.starts_with("--") && a.ends_with("="))) {
      const std::string flag = !a.empty()                              ? a.substr(0, a.size() - 1)
                               : i > 0 && args[i - 1].starts_with("-") ? args[i - 1]
                                                                       : std::string("an argument");
      return usage(
          fmt::format("{}: empty value (expected a value; leave the flag out for its "
                      "default)",
                      flag));
    }
  }
  std::vector<std::string> argv_storage = {"acco"};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<const char*> argv;
  argv.reserve(argv_storage.size());
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
    const std::string subcommand = missing_subcommand(app, e, args);
    return usage(subcommand.empty() ? e.what() : subcommand);
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
  ACCO_RETURN_IF_ERROR(check_sysroot(o.invocation.settings, o.command));
  ACCO_ASSIGN_OR_RETURN(o.runner, (*finish)(o.invocation.settings));
  return o;
}

}  // namespace acco::cli
