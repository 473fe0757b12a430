// The tune profile's flags, shared by the commands that build a transfer engine, a storage reader
// or a task runtime (bench, schedule): the profile `acco tune` saved for this machine is loaded
// by default, `--profile FILE` names another and `--no-profile` keeps the defaults.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "acco/core/result.hpp"
#include "acco/core/settings.hpp"
#include "acco/topo/machine.hpp"
#include "acco/tune/saved_profile.hpp"

namespace acco::cli {

void add_profile_flags(CLI::App& sub, tune::ProfileChoice& flags);
// kUsage for both flags at once.
[[nodiscard]] Status check_profile_flags(const tune::ProfileChoice& flags);

// tune::load_profile in the tune-dir setting's directory, "--profile" in front of its error;
// `note` gets a line naming the file used, or why the saved one was skipped.
[[nodiscard]] Result<tune::LoadedProfile> profile_for(const tune::ProfileChoice& flags,
                                                      const core::Settings& settings,
                                                      const topo::Machine* machine,
                                                      std::string& note);

}  // namespace acco::cli
