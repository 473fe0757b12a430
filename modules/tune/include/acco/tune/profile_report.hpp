// What `acco tune` shows and where its profile lives: a profile beside the engine's and the
// reader's defaults (text as report blocks, `--show`'s JSON), the machine's default profile path,
// and the profile already there before a run overwrites it.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "acco/core/result.hpp"
#include "acco/report/document.hpp"
#include "acco/topo/machine.hpp"
#include "acco/tune/tune_profile.hpp"

namespace acco::tune {

// "Tune profile <path>", the machine line, one row per device and path with each setting as
// "chosen (default)" and the confirmation's medians, the reader's row, the fusion thresholds and
// a legend.
[[nodiscard]] report::Document profile_report(const TuneProfile& profile, const std::string& path);

// to_json(profile) with "path", the engine's "defaults" on the profile's backend and, with a
// reader entry, the reader's "reader_defaults".
[[nodiscard]] nlohmann::json profile_with_defaults_json(const TuneProfile& profile,
                                                        const std::string& path);

// The profile file for `machine` in `directory` (empty: tune_directory()), which is created.
// kUnavailable without a machine (no fingerprint: the caller names a file); kCannotWrite when the
// directory cannot be made.
[[nodiscard]] Result<std::string> machine_profile_path(const topo::Machine* machine,
                                                       std::string_view directory = {});

// The profile file `acco tune` writes and `--show` reads: `output` when it names one, else
// machine_profile_path's (with its errors).
[[nodiscard]] Result<std::string> chosen_profile_path(const std::string& output,
                                                      const topo::Machine* machine,
                                                      std::string_view directory = {});
// The saved profile at `path` (load_tune_profile); when `path` is the machine's own (`named`
// false) and there is none yet, kNotFound "no tune profile for this machine (PATH); run acco
// tune".
[[nodiscard]] Result<TuneProfile> load_saved_tune_profile(const std::string& path, bool named);

// The profile at `path` that a new run replaces, to keep what acco tune does not measure (the
// collective bench's fusion entries): nullopt when there is no file. kCannotWrite when something
// other than a file is there (a directory, a pipe); a file that is not a profile keeps
// load_tune_profile's error, with "; left as it is (...)": it is refused before the run rather
// than replaced after it.
[[nodiscard]] Result<std::optional<TuneProfile>> profile_to_replace(const std::string& path);

// A saved profile with the file it came from.
struct SavedTuneProfile {
  std::string path;
  TuneProfile profile;
};
// `acco tune --show`: the profile `output` names, else the machine's (chosen_profile_path, then
// load_saved_tune_profile, with their errors).
[[nodiscard]] Result<SavedTuneProfile> saved_profile_to_show(const std::string& output,
                                                             const topo::Machine* machine,
                                                             std::string_view directory = {});
// profile_with_defaults_json and profile_report of it.
[[nodiscard]] nlohmann::json to_json(const SavedTuneProfile& saved);
[[nodiscard]] report::Document saved_profile_report(const SavedTuneProfile& saved);

// Where a run saves its profile (chosen_profile_path) and what is there before it
// (profile_to_replace), with their errors: checked before the run, not after it.
struct ProfileTarget {
  std::string path;
  std::optional<TuneProfile> previous;
};
[[nodiscard]] Result<ProfileTarget> profile_target(const std::string& output,
                                                   const topo::Machine* machine,
                                                   std::string_view directory = {});

}  // namespace acco::tune
