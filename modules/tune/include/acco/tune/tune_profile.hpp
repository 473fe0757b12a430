// What `acco tune` found on one machine: the transfer engine's Profile chosen per device and copy
// path (h2d/d2h, pageable/pinned), with every candidate's measured rate, the confirmation against
// the defaults and the alpha + bytes / beta fit of each path, and (with `acco tune --file`) the
// storage reader's block size, depth and threads. Saved as JSON ("acco.tune-profile/1") under
// the XDG state directory, keyed by the machine's fingerprint.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "acco/core/fit.hpp"
#include "acco/core/result.hpp"
#include "acco/io/reader.hpp"
#include "acco/transfer/profile.hpp"

namespace acco::tune {

inline constexpr const char* kTuneProfileSchema = "acco.tune-profile/1";

// The four copy paths tuned per device, named as acco bench's cases are ("h2d_pageable").
inline constexpr std::string_view kPaths[] = {"h2d_pageable", "h2d_pinned", "d2h_pageable",
                                              "d2h_pinned"};

struct Candidate {
  transfer::Profile profile;
  double bytes_per_second = 0;  // measured during the search
  bool operator==(const Candidate&) const = default;
};

struct PathTuning {
  std::string device;         // the device's name in bench results
  std::string path;           // one of kPaths
  transfer::Profile profile;  // what the engine uses on this path: the winner or the defaults
  bool tuned = false;         // the winner beat the defaults beyond noise; false keeps the defaults
  bool confirmed = false;     // the confirmation ran (false when the budget ran out first)
  std::vector<double> default_bytes_per_second;  // confirmation repeats, interleaved with:
  std::vector<double> winner_bytes_per_second;
  double noise = 0;                     // relative spread judged as noise (see search.hpp)
  double gain = 0;                      // median(winner) / median(defaults) - 1
  std::optional<LatencyBandwidth> fit;  // of `profile`; none when it could not be measured
  std::vector<TimedSize> fit_points;
  std::vector<Candidate> candidates;  // in the order measured
  bool operator==(const PathTuning&) const = default;
};

struct ReaderCandidate {
  io::ReaderOptions options;    // only block_bytes, depth and threads differ from the defaults
  double bytes_per_second = 0;  // measured during the search
  bool operator==(const ReaderCandidate&) const = default;
};

// The storage reader on one file (`acco tune --file`): io::Reader::read_to_device, file -> pinned
// staging -> device memory through the engine.
struct ReaderTuning {
  std::string file;         // the file read
  std::uint64_t bytes = 0;  // read per measurement
  // What the reader uses: the winner or the defaults. Only block_bytes, depth and threads are
  // tuned (and saved); the other fields are io::ReaderOptions' defaults.
  io::ReaderOptions options;
  bool tuned = false;      // the winner beat the defaults beyond noise; false keeps the defaults
  bool confirmed = false;  // the confirmation ran (false when the budget ran out first)
  std::vector<double> default_bytes_per_second;  // confirmation repeats, interleaved with:
  std::vector<double> winner_bytes_per_second;
  double noise = 0;                         // relative spread judged as noise (see search.hpp)
  double gain = 0;                          // median(winner) / median(defaults) - 1
  std::vector<ReaderCandidate> candidates;  // in the order measured
  bool operator==(const ReaderTuning&) const = default;
};

// Fusion of small allreduces for one link class, from an allreduce sweep's alpha-beta fit
// (`acco bench --collective allreduce --save-fusion` under mpirun, rank 0): the threshold is
// cluster::fusion_threshold of the fit, 10 alpha beta as a power of two.
struct FusionTuning {
  std::string link_class;  // "intra-node" (every rank on one node) or "inter-node"
  int ranks = 0;           // of the sweep
  double alpha_seconds = 0;
  double beta_bytes_per_second = 0;
  std::uint64_t threshold_bytes = 0;
  std::string measured;  // UTC, "2025-03-01T12:00:00Z"
  bool operator==(const FusionTuning&) const = default;
};

struct TuneProfile {
  std::string fingerprint;  // bench::machine_fingerprint of the machine
  std::string created;      // UTC, "2025-03-01T12:00:00Z"
  std::string backend;      // "host" or "cuda"
  std::string link;         // the emulated link on the host backend, else empty
  std::uint64_t bytes = 0;  // copy size of the search
  double budget_seconds = 0;
  bool budget_exhausted = false;  // the search stopped early; the best so far was kept
  std::vector<PathTuning> paths;
  std::optional<ReaderTuning> reader;  // none when tune ran without --file
  std::vector<FusionTuning> fusion;    // one per link class measured; acco tune keeps them
  bool operator==(const TuneProfile&) const = default;

  // The entry for `device` and `path`, or null.
  [[nodiscard]] const PathTuning* find(std::string_view device, std::string_view path) const;
};

// Replaces the entry of the same link class, or adds it.
void set_fusion(TuneProfile& profile, FusionTuning fusion);
// The entry of `link_class`, or null.
[[nodiscard]] const FusionTuning* find_fusion(const TuneProfile& profile,
                                              std::string_view link_class);

// Profiles keyed "<device>/<path>", as bench::CaseContext::path_profiles takes them.
[[nodiscard]] std::map<std::string, transfer::Profile> engine_profiles(const TuneProfile& profile);

// The reader's options the profile chose (its defaults where the winner was not kept), or none
// when the profile has no reader section.
[[nodiscard]] std::optional<io::ReaderOptions> reader_options(const TuneProfile& profile);

[[nodiscard]] nlohmann::json to_json(const TuneProfile& profile);
// kInvalidArgument naming the field ("tune profile: paths[1].profile: chunk_bytes: ...",
// "tune profile: reader.options: depth: ...") for a missing or wrong field, an unknown path or a
// wrong schema.
[[nodiscard]] Result<TuneProfile> tune_profile_from_json(const nlohmann::json& j);

// kNotFound when the file is absent; kInvalidArgument (prefixed with the path) when malformed.
[[nodiscard]] Result<TuneProfile> load_tune_profile(const std::string& path);
// Writes a temporary file and renames it over `path`, so an interrupted run leaves the old file.
// kNotFound or kUnavailable when it cannot be written.
[[nodiscard]] Status save_tune_profile(const std::string& path, const TuneProfile& profile);

// $XDG_STATE_HOME/acco/tune (absolute XDG_STATE_HOME only, as the XDG rules say), else
// $HOME/.local/state/acco/tune. Creates nothing. kUnavailable when neither is set.
[[nodiscard]] Result<std::string> tune_directory(std::string_view xdg_state_home,
                                                 std::string_view home);
[[nodiscard]] Result<std::string> tune_directory();  // from the environment
// `chosen` when it is not empty (the tune-dir setting), else tune_directory().
[[nodiscard]] Result<std::string> tune_directory_or(std::string_view chosen);
// "<dir>/<fingerprint>.json", with '/' in the fingerprint replaced by '_'.
[[nodiscard]] std::string profile_path(const std::string& dir, std::string_view fingerprint);

}  // namespace acco::tune
