#include "governor_flags.hpp"

#include <string_view>
#include <utility>
#include <vector>

#include "command_spec.hpp"

namespace acco::cli {

void add_governor_flags(CLI::App& sub, SharedFlags& shared, GovernorFlags& flags,
                        CLI::Option* governor) {
  const std::vector<CLI::Option*> declared = {
      // cap:W takes a number: only the two named modes are offered.
      offer_values(sub.add_option("--mode", flags.mode,
                                  "thermal (default: thermal rules, load-following caps), energy "
                                  "(the cap with the least energy per unit of work), cap:W (a "
                                  "fixed cap)")
                       ->type_name("MODE"),
                   {"thermal", "energy"}),
      sub.add_flag("--allow-control", flags.allow_control,
                   "apply the actions (power limits, clocks; needs root for GPUs and RAPL); "
                   "without it the governor only logs them"),
      add_setting_flag(sub, shared, "state-file",
                       std::string("where original limits are kept while acco has changed them "
                                   "(default ") +
                           power::kDefaultStateFile + "; env ACCO_STATE_FILE)",
                       "FILE")};
  if (governor != nullptr) {
    for (CLI::Option* option : declared) {
      option->needs(governor);
    }
  }
}

Result<power::GovernorSettings> governor_settings(const GovernorFlags& flags,
                                                  const core::Settings& settings) {
  power::GovernorSettings s;
  if (Status mode = power::parse_governor_mode(flags.mode, s.options); !mode) {
    return usage("--mode: " + mode.error().message);
  }
  s.state_file = settings.get("state-file");
  if (s.state_file.empty()) {  // a config file's or the environment's empty value
    return bad_setting(settings, "state-file", "a file path");
  }
  s.allow_control = flags.allow_control;
  return s;
}

Error governor_error(Error error) {
  constexpr std::string_view kAllowControl = "allow_control: ";
  constexpr std::string_view kMode = "mode: ";
  if (error.message.starts_with(kAllowControl)) {
    error.message = "--allow-control: " + error.message.substr(kAllowControl.size());
  } else if (error.message.starts_with(kMode)) {  // a cap no device takes: fix the flag
    error.message = "--mode: " + error.message.substr(kMode.size());
    error.code = Errc::kUsage;
  }
  return error;
}

}  // namespace acco::cli
