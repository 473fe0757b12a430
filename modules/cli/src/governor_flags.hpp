// The governor's flags, shared by the commands that run it (power run, serve --governor):
// --mode, --allow-control and --state-file, checked once into power::GovernorSettings.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "acco/core/result.hpp"
#include "acco/core/settings.hpp"
#include "acco/power/governor_loop.hpp"

#include "command_spec.hpp"

namespace acco::cli {

struct GovernorFlags {
  std::string mode = "thermal";
  bool allow_control = false;
};

// Declares --mode, --allow-control and --state-file (the `state-file` setting); where the
// governor is itself a flag (`serve --governor`), each of them needs it.
void add_governor_flags(CLI::App& sub, SharedFlags& shared, GovernorFlags& flags,
                        CLI::Option* governor = nullptr);

// kUsage naming --mode or --state-file (from `settings`). The NVML library and sysroot stay the
// defaults: the command sets them from its sampling flags.
[[nodiscard]] Result<power::GovernorSettings> governor_settings(const GovernorFlags& flags,
                                                                const core::Settings& settings);

// The governor's error naming its setting ("allow_control: ...", "mode: ...") as the flag that
// set it ("--allow-control: ...", "--mode: ..." as a usage error: a cap no device takes); other
// errors as they are.
[[nodiscard]] Error governor_error(Error error);

}  // namespace acco::cli
