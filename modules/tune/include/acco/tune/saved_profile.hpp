// The profile acco tune saved, as the programs that build a transfer engine, a storage reader or
// a task runtime load it: by default the one saved for this machine (keyed by its fingerprint
// under tune_directory()), or a named file, or none (the defaults).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "acco/core/result.hpp"
#include "acco/io/reader.hpp"
#include "acco/topo/machine.hpp"
#include "acco/transfer/profile.hpp"

namespace acco::tune {

struct ProfileChoice {
  std::string file;   // a profile file; empty: the one saved for the machine
  bool none = false;  // no profile: the engine's and the reader's defaults
  // Where acco tune saves profiles (the tune-dir setting); empty: tune_directory().
  std::string directory;
};

// What a profile gives the programs that load it.
struct LoadedProfile {
  // Keyed as bench::CaseContext::path_profiles takes them ("<device>/<path>").
  std::map<std::string, transfer::Profile> engines;
  // The storage reader's options (bench::CaseContext::reader_options), when tuned with a file.
  std::optional<io::ReaderOptions> reader;
  std::string path;  // the file loaded; empty: none (the defaults)
  // The profile saved for the machine exists but could not be read (malformed, another schema):
  // skipped, and why.
  std::optional<Error> skipped;
};

// The profile `choice` names: none with choice.none; choice.file (load_tune_profile's errors:
// kNotFound, kInvalidArgument); else the one saved for `machine` (null: none is looked for), none
// when there is none or tune_directory() is unknown, `skipped` when it cannot be read. Reads the
// environment (tune_directory()).
[[nodiscard]] Result<LoadedProfile> load_profile(const ProfileChoice& choice,
                                                 const topo::Machine* machine);
// load_profile for a run that needs the machine only to find its saved profile: `probe` (the
// machine, or nullopt when it cannot be probed) is called only when choice names no file and
// choice.directory holds some profile; a probe costs more than a small workload's run.
[[nodiscard]] Result<LoadedProfile> load_profile_probing(
    const ProfileChoice& choice, const std::function<std::optional<topo::Machine>()>& probe);
// kInvalidArgument "--profile and --no-profile exclude each other" when `choice` asks for both.
[[nodiscard]] Status check_profile_choice(const ProfileChoice& choice);
// The line a person is told: "acco: engine profile from PATH", "acco: tune profile not used:
// <why>", or nothing when the defaults were asked for or no profile was saved.
[[nodiscard]] std::string profile_note(const LoadedProfile& loaded);
// The engine settings of the profile saved for `machine` in `directory` (empty:
// tune_directory()); empty when there is none or it cannot be read.
[[nodiscard]] std::map<std::string, transfer::Profile> saved_engine_profiles(
    const topo::Machine& machine, std::string_view directory = {});
// Whether `directory` (empty: tune_directory()) holds any profile at all. Finding the fingerprint
// takes a probe of the topology, which costs more than a short run: a caller skips it when no
// profile could match.
[[nodiscard]] bool any_saved_profile(std::string_view directory = {});

// The saved profile for `machine`: its path under tune_directory(), whether it exists, and
// whether profiles for other fingerprints exist there (the machine changed since the last tune).
// tune_directory()'s error when it is unknown.
struct SavedProfileState {
  std::string path;
  bool exists = false;
  bool others = false;
};
[[nodiscard]] Result<SavedProfileState> saved_profile_state(const topo::Machine& machine,
                                                            std::string_view directory = {});

}  // namespace acco::tune
