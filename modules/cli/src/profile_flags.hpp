// The tune profile's flags, shared by the commands that build a transfer engine or a storage
// reader (bench, doctor's quick bench): the profile `acco tune` saved for this machine is loaded
// by default, `--profile FILE` names another and `--no-profile` keeps the defaults.
#pragma once

#include <map>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "acco/core/result.hpp"
#include "acco/topo/machine.hpp"
#include "acco/tune/tune_profile.hpp"

namespace acco::cli {

struct ProfileFlags {
  std::string profile;  // --profile FILE
  bool no_profile = false;
};

void add_profile_flags(CLI::App& sub, ProfileFlags& flags);
// kUsage for both flags at once.
[[nodiscard]] Status check_profile_flags(const ProfileFlags& flags);

// What a tune profile gives the commands that load it.
struct LoadedProfile {
  // Keyed as bench::CaseContext::path_profiles takes them.
  std::map<std::string, transfer::Profile> engines;
  // The storage reader's options (bench::CaseContext::reader_options), when tuned with --file.
  std::optional<io::ReaderOptions> reader;
};

// The profile to use: empty with --no-profile, or when no profile is saved for `machine` (null:
// none is looked for). A named file that cannot be read is an error (kNotFound,
// kInvalidArgument); the default one that is malformed is reported in `note` and skipped. `note`
// says which file was used.
[[nodiscard]] Result<LoadedProfile> profile_for(const ProfileFlags& flags,
                                                const topo::Machine* machine, std::string& note);
// Its engine profiles only.
[[nodiscard]] Result<std::map<std::string, transfer::Profile>> engine_profiles_for(
    const ProfileFlags& flags, const topo::Machine* machine, std::string& note);

// The saved profile for this machine: its path under tune_directory(), whether it exists, and
// whether profiles for other fingerprints exist there (the machine changed since the last tune).
struct SavedProfileState {
  std::string path;
  bool exists = false;
  bool others = false;
};
[[nodiscard]] Result<SavedProfileState> saved_profile_state(const topo::Machine& machine);

}  // namespace acco::cli
