#include "acco/exec/request.hpp"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "acco/core/option_check.hpp"

namespace acco::exec {

Status check_request(const ExecRequest& request) {
  if (!request.local_rank.empty() && request.local_rank != "auto") {
    return core::bad_option("--local-rank", request.local_rank, "auto");
  }
  for (const auto& [flag, value, allowed] :
       {std::tuple<const char*, std::string, std::vector<std::string>>{
            "--bind", request.bind, {"auto", "none"}},
        {"--nic", request.nic, {"auto", "none"}},
        {"--report", request.report, {"text", "json", "none"}}}) {
    if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
      return core::bad_option(flag, value, fmt::format("one of {}", fmt::join(allowed, ", ")));
    }
  }
  const auto refuse = [](const char* why) { return fail(Errc::kInvalidArgument, why); };
  if (request.check) {
    if (!request.device.empty() || !request.local_rank.empty() || !request.command.empty()) {
      return refuse(
          "exec: --check looks at this process as it is; it takes no --device, --local-rank or "
          "command");
    }
    return {};
  }
  if (request.device.empty() == request.local_rank.empty()) {
    return refuse("exec: give --device or --local-rank auto (one of them)");
  }
  if (request.command.empty() && !request.dry_run) {
    return refuse("exec: the command to run is required after -- (or give --dry-run)");
  }
  return {};
}

Result<Binding> plan_request(const topo::Machine& machine, const Environment& env,
                             const std::vector<int>& cpus, const ExecRequest& request) {
  const auto devices = accelerators(machine);
  std::string share_note;
  Accelerator device;
  if (!request.local_rank.empty()) {
    auto rank = local_rank(env);
    if (!rank) {  // no launcher's variable or a bad one: the flag was given in the wrong place
      return fail(Errc::kInvalidArgument, "exec: " + rank.error().message);
    }
    ACCO_ASSIGN_OR_RETURN(device, device_for_rank(devices, *rank, share_note), "exec");
  } else {
    ACCO_ASSIGN_OR_RETURN(device, select_device(devices, request.device), "exec");
  }
  Binding binding = plan_binding(machine, device, cpus, env,
                                 {.bind = request.bind == "auto", .nic = request.nic == "auto"});
  if (!share_note.empty()) {
    binding.notes.insert(binding.notes.begin(), share_note);
  }
  return binding;
}

}  // namespace acco::exec
