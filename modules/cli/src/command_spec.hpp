// How a subcommand plugs into the command line: its name and help line, the flags it declares on
// its CLI11 subcommand, and the step that checks those flags once, after parsing, and builds the
// Command with typed options. The shared flags (--json, --config, settings) are declared through
// the helpers here so they read the same in every command's --help.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "acco/cli/app.hpp"
#include "acco/core/result.hpp"
#include "acco/core/settings.hpp"

namespace acco::cli {

// Flags every command may declare; parse_args applies them (settings precedence, format).
struct SharedFlags {
  bool json = false;
  std::string config;                          // --config FILE
  std::map<std::string, std::string> setting;  // --sysroot, --nvml, --nvml-library by key
};

// Runs after CLI11 parsed the line and the settings were resolved: checks the command's flags
// (kUsage naming the flag) and returns the command with typed options.
using FinishParse = std::function<Result<std::unique_ptr<Command>>(const core::Settings& settings)>;

struct CommandSpec {
  std::string_view name;
  std::string_view summary;  // one line in `acco --help`
  std::function<FinishParse(CLI::App& sub, SharedFlags& shared)> declare;
};

// The usual shape of a command with flags of its own: `declare_flags(sub, shared, flags)` declares
// them on a `Flags` that lives as long as the parse, and `build(flags, settings)` checks them once
// parsing is done and returns the command (Result<std::unique_ptr<Command>>).
template <typename Flags, typename Declare, typename Build>
[[nodiscard]] CommandSpec command_with_flags(std::string_view name, std::string_view summary,
                                             Declare declare_flags, Build build) {
  return {name, summary, [declare_flags, build](CLI::App& sub, SharedFlags& shared) -> FinishParse {
            auto flags = std::make_shared<Flags>();
            declare_flags(sub, shared, *flags);
            return [flags, build](const core::Settings& settings) {
              return Result<std::unique_ptr<Command>>(build(*flags, settings));
            };
          }};
}

// `Cmd` built from typed options, or the error that checking the flags found.
template <typename Cmd, typename Options>
[[nodiscard]] Result<std::unique_ptr<Command>> command_from(Result<Options> options) {
  if (!options) {
    return tl::unexpected(std::move(options).error());
  }
  return std::make_unique<Cmd>(std::move(*options));
}

// Every subcommand, in `acco --help` order (registry.cpp).
[[nodiscard]] const std::vector<CommandSpec>& commands();

void add_json_flag(CLI::App& sub, SharedFlags& shared, const std::string& help);
void add_config_flag(CLI::App& sub, SharedFlags& shared);
// A flag that sets the setting `key` (its env twin is named in `help`).
void add_setting_flag(CLI::App& sub, SharedFlags& shared, const std::string& key,
                      const std::string& help, const std::string& type_name);

// A usage error: "<flag>: '<value>' is not <expected>".
[[nodiscard]] tl::unexpected<Error> bad_value(std::string_view flag, std::string_view value,
                                              std::string_view expected);
[[nodiscard]] tl::unexpected<Error> usage(std::string message);
// A library called with values from the command line found one invalid (kInvalidArgument): the
// user fixes the flag, so it is a usage error. Other codes stay as they are.
[[nodiscard]] Error as_usage(Error error);
// An output (report, trace, models, snapshot) could not be written.
[[nodiscard]] Error as_cannot_write(Error error);

}  // namespace acco::cli
