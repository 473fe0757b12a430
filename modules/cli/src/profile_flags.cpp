#include "profile_flags.hpp"

#include "command_spec.hpp"

namespace acco::cli {

void add_profile_flags(CLI::App& sub, tune::ProfileChoice& flags) {
  sub.add_option("--profile", flags.file,
                 "transfer engine and storage reader profile from acco tune (default: the one "
                 "saved for this machine in the tune-dir setting's directory)")
      ->type_name("FILE");
  sub.add_flag("--no-profile", flags.none,
               "use the engine's and the reader's defaults, not the profile acco tune saved");
}

Status check_profile_flags(const tune::ProfileChoice& flags) {
  ACCO_RETURN_IF_ERROR(as_usage(tune::check_profile_choice(flags)));
  return {};
}

Result<tune::LoadedProfile> profile_for(const tune::ProfileChoice& flags,
                                        const core::Settings& settings,
                                        const topo::Machine* machine, std::string& note) {
  tune::ProfileChoice choice = flags;
  choice.directory = settings.get("tune-dir");
  ACCO_ASSIGN_OR_RETURN(auto loaded, tune::load_profile(choice, machine), "--profile");
  note += tune::profile_note(loaded);
  return loaded;
}

}  // namespace acco::cli
