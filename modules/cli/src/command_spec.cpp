#include "command_spec.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "acco/core/file.hpp"
#include "acco/core/option_check.hpp"
#include "acco/core/units.hpp"

namespace acco::cli {
namespace {

// The name of the validator that carries an option's offered values.
constexpr const char* kOfferedValues = "offered-values";

}  // namespace

DeclaredCommands declare_commands(CLI::App& app, SharedFlags& shared) {
  app.set_version_flag("--version", std::string(ACCO_VERSION));
  app.require_subcommand(0, 1);
  DeclaredCommands declared;
  for (const CommandSpec& spec : commands()) {
    CLI::App* sub = app.add_subcommand(std::string(spec.name), std::string(spec.summary));
    declared.emplace_back(sub, spec.declare(*sub, shared));
  }
  return declared;
}

CLI::Option* offer_values(CLI::Option* option, const std::vector<std::string>& values) {
  // An inactive validator is never run and adds nothing to --help, so it carries the values on
  // the option itself (its description) without changing how the option parses or reads.
  CLI::Validator carrier([](const std::string&) { return std::string(); },
                         fmt::format("{}", fmt::join(values, " ")), kOfferedValues);
  carrier.active(false);
  return option->check(std::move(carrier));
}

std::vector<std::string> offered_values(CLI::Option& option) {
  const CLI::Validator* carrier = nullptr;
  try {
    carrier = option.get_validator(kOfferedValues);
  } catch (const CLI::OptionNotFound&) {
    return {};  // CLI11 has no other way to ask whether an option has a named validator
  }
  std::vector<std::string> values;
  std::string text = carrier->active(true).get_description();
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find(' ', start), text.size());
    values.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return values;
}

const std::vector<std::string>& nvml_modes() {
  static const std::vector<std::string> modes = {"auto", "on", "off"};
  return modes;
}

void add_json_flag(CLI::App& sub, SharedFlags& shared, const std::string& help) {
  sub.add_flag("--json", shared.json, help);
}

void add_config_flag(CLI::App& sub, SharedFlags& shared) {
  sub.add_option("--config", shared.config, "JSON file of settings (env ACCO_CONFIG)")
      ->type_name("FILE");
}

CLI::Option* add_setting_flag(CLI::App& sub, SharedFlags& shared, const std::string& key,
                              const std::string& help, const std::string& type_name) {
  CLI::Option* option = sub.add_option("--" + key, shared.setting[key], help)->type_name(type_name);
  return key == "nvml" ? offer_values(option, nvml_modes()) : option;
}

tl::unexpected<Error> bad_setting(const core::Settings& settings, std::string_view key,
                                  std::string_view expected) {
  const core::Setting* setting = settings.find(key);
  const std::string value = setting != nullptr ? setting->value : std::string();
  const core::SetBy by = setting != nullptr ? setting->set_by : core::SetBy::kFlag;
  const std::string where = by == core::SetBy::kFile
                                ? fmt::format("--config {}: {}", settings.file(), key)
                            : by == core::SetBy::kEnv ? core::env_name(key)
                                                      : "--" + std::string(key);
  auto error = core::bad_option(where, value, expected);  // kInvalidArgument: a malformed file
  return by == core::SetBy::kFile ? error : tl::unexpected(as_usage(std::move(error).value()));
}

tl::unexpected<Error> bad_value(std::string_view flag, std::string_view value,
                                std::string_view expected) {
  return tl::unexpected(as_usage(core::bad_option(flag, value, expected).value()));
}

Result<std::chrono::duration<double>> duration_flag(std::string_view text,
                                                    std::string_view example) {
  const auto seconds = units::parse_duration(text);
  if (!seconds || *seconds <= 0) {
    return bad_value("--duration", text, fmt::format("a positive duration (e.g. {})", example));
  }
  return std::chrono::duration<double>(*seconds);
}

tl::unexpected<Error> usage(std::string message) {
  return fail(Errc::kUsage, std::move(message));
}

Error as_usage(Error error) {
  if (error.code == Errc::kInvalidArgument) {
    error.code = Errc::kUsage;
  }
  return error;
}

Status write_output(std::string_view flag, const std::string& path, const std::string& text) {
  ACCO_RETURN_IF_ERROR(core::write_output_file(path, text), flag);
  return {};
}

}  // namespace acco::cli
