// `acco exec`: runs a command bound to one GPU, its NUMA-local CPUs and memory and, with --nic
// auto, its nearest NIC. The binding comes from exec::plan_request; this file parses, prints the
// binding on stderr (stdout stays the command's) and execs.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "acco/core/fs.hpp"
#include "acco/exec/binding.hpp"
#include "acco/exec/check.hpp"
#include "acco/exec/request.hpp"
#include "acco/exec/spawn.hpp"
#include "acco/report/document.hpp"
#include "acco/topo/probe.hpp"

#include "command_spec.hpp"
#include "commands.hpp"
#include "machine_flags.hpp"

namespace acco::cli {
namespace {

class ExecCommand final : public Command {
 public:
  explicit ExecCommand(exec::ExecRequest request) : request_(std::move(request)) {}

  Result<Output> run(const Invocation& inv) const override {
    ACCO_ASSIGN_OR_RETURN(const auto probed,
                          topo::probe(probe_request(MachineOptions{}, inv.settings)), "exec");
    const exec::Environment env = exec::current_environment();
    if (request_.check) {
      return check(probed.machine, env, inv);
    }
    ACCO_ASSIGN_OR_RETURN(
        const exec::Binding binding,
        as_usage(exec::plan_request(probed.machine, env, exec::current_cpus(), request_)));
    const std::string shown = request_.report == "json"
                                  ? exec::to_json(binding).dump() + "\n"
                                  : report::render_text(exec::binding_report(binding));
    if (request_.dry_run) {
      return Output{shown, "", kExitOk};
    }
    std::vector<std::string> notes;
    ACCO_RETURN_IF_ERROR(exec::apply_binding(binding, notes), "exec");
    if (request_.report != "none") {
      std::fputs(shown.c_str(), stderr);
    }
    for (const std::string& note : notes) {
      std::fputs(fmt::format("acco exec: {}\n", note).c_str(), stderr);
    }
    const auto failed = exec::exec_in_place(request_.command);  // returns only on failure
    return Output{"", fmt::format("acco: exec: {}: {}\n", request_.command[0], failed.why),
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
    return Output{render(inv, result, exec::check_report), "", code};
  }

  exec::ExecRequest request_;
};

}  // namespace

CommandSpec exec_command() {
  return command_with_flags<exec::ExecRequest>(
      "exec", "run a command bound to one GPU, its NUMA-local CPUs, memory and NIC",
      [](CLI::App& sub, SharedFlags& shared, exec::ExecRequest& flags) {
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
      [](const exec::ExecRequest& flags,
         const core::Settings&) -> Result<std::unique_ptr<Command>> {
        ACCO_RETURN_IF_ERROR(as_usage(exec::check_request(flags)));
        return std::make_unique<ExecCommand>(flags);
      });
}

}  // namespace acco::cli
