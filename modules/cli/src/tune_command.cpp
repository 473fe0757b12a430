// `acco tune`: sweep the transfer engine's settings per device and copy path (and, with --file,
// the storage reader's on that file) within a budget, confirm the winner against the defaults
// and save the profile for this machine, which bench and doctor then load; `--show` prints the
// saved one beside the defaults.
#include <chrono>
#include <memory>
#include <optional>

#include "acco/core/process.hpp"
#include "acco/report/document.hpp"
#include "acco/tune/profile_report.hpp"
#include "acco/tune/tune_run.hpp"

#include "bench_command.hpp"
#include "command_spec.hpp"
#include "commands.hpp"

namespace acco::cli {
namespace {

// 128 + SIGINT, what a shell reports for a program stopped by Ctrl-C.
constexpr int kExitInterrupted = 130;

struct TuneFlags {
  tune::TuneRequest run;
  std::string output;  // empty = the default path for this machine
  bool show = false;
};

struct TuneOptions {
  tune::TuneOptions run;
  std::string output;
  bool show = false;
};

void add_tune_flags(CLI::App& sub, SharedFlags& shared, TuneFlags& f) {
  offer_values(sub.add_option("--backend", f.run.backend,
                              "auto (CUDA when a GPU is usable, else host), host, cuda")
                   ->type_name("NAME"),
               backend_names());
  sub.add_option("--devices", f.run.devices, "host backend: number of emulated devices")
      ->type_name("N");
  sub.add_option("--link", f.run.link,
                 "host backend: emulated link, e.g. pcie4x16 (default), 25GB/s,2us, unlimited")
      ->type_name("SPEC");
  sub.add_option("--budget", f.run.budget, "time for the whole run, e.g. 60s (default), 5m")
      ->type_name("DURATION");
  sub.add_option("--bytes", f.run.bytes, "copy size of the search (default 64MiB)")
      ->type_name("SIZE");
  sub.add_option("--output", f.output, "profile file (default <tune-dir>/<fingerprint>.json)")
      ->type_name("FILE");
  add_setting_flag(sub, shared, "tune-dir",
                   "directory of the profiles, one per machine (default "
                   "$XDG_STATE_HOME/acco/tune; env ACCO_TUNE_DIR)",
                   "DIR");
  sub.add_option("--file", f.run.file,
                 "also tune the storage reader (block size, depth, threads) on this file, read "
                 "up to --bytes per measurement")
      ->type_name("PATH");
  sub.add_flag("--show", f.show, "print the saved profile beside the defaults and exit");
  add_json_flag(sub, shared, "print JSON (schema acco.tune-profile/1)");
  add_setting_flag(sub, shared, "sysroot", "topology from DIR/sys (for the fingerprint)", "DIR");
  add_config_flag(sub, shared);
}

Result<TuneOptions> tune_options(const TuneFlags& f) {
  TuneOptions o;
  o.output = f.output;
  o.show = f.show;
  if (!f.show) {  // --show needs none of the run's flags
    ACCO_ASSIGN_OR_RETURN(o.run, as_usage(tune::tune_options(f.run)));
  }
  return o;
}

class TuneCommand final : public Command {
 public:
  explicit TuneCommand(TuneOptions options) : o_(std::move(options)) {}

  Result<Output> run(const Invocation& inv) const override {
    Output out;
    if (!o_.show && !o_.output.empty()) {  // before the search, not after it
      ACCO_RETURN_IF_ERROR(check_output_path("--output", o_.output));
    }
    auto machine = probe_machine(inv.settings, out.err);
    const topo::Machine* m = machine ? &*machine : nullptr;
    return o_.show ? show(inv, m, std::move(out)) : tune(inv, m, std::move(out));
  }

 private:
  Result<Output> show(const Invocation& inv, const topo::Machine* machine, Output out) const {
    auto saved = tune::saved_profile_to_show(o_.output, machine, inv.settings.get("tune-dir"));
    if (!saved) {
      return error_output(saved.error(), out.err);
    }
    out.out = render(inv, *saved, tune::saved_profile_report);
    return out;
  }

  Result<Output> tune(const Invocation& inv, const topo::Machine* machine, Output out) const {
    // A file there that is not a profile (another program's, a corrupt one) is refused before
    // the run rather than replaced after it. A profile's fusion entries are kept.
    auto target = tune::profile_target(o_.output, machine, inv.settings.get("tune-dir"));
    if (!target) {
      return error_output(target.error(), out.err);
    }
    const std::string& path = target->path;
    // Blocked before the engines start their threads, so SIGINT reaches only this one and the
    // search stops between two measurements; nothing is written until the end.
    const core::SignalScope signals;
    bool stopped = false;
    const tune::StopRequested stop = [&] {
      stopped = stopped || signals.wait(std::chrono::milliseconds(0)) != 0;
      return stopped;
    };
    auto saved = tune::tune_and_save(o_.run, path, target->previous, machine, stop, inv.progress);
    if (!saved) {
      return error_output(as_usage(std::move(saved.error())), out.err);
    }
    const tune::TuneResult& result = saved->result;
    out.err += saved->notes;
    if (result.interrupted) {
      out.exit_code = kExitInterrupted;
      return out;
    }
    if (saved->save_failure) {  // checked before the run, failed now (a full disk)
      out.exit_code = exit_code_for(*saved->save_failure);
    }
    out.out = render(inv, result.profile,
                     [&path](const auto& profile) { return tune::profile_report(profile, path); });
    return out;
  }

  TuneOptions o_;
};

}  // namespace

CommandSpec tune_command() {
  return command_with_flags<TuneFlags>(
      "tune",
      "tune the transfer engine (and with --file the storage reader) for this machine and save "
      "the profile bench loads",
      add_tune_flags, [](const TuneFlags& flags, const core::Settings&) {
        return command_from<TuneCommand>(tune_options(flags));
      });
}

}  // namespace acco::cli
