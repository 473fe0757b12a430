// `acco exec`: runs a command bound to one GPU, its NUMA-local CPUs and memory and, with --nic
// auto, its nearest NIC. The binding comes from exec::plan_binding; this file parses, prints the
// binding on stderr (stdout stays the command's) and execs.
#include <cstdio>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "acco/core/fs.hpp"
#include "acco/exec/binding.hpp"
#include "acco/exec/check.hpp"
#include "acco/exec/spawn.hpp"
#include "acco/report/document.hpp"
#include "acco/topo/probe.hpp"

#include "command_spec.hpp"
#include "commands.hpp"
#include "machine_flags.hpp"

namespace acco::cli {
namespace {

struct ExecFlags {
  std::string device;
  std::string local_rank;
  std::string bind = "auto";
  std::string nic = "none";
  std::string report = "text";
  bool dry_run = false;
  bool check = false;
  std::vector<std::string> command;
};

class ExecCommand final : public Command {
 public:
  explicit ExecCommand(ExecFlags flags) : flags_(std::move(flags)) {}

  Result<Output> run(const Invocation& inv) const override {
    ACCO_ASSIGN_OR_RETURN(const auto probed,
                          topo::probe(probe_request(MachineOptions{}, inv.settings)), "exec");
    const exec::Environment env = exec::current_environment();
    if (flags_.check) {
      return check(probed.machine, env, inv);
    }
    const auto devices = exec::accelerators(probed.machine);
    std::string share_note;
    exec::Accelerator device;
    if (!flags_.local_rank.empty()) {
      auto rank = exec::local_rank(env);
      if (!rank) {  // no launcher's variable or a bad one: the flag was given in the wrong place
        return usage("exec: " + rank.error().message);
      }
      ACCO_ASSIGN_OR_RETURN(device, exec::device_for_rank(devices, *rank, share_note), "exec");
    } else {
      ACCO_ASSIGN_OR_RETURN(device, exec::select_device(devices, flags_.device), "exec");
    }
    exec::Binding binding =
        exec::plan_binding(probed.machine, device, exec::current_cpus(), env,
                           {.bind = flags_.bind == "auto", .nic = flags_.nic == "auto"});
    if (!share_note.empty()) {
      binding.notes.insert(binding.notes.begin(), share_note);
    }
    const std::string shown = flags_.report == "json"
                                  ? exec::to_json(binding).dump() + "\n"
                                  : report::render_text(exec::binding_report(binding));
    if (flags_.dry_run) {
      return Output{shown, "", kExitOk};
    }
    std::vector<std::string> notes;
    ACCO_RETURN_IF_ERROR(exec::apply_binding(binding, notes), "exec");
    if (flags_.report != "none") {
      std::fputs(shown.c_str(), stderr);
    }
    for (const std::string& note : notes) {
      std::fputs(fmt::format("acco exec: {}\n", note).c_str(), stderr);
    }
    const auto failed = exec::exec_in_place(flags_.command);  // returns only on failure
    return Output{"", fmt::format("acco: exec: {}: {}\n", flags_.command[0], failed.why),
                  failed.exit_code};
  }

 private:
  // --check: this process's binding against its GPU's; exit 1 when something is to fix.
  static Result<Output> check(const topo::Machine& machine, const exec::Environment& env,
                              const Invocation& inv) {
    std::optional<exec::ProcessMasks> masks;
    if (auto fs = core::make_disk_fs(inv.settings.get("sysroot"))) {
      if (auto read = exec::read_process_masks(**fs)) {
        masks = *read;
      }
    }
    const exec::BindingCheck result = exec::check_binding(machine, masks, env);
    const int code = result.problems() > 0 ? kExitFindings : kExitOk;
    if (inv.format == Format::kJson) {
      return Output{exec::to_json(result).dump(2) + "\n", "", code};
    }
    return Output{report::render_text(exec::check_report(result)), "", code};
  }

  ExecFlags flags_;
};

}  // namespace

CommandSpec exec_command() {
  return command_with_flags<ExecFlags>(
      "exec", "run a command bound to one GPU, its NUMA-local CPUs, memory and NIC",
      [](CLI::App& sub, SharedFlags& shared, ExecFlags& flags) {
        sub.add_option("--device", flags.device,
                       "the GPU: its index, PCI address (41:00.0) or UUID (GPU-...)")
            ->type_name("DEVICE");
        offer_values(sub.add_option("--local-rank", flags.local_rank,
                                    "auto: the GPU of the launcher's local rank (mpirun, srun, "
                                    "torchrun), round robin")
                         ->type_name("auto"),
                     {"auto"});
        offer_values(sub.add_option("--bind", flags.bind,
                                    "auto: CPUs and memory near the GPU (default); none: only "
                                    "the environment")
                         ->type_name("MODE"),
                     {"auto", "none"});
        offer_values(sub.add_option("--nic", flags.nic,
                                    "auto: NCCL and UCX use the NIC nearest the GPU; none "
                                    "(default): they choose")
                         ->type_name("MODE"),
                     {"auto", "none"});
        offer_values(sub.add_option("--report", flags.report,
                                    "how the binding is printed on stderr: text (default), "
                                    "json, none")
                         ->type_name("FORMAT"),
                     {"text", "json", "none"});
        sub.add_flag("--check", flags.check,
                     "the binding doctor: this process's GPU, CPUs, memory nodes, NIC, /dev/shm "
                     "and locked memory, each mismatch with its fix (exit 1 when any)");
        add_json_flag(sub, shared, "print JSON (acco.exec-check/1) with --check");
        sub.add_flag("--dry-run", flags.dry_run, "print the binding on stdout and run nothing");
        add_setting_flag(sub, shared, "sysroot",
                         "plan from the machine in DIR/sys (applied as far as this one allows)",
                         "DIR");
        add_setting_flag(sub, shared, "nvml", "query NVML: auto, on, off (env ACCO_NVML)", "MODE");
        add_config_flag(sub, shared);
        sub.add_option("command", flags.command, "the command and its arguments, after --")
            ->type_name("CMD");
      },
      [](const ExecFlags& flags, const core::Settings&) -> Result<std::unique_ptr<Command>> {
        if (!flags.local_rank.empty() && flags.local_rank != "auto") {
          return bad_value("--local-rank", flags.local_rank, "auto");
        }
        for (const auto& [flag, value, allowed] :
             {std::tuple<const char*, std::string, std::vector<std::string>>{
                  "--bind", flags.bind, {"auto", "none"}},
              {"--nic", flags.nic, {"auto", "none"}},
              {"--report", flags.report, {"text", "json", "none"}}}) {
          if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
            return bad_value(flag, value, fmt::format("one of {}", fmt::join(allowed, ", ")));
          }
        }
        if (flags.check) {
          if (!flags.device.empty() || !flags.local_rank.empty() || !flags.command.empty()) {
            return usage(
                "exec: --check looks at this process as it is; it takes no --device, "
                "--local-rank or command");
          }
          return std::make_unique<ExecCommand>(flags);
        }
        if (flags.device.empty() == flags.local_rank.empty()) {
          return usage("exec: give --device or --local-rank auto (one of them)");
        }
        if (flags.command.empty() && !flags.dry_run) {
          return usage("exec: the command to run is required after -- (or give --dry-run)");
        }
        return std::make_unique<ExecCommand>(flags);
      });
}

}  // namespace acco::cli
