// `acco doctor`, the main job: the probe's report, a quick measurement of the data paths on the
// live machine, and what to fix first.
#include <memory>
#include <utility>

#include "acco/doctor/doctor.hpp"
#include "acco/report/document.hpp"

#include "command_spec.hpp"
#include "commands.hpp"
#include "machine_flags.hpp"

namespace acco::cli {
namespace {

class DoctorCommand final : public Command {
 public:
  DoctorCommand(MachineOptions machine, bool skip_bench)
      : machine_(std::move(machine)), skip_bench_(skip_bench) {}

  Result<Output> run(const Invocation& inv) const override {
    doctor::Options options;
    options.probe = probe_request(machine_, inv.settings);
    if (skip_bench_) {
      options.skip_bench = "--no-bench";
    }
    options.progress = inv.progress;
    options.tune_dir = inv.settings.get("tune-dir");
    ACCO_ASSIGN_OR_RETURN(const auto report, doctor::run(std::move(options)));
    Output out;
    out.out = render(inv, report, doctor::doctor_report);
    out.exit_code = findings_exit(machine_, report.findings);
    return out;
  }

 private:
  MachineOptions machine_;
  bool skip_bench_ = false;
};

struct DoctorFlags {
  MachineFlags machine;
  bool no_bench = false;
};

}  // namespace

CommandSpec doctor_command() {
  return command_with_flags<DoctorFlags>(
      "doctor", "assess this machine and say what to fix first (the main job)",
      [](CLI::App& sub, SharedFlags& shared, DoctorFlags& flags) {
        add_machine_flags(sub, shared, flags.machine, false);
        sub.add_flag("--no-bench", flags.no_bench, "skip the quick measurement of the data paths");
      },
      [](const DoctorFlags& flags,
         const core::Settings& settings) -> Result<std::unique_ptr<Command>> {
        ACCO_ASSIGN_OR_RETURN(auto machine, machine_options(flags.machine, settings));
        return std::make_unique<DoctorCommand>(std::move(machine), flags.no_bench);
      });
}

}  // namespace acco::cli
