#include "acco/tune/tune_profile.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "acco/core/file.hpp"
#include "acco/core/json.hpp"
#include "acco/core/json_reader.hpp"

namespace acco::tune {
namespace {

namespace stdfs = std::filesystem;

nlohmann::json rates_json(const std::vector<double>& rates) {
  nlohmann::json a = nlohmann::json::array();
  for (const double r : rates) {
    a.push_back(r);
  }
  return a;
}

nlohmann::json path_json(const PathTuning& p) {
  nlohmann::json candidates = nlohmann::json::array();
  for (const auto& c : p.candidates) {
    candidates.push_back(
        {{"profile", transfer::to_json(c.profile)}, {"bytes_per_second", c.bytes_per_second}});
  }
  nlohmann::json points = nlohmann::json::array();
  for (const auto& t : p.fit_points) {
    points.push_back({{"bytes", t.bytes}, {"seconds", t.seconds}});
  }
  nlohmann::json fit = nullptr;
  if (p.fit) {
    fit = {{"alpha_seconds", p.fit->alpha_seconds},
           {"beta_bytes_per_second", p.fit->beta_bytes_per_second}};
  }
  return {{"device", p.device},
          {"path", p.path},
          {"profile", transfer::to_json(p.profile)},
          {"tuned", p.tuned},
          {"confirmed", p.confirmed},
          {"default_bytes_per_second", rates_json(p.default_bytes_per_second)},
          {"winner_bytes_per_second", rates_json(p.winner_bytes_per_second)},
          {"noise", p.noise},
          {"gain", p.gain},
          {"fit", fit},
          {"fit_points", points},
          {"candidates", candidates}};
}

// Only the tuned settings: the others are the reader's defaults, which a later acco may change.
nlohmann::json reader_options_json(const io::ReaderOptions& o) {
  return {{"block_bytes", o.block_bytes}, {"depth", o.depth}, {"threads", o.threads}};
}

nlohmann::json reader_json(const ReaderTuning& r) {
  nlohmann::json candidates = nlohmann::json::array();
  for (const auto& c : r.candidates) {
    candidates.push_back(
        {{"options", reader_options_json(c.options)}, {"bytes_per_second", c.bytes_per_second}});
  }
  return {{"file", r.file},
          {"bytes", r.bytes},
          {"options", reader_options_json(r.options)},
          {"tuned", r.tuned},
          {"confirmed", r.confirmed},
          {"default_bytes_per_second", rates_json(r.default_bytes_per_second)},
          {"winner_bytes_per_second", rates_json(r.winner_bytes_per_second)},
          {"noise", r.noise},
          {"gain", r.gain},
          {"candidates", candidates}};
}

std::vector<double> read_rates(core::JsonReader& in, std::string_view key) {
  return in.list<double>(
      key, [](const nlohmann::json& item, const std::string& path) -> Result<double> {
        if (!item.is_number() || item.get<double>() < 0) {
          return fail(Errc::kInvalidArgument, path + ": expected a non-negative number");
        }
        return item.get<double>();
      });
}

Result<transfer::Profile> read_engine_profile(core::JsonReader& in, std::string_view key) {
  const auto* j = in.object(key);
  if (j == nullptr) {
    return in.finish(transfer::Profile{});
  }
  auto p = transfer::profile_from_json(*j);
  if (!p) {
    return fail(Errc::kInvalidArgument, in.path(key) + ": " + p.error().message);
  }
  return p;
}

Result<io::ReaderOptions> read_reader_options(core::JsonReader& in, std::string_view key) {
  const auto* j = in.object(key);
  if (j == nullptr) {
    return in.finish(io::ReaderOptions{});
  }
  core::JsonReader r(*j, in.path(key));
  io::ReaderOptions o;
  o.block_bytes = static_cast<std::size_t>(r.count("block_bytes"));
  o.depth = static_cast<int>(r.integer("depth", {1, 256}, "expected an integer from 1 to 256"));
  o.threads = static_cast<int>(r.integer("threads", {1, 64}, "expected an integer from 1 to 64"));
  ACCO_RETURN_IF_ERROR(r.status());
  if (auto s = io::validate(o); !s) {
    return fail(Errc::kInvalidArgument, in.path(key) + ": " + s.error().message);
  }
  return o;
}

Result<ReaderTuning> read_reader(const nlohmann::json& item, const std::string& where) {
  core::JsonReader in(item, where);
  ReaderTuning r;
  r.file = in.non_empty_string("file");
  r.bytes = in.count("bytes");
  if (auto options = read_reader_options(in, "options"); options) {
    r.options = *options;
  } else {
    in.add(options.error());
  }
  r.tuned = in.boolean("tuned");
  r.confirmed = in.boolean("confirmed");
  r.default_bytes_per_second = read_rates(in, "default_bytes_per_second");
  r.winner_bytes_per_second = read_rates(in, "winner_bytes_per_second");
  r.noise = in.non_negative("noise");
  r.gain = in.number("gain", {}, "expected a number");
  r.candidates = in.list<ReaderCandidate>(
      "candidates",
      [](const nlohmann::json& c, const std::string& path) -> Result<ReaderCandidate> {
        core::JsonReader cr(c, path);
        ReaderCandidate out;
        if (auto options = read_reader_options(cr, "options"); options) {
          out.options = *options;
        } else {
          cr.add(options.error());
        }
        out.bytes_per_second = cr.non_negative("bytes_per_second");
        return cr.finish(out);
      });
  return in.finish(r);
}

Result<PathTuning> read_path(const nlohmann::json& item, const std::string& where) {
  core::JsonReader in(item, where);
  PathTuning p;
  p.device = in.string("device");
  p.path = in.string("path");
  if (in.ok() && std::find(std::begin(kPaths), std::end(kPaths), p.path) == std::end(kPaths)) {
    in.problem("path", fmt::format("'{}' is not one of h2d_pageable, h2d_pinned, d2h_pageable, "
                                   "d2h_pinned",
                                   p.path));
  }
  if (auto profile = read_engine_profile(in, "profile"); profile) {
    p.profile = *profile;
  } else {
    in.add(profile.error());
  }
  p.tuned = in.boolean("tuned");
  p.confirmed = in.boolean("confirmed");
  p.default_bytes_per_second = read_rates(in, "default_bytes_per_second");
  p.winner_bytes_per_second = read_rates(in, "winner_bytes_per_second");
  p.noise = in.non_negative("noise");
  p.gain = in.number("gain", {}, "expected a number");
  if (const auto* fit = in.optional_object("fit")) {
    core::JsonReader f(*fit, in.path("fit"));
    LatencyBandwidth lb;
    lb.alpha_seconds = f.non_negative("alpha_seconds");
    lb.beta_bytes_per_second = f.non_negative("beta_bytes_per_second");
    in.add(f.status());
    p.fit = lb;
  }
  p.fit_points = in.list<TimedSize>(
      "fit_points", [](const nlohmann::json& t, const std::string& path) -> Result<TimedSize> {
        core::JsonReader r(t, path);
        TimedSize s;
        s.bytes = r.count("bytes");
        s.seconds = r.non_negative("seconds");
        return r.finish(s);
      });
  p.candidates = in.list<Candidate>(
      "candidates", [](const nlohmann::json& c, const std::string& path) -> Result<Candidate> {
        core::JsonReader r(c, path);
        Candidate out;
        if (auto profile = read_engine_profile(r, "profile"); profile) {
          out.profile = *profile;
        } else {
          r.add(profile.error());
        }
        out.bytes_per_second = r.non_negative("bytes_per_second");
        return r.finish(out);
      });
  return in.finish(p);
}

}  // namespace

const PathTuning* TuneProfile::find(std::string_view device, std::string_view path) const {
  for (const auto& p : paths) {
    if (p.device == device && p.path == path) {
      return &p;
    }
  }
  return nullptr;
}

std::map<std::string, transfer::Profile> engine_profiles(const TuneProfile& profile) {
  std::map<std::string, transfer::Profile> out;
  for (const auto& p : profile.paths) {
    out[p.device + "/" + p.path] = p.profile;
  }
  return out;
}

std::optional<io::ReaderOptions> reader_options(const TuneProfile& profile) {
  if (!profile.reader) {
    return std::nullopt;
  }
  return profile.reader->options;
}

void set_fusion(TuneProfile& profile, FusionTuning fusion) {
  auto it = std::find_if(profile.fusion.begin(), profile.fusion.end(),
                         [&](const FusionTuning& f) { return f.link_class == fusion.link_class; });
  if (it != profile.fusion.end()) {
    *it = std::move(fusion);
  } else {
    profile.fusion.push_back(std::move(fusion));
  }
}

const FusionTuning* find_fusion(const TuneProfile& profile, std::string_view link_class) {
  for (const FusionTuning& f : profile.fusion) {
    if (f.link_class == link_class) {
      return &f;
    }
  }
  return nullptr;
}

namespace {

constexpr std::array<std::string_view, 2> kLinkClasses = {"intra-node", "inter-node"};

nlohmann::json fusion_json(const FusionTuning& f) {
  return {
      {"link_class", f.link_class},           {"ranks", f.ranks},
      {"alpha_seconds", f.alpha_seconds},     {"beta_bytes_per_second", f.beta_bytes_per_second},
      {"threshold_bytes", f.threshold_bytes}, {"measured", f.measured}};
}

Result<FusionTuning> read_fusion(const nlohmann::json& item, const std::string& where) {
  core::JsonReader in(item, where);
  FusionTuning f;
  f.link_class = in.string("link_class");
  if (in.ok() &&
      std::find(kLinkClasses.begin(), kLinkClasses.end(), f.link_class) == kLinkClasses.end()) {
    in.problem("link_class",
               fmt::format("'{}' is not one of intra-node, inter-node", f.link_class));
  }
  f.ranks = static_cast<int>(in.integer("ranks", {1, 1 << 24}, "expected a rank count"));
  f.alpha_seconds = in.non_negative("alpha_seconds");
  f.beta_bytes_per_second = in.non_negative("beta_bytes_per_second");
  f.threshold_bytes = in.count("threshold_bytes");
  f.measured = in.non_empty_string("measured");
  ACCO_RETURN_IF_ERROR(in.status());
  return f;
}

}  // namespace

nlohmann::json to_json(const TuneProfile& profile) {
  nlohmann::json paths = nlohmann::json::array();
  for (const auto& p : profile.paths) {
    paths.push_back(path_json(p));
  }
  nlohmann::json j = {{"schema", kTuneProfileSchema},
                      {"fingerprint", profile.fingerprint},
                      {"created", profile.created},
                      {"backend", profile.backend},
                      {"link", profile.link},
                      {"bytes", profile.bytes},
                      {"budget_seconds", profile.budget_seconds},
                      {"budget_exhausted", profile.budget_exhausted},
                      {"paths", paths}};
  if (profile.reader) {
    j["reader"] = reader_json(*profile.reader);
  }
  if (!profile.fusion.empty()) {
    nlohmann::json fusion = nlohmann::json::array();
    for (const FusionTuning& f : profile.fusion) {
      fusion.push_back(fusion_json(f));
    }
    j["fusion"] = std::move(fusion);
  }
  return j;
}

Result<TuneProfile> tune_profile_from_json(const nlohmann::json& j) {
  core::JsonReader in(j, "");
  TuneProfile p;
  const auto schema = in.string("schema");
  if (in.ok() && schema != kTuneProfileSchema) {
    in.problem("schema", fmt::format("expected \"{}\", got \"{}\"", kTuneProfileSchema, schema));
  }
  p.fingerprint = in.non_empty_string("fingerprint");
  p.created = in.non_empty_string("created");
  p.backend = in.string("backend");
  p.link = in.string("link");
  p.bytes = in.count("bytes");
  p.budget_seconds = in.non_negative("budget_seconds");
  p.budget_exhausted = in.boolean("budget_exhausted");
  p.paths = in.list<PathTuning>("paths", read_path);
  // Absent when tune ran without --file.
  if (const auto* reader = j.contains("reader") ? in.object("reader") : nullptr) {
    if (auto r = read_reader(*reader, in.path("reader")); r) {
      p.reader = std::move(*r);
    } else {
      in.add(r.error());
    }
  }
  // Absent until a collective bench saved one.
  if (j.contains("fusion")) {
    p.fusion = in.optional_list<FusionTuning>("fusion", read_fusion);
  }
  ACCO_RETURN_IF_ERROR(in.status(), "tune profile");
  return p;
}

Result<TuneProfile> load_tune_profile(const std::string& path) {
  ACCO_ASSIGN_OR_RETURN(const auto j, core::read_json_file(path));
  ACCO_ASSIGN_OR_RETURN(auto profile, tune_profile_from_json(j), path);
  return profile;
}

Status save_tune_profile(const std::string& path, const TuneProfile& profile) {
  for (const auto& p : profile.paths) {
    ACCO_RETURN_IF_ERROR(transfer::validate(p.profile), fmt::format("{}: {}", path, p.path));
  }
  if (profile.reader) {
    ACCO_RETURN_IF_ERROR(io::validate(profile.reader->options), fmt::format("{}: reader", path));
  }
  return core::write_file_atomic(path, to_json(profile).dump(2) + "\n");
}

Result<std::string> tune_directory(std::string_view xdg_state_home, std::string_view home) {
  if (!xdg_state_home.empty() && xdg_state_home.front() == '/') {
    return (stdfs::path(xdg_state_home) / "acco" / "tune").string();
  }
  if (!home.empty()) {
    return (stdfs::path(home) / ".local" / "state" / "acco" / "tune").string();
  }
  return fail(Errc::kUnavailable,
              "cannot place the tune profile: neither XDG_STATE_HOME nor HOME is set");
}

Result<std::string> tune_directory() {
  const char* xdg = std::getenv("XDG_STATE_HOME");
  const char* home = std::getenv("HOME");
  return tune_directory(xdg == nullptr ? "" : xdg, home == nullptr ? "" : home);
}

Result<std::string> tune_directory_or(std::string_view chosen) {
  return chosen.empty() ? tune_directory() : Result<std::string>(std::string(chosen));
}

std::string profile_path(const std::string& dir, std::string_view fingerprint) {
  std::string name(fingerprint);
  std::replace(name.begin(), name.end(), '/', '_');
  return (stdfs::path(dir) / (name + ".json")).string();
}

}  // namespace acco::tune
