#include "command_spec.hpp"

#include <fmt/format.h>

namespace acco::cli {

void add_json_flag(CLI::App& sub, SharedFlags& shared, const std::string& help) {
  sub.add_flag("--json", shared.json, help);
}

void add_config_flag(CLI::App& sub, SharedFlags& shared) {
  sub.add_option("--config", shared.config, "JSON file of settings (env ACCO_CONFIG)")
      ->type_name("FILE");
}

void add_setting_flag(CLI::App& sub, SharedFlags& shared, const std::string& key,
                      const std::string& help, const std::string& type_name) {
  sub.add_option("--" + key, shared.setting[key], help)->type_name(type_name);
}

tl::unexpected<Error> bad_value(std::string_view flag, std::string_view value,
                                std::string_view expected) {
  return usage(fmt::format("{}: '{}' is not {}", flag, value, expected));
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

Error as_cannot_write(Error error) {
  error.code = Errc::kCannotWrite;
  return error;
}

}  // namespace acco::cli
