#include "profile_flags.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "acco/bench/machine_summary.hpp"

#include "command_spec.hpp"

namespace acco::cli {

void add_profile_flags(CLI::App& sub, ProfileFlags& flags) {
  sub.add_option("--profile", flags.profile,
                 "transfer engine and storage reader profile from acco tune (default: the one "
                 "saved for this machine under $XDG_STATE_HOME/acco/tune)")
      ->type_name("FILE");
  sub.add_flag("--no-profile", flags.no_profile,
               "use the engine's and the reader's defaults, not the profile acco tune saved");
}

Status check_profile_flags(const ProfileFlags& flags) {
  if (flags.no_profile && !flags.profile.empty()) {
    return usage("--profile and --no-profile exclude each other");
  }
  return {};
}

namespace {

LoadedProfile loaded(const tune::TuneProfile& p, const std::string& path, std::string& note) {
  note += fmt::format("acco: engine profile from {}\n", path);
  return {tune::engine_profiles(p), tune::reader_options(p)};
}

}  // namespace

Result<LoadedProfile> profile_for(const ProfileFlags& flags, const topo::Machine* machine,
                                  std::string& note) {
  if (flags.no_profile) {
    return LoadedProfile{};
  }
  if (!flags.profile.empty()) {
    ACCO_ASSIGN_OR_RETURN(const auto p, tune::load_tune_profile(flags.profile), "--profile");
    return loaded(p, flags.profile, note);
  }
  if (machine == nullptr) {
    return LoadedProfile{};
  }
  auto dir = tune::tune_directory();
  if (!dir) {
    return LoadedProfile{};
  }
  const auto path = tune::profile_path(*dir, bench::machine_fingerprint(*machine));
  auto p = tune::load_tune_profile(path);
  if (!p) {
    if (p.error().code != Errc::kNotFound) {
      note += fmt::format("acco: tune profile not used: {}\n", p.error().message);
    }
    return LoadedProfile{};
  }
  return loaded(*p, path, note);
}

Result<std::map<std::string, transfer::Profile>> engine_profiles_for(const ProfileFlags& flags,
                                                                     const topo::Machine* machine,
                                                                     std::string& note) {
  return profile_for(flags, machine, note).transform([](LoadedProfile p) {
    return std::move(p.engines);
  });
}

Result<SavedProfileState> saved_profile_state(const topo::Machine& machine) {
  namespace stdfs = std::filesystem;
  ACCO_ASSIGN_OR_RETURN(const auto dir, tune::tune_directory());
  SavedProfileState s;
  s.path = tune::profile_path(dir, bench::machine_fingerprint(machine));
  std::error_code ec;
  s.exists = stdfs::exists(s.path, ec);
  for (auto it = stdfs::directory_iterator(dir, ec); !ec && it != stdfs::directory_iterator();
       it.increment(ec)) {
    if (it->path().extension() == ".json" && it->path() != stdfs::path(s.path)) {
      s.others = true;
    }
  }
  return s;
}

}  // namespace acco::cli
