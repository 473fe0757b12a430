#include "acco/tune/saved_profile.hpp"

#include <filesystem>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "acco/bench/machine_summary.hpp"
#include "acco/tune/tune_profile.hpp"

namespace acco::tune {

namespace {

LoadedProfile loaded_from(const TuneProfile& p, std::string path) {
  LoadedProfile out;
  out.engines = engine_profiles(p);
  out.reader = reader_options(p);
  out.path = std::move(path);
  return out;
}

}  // namespace

Result<LoadedProfile> load_profile(const ProfileChoice& choice, const topo::Machine* machine) {
  if (choice.none) {
    return LoadedProfile{};
  }
  if (!choice.file.empty()) {
    ACCO_ASSIGN_OR_RETURN(const auto p, load_tune_profile(choice.file));
    return loaded_from(p, choice.file);
  }
  if (machine == nullptr) {
    return LoadedProfile{};
  }
  auto dir = tune_directory_or(choice.directory);
  if (!dir) {
    return LoadedProfile{};
  }
  auto path = profile_path(*dir, bench::machine_fingerprint(*machine));
  auto p = load_tune_profile(path);
  if (!p) {
    LoadedProfile none;
    if (p.error().code != Errc::kNotFound) {
      none.skipped = std::move(p.error());
    }
    return none;
  }
  return loaded_from(*p, std::move(path));
}

Result<LoadedProfile> load_profile_probing(
    const ProfileChoice& choice, const std::function<std::optional<topo::Machine>()>& probe) {
  if (choice.none || (choice.file.empty() && !any_saved_profile(choice.directory))) {
    return LoadedProfile{};
  }
  std::optional<topo::Machine> machine;
  if (choice.file.empty()) {
    machine = probe();
  }
  return load_profile(choice, machine ? &*machine : nullptr);
}

Status check_profile_choice(const ProfileChoice& choice) {
  if (choice.none && !choice.file.empty()) {
    return fail(Errc::kInvalidArgument, "--profile and --no-profile exclude each other");
  }
  return {};
}

std::string profile_note(const LoadedProfile& loaded) {
  if (!loaded.path.empty()) {
    return fmt::format("acco: engine profile from {}\n", loaded.path);
  }
  if (loaded.skipped) {
    return fmt::format("acco: tune profile not used: {}\n", loaded.skipped->message);
  }
  return {};
}

std::map<std::string, transfer::Profile> saved_engine_profiles(const topo::Machine& machine,
                                                               std::string_view directory) {
  ProfileChoice choice;
  choice.directory = std::string(directory);
  auto loaded = load_profile(choice, &machine);
  return loaded ? std::move(loaded->engines) : std::map<std::string, transfer::Profile>{};
}

bool any_saved_profile(std::string_view directory) {
  const auto dir = tune_directory_or(directory);
  if (!dir) {
    return false;
  }
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(*dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (it->path().extension() == ".json") {
      return true;
    }
  }
  return false;
}

Result<SavedProfileState> saved_profile_state(const topo::Machine& machine,
                                              std::string_view directory) {
  namespace stdfs = std::filesystem;
  ACCO_ASSIGN_OR_RETURN(const auto dir, tune_directory_or(directory));
  SavedProfileState s;
  s.path = profile_path(dir, bench::machine_fingerprint(machine));
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

}  // namespace acco::tune
